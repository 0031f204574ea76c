"""Built-in subclasses whose methods run where a library should run none.

A boundary that reads a ``str``, ``int`` or ``tuple`` argument correctly
copies it to the exact built-in with the built-in type's own methods, and
never calls a method of the subclass. Two kinds of values check that:

* `tripwire` values record the name of every method of theirs that runs
  (the special methods Python calls implicitly, and any attribute looked up
  on them), then do what the built-in does: a correct boundary leaves
  ``calls`` empty;
* `flipper` values hold one value and answer, from the methods named, as
  that value would until ``flip()``, and as another value afterwards: a
  library that checks an argument and reads it again later sees two values.

Each call makes a new class, so records never mix between tests.
"""
import enum
import types

#: The methods a tripwire str records (besides every attribute lookup).
STR_METHODS = (
    "__str__", "__repr__", "__format__", "__hash__", "__eq__", "__ne__",
    "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__radd__", "__mul__",
    "__rmul__", "__mod__", "__rmod__", "__getitem__", "__len__", "__iter__",
    "__contains__", "__bool__", "__reduce_ex__", "__sizeof__",
)
#: The methods a tripwire tuple records.
TUPLE_METHODS = (
    "__repr__", "__str__", "__format__", "__hash__", "__eq__", "__ne__",
    "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__radd__", "__mul__",
    "__getitem__", "__len__", "__iter__", "__reversed__", "__contains__",
    "__bool__", "__reduce_ex__",
)
#: The methods a tripwire int enum member records.
INT_METHODS = (
    "__int__", "__index__", "__float__", "__repr__", "__str__", "__format__",
    "__hash__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__add__", "__radd__", "__and__", "__rshift__", "__bool__", "__abs__",
    "__neg__", "__reduce_ex__",
)
#: The str methods a flipper can answer from, with what each answers.
FLIP_STR_METHODS = ("__radd__", "__add__", "__str__", "__hash__", "__eq__",
                    "__format__", "__getitem__")


def _recording(base, name, calls, armed):
    implementation = getattr(base, name, None)

    def method(self, *args, **kwargs):
        if armed[0]:
            calls.append(name)
        if implementation is None:   # str and tuple have no __radd__ or __bool__
            return base.__len__(self) != 0 if name == "__bool__" else NotImplemented
        return implementation(self, *args, **kwargs)
    method.__name__ = name
    return method


def _recording_class(base, methods, calls, armed, bases=None):
    namespace = {name: _recording(base, name, calls, armed) for name in methods}

    def __getattribute__(self, attribute):
        if armed[0]:
            calls.append(f".{attribute}")
        return object.__getattribute__(self, attribute)
    namespace["__getattribute__"] = __getattribute__
    return types.new_class(f"Tripwire{base.__name__.title()}", bases or (base,),
                           exec_body=lambda ns: ns.update(namespace))


def tripwire(value):
    """``(obj, calls)``: ``obj`` is an instance of a new str or tuple
    subclass equal to ``value``, armed; ``calls`` lists the methods of its
    that have run since."""
    calls, armed = [], [False]
    if isinstance(value, str):
        cls = _recording_class(str, STR_METHODS, calls, armed)
    else:
        cls = _recording_class(tuple, TUPLE_METHODS, calls, armed)
    obj = cls(value)
    armed[0] = True
    return obj, calls


def tripwire_ints(**members):
    """``(Enum, calls)``: an ``enum.IntEnum`` with ``members``, whose members
    record, in ``calls``, every method of theirs that runs once the class
    is made."""
    calls, armed = [], [False]
    base = _recording_class(int, INT_METHODS, calls, armed, bases=(enum.IntEnum,))
    cls = base("TripwireCodes", members)
    armed[0] = True
    return cls, calls


class Switch:
    """Flips every flipper made with it at once."""

    def __init__(self):
        self.flipped = False

    def flip(self):
        self.flipped = True


def flipper(value, later, method, switch):
    """A str subclass instance holding ``value`` whose ``method`` (one of
    `FLIP_STR_METHODS`) answers as ``value`` does until ``switch`` flips,
    then as ``later`` does."""
    def current():
        return later if switch.flipped else value

    answers = {
        "__radd__": lambda self, other: other + current(),
        "__add__": lambda self, other: current() + other,
        "__str__": lambda self: current(),
        "__hash__": lambda self: hash(current()),
        "__eq__": lambda self, other: current() == other,
        "__format__": lambda self, format_spec: format(current(), format_spec),
        "__getitem__": lambda self, index: current()[index],
    }
    namespace = {method: answers[method]}
    if method == "__eq__":
        namespace["__hash__"] = str.__hash__
    return type(f"Flipping{method.strip('_').title()}Str", (str,), namespace)(value)
