"""A script CPython cannot compile: the error is printed without a traceback, status 1."""

def broken(:
    pass
