"""Strings, classes, generators, closures, exceptions, introspection and hot numeric code."""

import functools
import inspect
import pickle
import sys
import traceback

import helpers


def total(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def factorial(n):
    r = 1
    for i in range(2, n + 1):
        r *= i
    return r


def greet(name):
    """Say hello."""
    return f"hello, {name.title()}!"


def squares(n):
    for i in range(n):
        yield i * i


def make_counter():
    count = 0

    def bump():
        nonlocal count
        count += 1
        return count
    return bump


def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return ("traced", fn(*args))
    return wrapper


@traced
def decorated(x):
    return x + 1


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def fail(x):
    return helpers.checked_div(x, 0)


def defaults(a, b=2, *rest, key=None, **kw):
    return (a, b, rest, key, sorted(kw))


class Vector:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def norm2(self):
        return self.x * self.x + self.y * self.y

    def __repr__(self):
        return f"Vector({self.x}, {self.y})"


print(greet("ada"), greet.__name__, greet.__doc__, greet.__qualname__, greet.__module__)
print(inspect.signature(defaults), defaults(1, 3, 4, 5, key="k", z=1))
print(pickle.loads(pickle.dumps(fib)) is fib, fib.__code__.co_name, fib.__defaults__)
print(list(squares(5)), list(helpers.countdown(3)), inspect.isgeneratorfunction(squares))
bump = make_counter()
print(bump(), bump(), decorated(1), decorated.__wrapped__(1), decorated.__name__)
print(sorted([Vector(3, 4), Vector(1, 1)], key=Vector.norm2), Vector(1, 2).norm2())
print([total(n) for n in range(2000)][-1], fib(18), factorial(25), factorial(20))
print(sum(helpers.scale(float(i), 0.5) for i in range(3000)))
print("argv:", sys.argv[1:], file=sys.stderr)
try:
    fail(1)
except ZeroDivisionError as e:
    print("caught:", e)
    traceback.print_exc()
try:
    try:
        {}["missing"]
    except KeyError as e:
        raise ValueError("wrapped") from e
except ValueError:
    traceback.print_exc(file=sys.stdout)
print(traceback.format_stack(limit=1)[0].splitlines()[0])
print("done", file=sys.stderr)
