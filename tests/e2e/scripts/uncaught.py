"""An uncaught exception raised three jitted calls deep, in a module beside the script."""

import helpers


def outer(x):
    return middle(x) + 1


def middle(x):
    return helpers.checked_div(x, x - x)


for i in range(1500):
    outer(i + 1.0) if False else helpers.scale(i, 2)
print("before the error")
outer(2.0)
print("never printed")
