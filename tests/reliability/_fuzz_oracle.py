"""The oracle the fuzz tests (tests/reliability/test_fuzz.py) and the atheris harness
(fuzz/fuzz_reconstruct.py) share: hostile objects that record and refuse
any call of their dunder methods while armed, the exact structure
comparison of docs/pickling.md, what _reconstruct must return or raise for a
payload, and the documented encoding of structure_extension() values.
Imports no test framework, so the harness can use it on its own."""
import struct

from stride_weave.dtypes import DType, Whole


def registry_by_name():
    return {d.name: d for d in DType.registered()}


class Tripped(Exception):
    """Raised by a hostile object's dunder: the extension ran its code."""


_TRIPS = []
_ARMED = [False]


class armed:
    """Within the block, hostile dunders raise Tripped and are recorded."""

    def __enter__(self):
        _TRIPS.clear()
        _ARMED[0] = True

    def __exit__(self, *exc):
        _ARMED[0] = False
        assert not _TRIPS, f"the extension ran user code: {_TRIPS}"


def _hostile(cls, names):
    def make(name, base):

        def method(self, *args, **kwargs):
            if _ARMED[0]:
                _TRIPS.append(f"{cls.__name__}.{name}")
                raise Tripped(f"{cls.__name__}.{name} was called")
            return base(self, *args, **kwargs)
        method.__name__ = name
        return method
    for name in names:
        base = getattr(cls.__mro__[1], name, None)
        if base is not None:
            setattr(cls, name, make(name, base))
    return cls


_COMMON = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
           "__hash__", "__repr__", "__str__", "__format__", "__bool__",
           "__getattribute__", "__reduce_ex__", "__sizeof__")


class HostileStr(str):
    pass


class HostileInt(int):
    pass


class HostileFloat(float):
    pass


class HostileTuple(tuple):
    pass


_hostile(HostileStr, _COMMON + ("__len__", "__iter__", "__getitem__",
                                "__contains__", "__add__", "__mod__",
                                "__mul__", "encode"))
_hostile(HostileInt, _COMMON + ("__index__", "__int__", "__float__",
                                "__abs__", "__neg__", "__add__",
                                "__and__", "__rshift__"))
_hostile(HostileFloat, _COMMON + ("__float__", "__int__", "__index__"))
_hostile(HostileTuple, _COMMON + ("__len__", "__iter__", "__getitem__",
                                  "__contains__", "__add__", "__mul__"))


class Boom(Exception):
    """Raised by user code the extension is *supposed* to run."""


class RaisingIterable:
    def __iter__(self):
        raise Boom("__iter__")


class RaisingIterator:
    def __iter__(self):
        return self

    def __next__(self):
        raise Boom("__next__")



def exact_equal(ours, theirs):
    """The structure comparison of docs/pickling.md: only exact str and exact tuple
    leaves can match (so True, 1 and 1.0 differ and no subclass runs)."""
    stack = [(ours, theirs)]
    while stack:
        a, b = stack.pop()
        if type(a) is str:
            if type(b) is not str or a != b:
                return False
            continue
        if type(b) is not tuple or len(b) != len(a):
            return False
        stack.extend(zip(a, b))
    return True


def expected_reconstruct(name, structure):
    """IDENTITY's descriptor, or the exception class _reconstruct must raise."""
    if not isinstance(name, str) or not isinstance(structure, tuple):
        return TypeError
    registered = registry_by_name().get(str.__str__(name))  # no subclass code
    if registered is None:
        return LookupError
    if exact_equal(registered.structure(), structure):
        return registered
    return ValueError


def encode_leaf(value):
    """docs/structure.md, "Extension values"; None for an unsupported one."""
    t = type(value)
    if t is str:
        return "str:" + value
    if t is bool:
        return f"bool:{value}"
    if t is int:
        return f"int:{value}" if -2 ** 63 <= value < 2 ** 63 else f"int:{hex(value)}"
    if t is float:
        return "float:%016x" % struct.unpack("<Q", struct.pack("<d", value))[0]
    if value is None:
        return "none"
    if value is Whole:
        return "whole"
    if t is tuple:
        parts = tuple(encode_leaf(v) for v in value)
        return None if any(p is None for p in parts) else parts
    return None


# --------------------------------------------------------------------------
# Walking and editing structures (shared by the fuzz tests and the atheris
# harness in fuzz/)
# --------------------------------------------------------------------------

def structure_paths(s, max_depth=40, max_items=16):
    """Paths to nodes through exact tuples (the root included), without
    descending past max_depth or beyond the first max_items of a tuple, so
    that earlier deep or huge mutations keep this cheap."""
    out = []
    stack = [((), s)]
    while stack:
        path, node = stack.pop()
        out.append(path)
        if type(node) is tuple and len(path) < max_depth:
            for i, item in enumerate(node[:max_items]):
                stack.append((path + (i,), item))
    return sorted(out)


def get_at(s, path):
    """The node of s at path."""
    for i in path:
        s = s[i]
    return s


def put_at(s, path, new):
    """s with the node at path replaced by new (iterative: paths can be
    thousands deep)."""
    parents = []
    for i in path:
        parents.append((s, i))
        s = s[i]
    for parent, i in reversed(parents):
        new = parent[:i] + (new,) + parent[i + 1:]
    return new
