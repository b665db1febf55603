"""Golden cases: branches, loops with break/continue/else, assert and raise."""

# name -> argument values whose types seed inference, and whether tier-0 source is checked
GOLDEN = {
    "if_elif_else": {"args": (1.5,), "tier0": True},
    "while_break_continue_else": {"args": (10, 7), "tier0": True},
    "assert_positive": {"args": (2.0,), "tier0": True},
    "raise_on_negative": {"args": (3,), "tier0": False},
}


def if_elif_else(x):
    if x < 0:
        r = -1
    elif x == 0:
        r = 0
    else:
        r = x * 2
    return r


def while_break_continue_else(n, stop):
    i = 0
    s = 0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        if i == stop:
            break
        s += i
    else:
        s = -s
    return s


def assert_positive(x):
    assert x > 0, "x must be positive"
    assert x < 100
    return x


def raise_on_negative(n):
    if n < 0:
        raise ValueError("negative", 1)
    if n == 0:
        raise ZeroDivisionError
    return 100 // n
