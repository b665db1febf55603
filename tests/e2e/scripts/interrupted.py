"""An uncaught KeyboardInterrupt: CPython prints it and ends by SIGINT after the exit handlers."""

import atexit


def handler():
    print("exit handler ran")


def work(n):
    if n > 3:
        raise KeyboardInterrupt
    return n


atexit.register(handler)
for i in range(10):
    print(work(i))
