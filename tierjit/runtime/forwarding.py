"""Attribute forwarding shared by the objects users call (runtime.shim's Shim and
runtime.entry's native entry type): everything not on the type is the dispatcher's.

`__doc__` and `__module__` live in the type dict, so they would shadow the dispatcher's; they
are str subclasses that read as a plain string on the type itself (`type.__module__` returns
the dict entry unchanged) and, as descriptors, forward on instances.

(No `from __future__ import annotations`: decorating imports this module, and that import
would cost a cold program the `__future__` module's.)
"""


class Forwarded(str):
    """A type-dict string that reads as the dispatcher's attribute on instances."""

    __slots__ = ()
    attribute: str

    def __get__(self, obj: object, objtype: type | None = None) -> object:
        if obj is None:
            return str(self)
        return getattr(obj.__tierjit_dispatcher__, self.attribute)  # type: ignore[attr-defined]


class ForwardedDoc(Forwarded):
    __slots__ = ()
    attribute = "__doc__"


class ForwardedModule(Forwarded):
    __slots__ = ()
    attribute = "__module__"


def _getattr(self, name: str) -> object:
    return getattr(self.__tierjit_dispatcher__, name)


def _setattr(self, name: str, value: object) -> None:
    setattr(self.__tierjit_dispatcher__, name, value)


def _delattr(self, name: str) -> None:
    delattr(self.__tierjit_dispatcher__, name)


def _dir(self) -> list[str]:
    return sorted(set(object.__dir__(self)) | set(dir(self.__tierjit_dispatcher__)))


def _reduce(self) -> str:
    # Pickle (and copy) by reference, like a module-level function: pickle checks that
    # `module.qualname` is this very object.
    return self.__tierjit_dispatcher__.__qualname__


def _repr(self) -> str:
    d = self.__tierjit_dispatcher__
    name = getattr(d, "__qualname__", None) or getattr(d, "__name__", "?")
    return f"<tierjit function {name}>"


def forward_attributes(tp: type, doc: str) -> None:
    """Make instances of tp show their dispatcher's attributes, doc and module."""
    # (module-level functions called __getattr__ would be this module's own hook)
    for fn in (_getattr, _setattr, _delattr, _dir, _reduce, _repr):
        setattr(tp, f"_{fn.__name__}__", fn)
    tp.__doc__ = ForwardedDoc(doc)
    tp.__module__ = ForwardedModule("tierjit")
