"""Untyped tier 0's `for` loops over anything: CPython's iteration where indexing is not it.

The IR runs a `for` loop over a sequence (or enumerate's, zip's arguments) by index: its
count of items before the loop (LEN), `k < count` at the header, item `seq[k]` in the body.
Typed, the sequence is an array or a tuple, whose items are exactly that. Untyped (counting
tier 0 runs before anything is known of the arguments), it may be a dict, a set, a
generator, a list the loop appends to: `len` and indexing are not iteration. So there the
count is `iter_len(seq)`: the length of a sequence whose items are seq[0..len) and whose
length cannot change (a tuple, str, bytes, an array), else an `Iterating`, for which
`k < count` takes the next item from the iterator (the loop ends when there is none) and the
item is the one it took. zip's count is `zip_bound`'s: it asks its arguments for an item in
order and stops at the first that has none, as zip does.
"""

from __future__ import annotations

import sys

_END = object()
# (not range: len() of range(2**70) raises OverflowError, which iterating it does not)
_SEQUENCES = frozenset({tuple, str, bytes})


class Iterating:
    """A for loop's count of items of an iterable that is not such a sequence: `k < self`
    takes the next item (into `item`), True while there is one."""

    __slots__ = ("it", "item")

    def __init__(self, iterable) -> None:
        self.it = iter(iterable)       # TypeError: "'int' object is not iterable", as CPython
        self.item = None

    def __gt__(self, k) -> bool:
        self.item = next(self.it, _END)
        if self.item is _END:
            self.close()
            return False
        return True

    def close(self) -> None:
        """The loop is over: the iterator is let go (freed, as CPython frees it)."""
        self.it = self.item = None


class Zipping:
    """zip's count when an argument is an Iterating: `k < self` asks each argument in order,
    a sequence whether k is below its length, an Iterating for its next item."""

    __slots__ = ("counts",)

    def __init__(self, counts: list) -> None:
        self.counts = counts

    def __gt__(self, k) -> bool:
        for c in self.counts:
            if not (c > k):
                for d in self.counts:           # the zip is over: its iterators let go
                    if type(d) is Iterating:
                        d.close()
                return False
        return True


def iter_len(x):
    t = type(x)
    if t in _SEQUENCES:
        return len(x)
    np = sys.modules.get("numpy")
    if np is not None and t is np.ndarray and x.ndim:
        return len(x)
    return Iterating(x)


def zip_bound(*counts):
    flat = []
    for c in counts:
        flat += c.counts if type(c) is Zipping else [c]
    if all(type(c) is int for c in flat):
        return min(flat)
    return Zipping(flat)
