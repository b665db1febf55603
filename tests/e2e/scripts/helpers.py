"""A module beside the scripts: `tierjit run` jits its functions too."""


def scale(x, k):
    return x * k


def checked_div(a, b):
    if b == 0:
        raise ZeroDivisionError(f"checked_div({a}, {b})")
    return a / b


def countdown(n):
    while n > 0:
        yield n
        n -= 1
