"""Extension definitions shared by test_pickling.py and the child processes it starts.

Both processes import this module under the same name (``_child_defs``), so
rule classes have the same ``<module>.<qualname>`` identity on both sides.

``register(names, variant)`` registers one extension of every kind under the
given names (a dict kind -> registered name).  ``variant`` selects the
definition; every variant except "base" differs from "base" in one place:

=========== ==============================================================
variant     difference from "base"
=========== ==============================================================
base        the definitions the parent process pickles
width       the simple dtype is 32 bits wide instead of 16
hierarchy   the category's supertype is Integer instead of Floating
plane       the compound's second plane is Float64 instead of Float32
rule        the compound's rule carries block 64 instead of 32
extension   the user subclass's structure_extension() says "beta", not "alpha"
none        registers nothing at all
=========== ==============================================================

``child_main()`` is the entry point of a child process:
``python -c "...; import _child_defs; _child_defs.child_main()" VARIANT PATH``
where PATH holds ``pickle.dumps({"names": ..., "payloads": {key: [bytes, ...]}})``.
It registers VARIANT, unpickles every payload and prints one JSON object
``{key: [outcome, ...]}`` with, per payload, either ``"identity"`` (the
unpickled object *is* the child's registered descriptor), ``"other"`` (it is
some other object), or ``[exception type name, message]``.
"""
import json
import pickle
import sys

from stride_weave.dtypes import (
    DType,
    DTypeCategory,
    SimpleDType,
    Whole,
)

from support.defs import BUILTIN_NAMES, PlanePair, TagRule  # noqa: F401 (re-exported)

KINDS = ("category", "simple", "compound", "subclass", "subcategory")

VARIANTS = ("base", "width", "hierarchy", "plane", "rule", "extension", "none")

# Which kinds must fail to unpickle (ValueError) in a child that registered
# the variant.  The simple dtype references the category and the compound
# references the simple dtype, so a difference propagates along references.
MISMATCHED = {
    "base": frozenset(),
    "width": frozenset({"simple", "compound"}),
    "hierarchy": frozenset({"category", "simple", "compound"}),
    "plane": frozenset({"compound"}),
    "rule": frozenset({"compound"}),
    "extension": frozenset({"subclass"}),
}

class MarkedCategory(DTypeCategory, abstract=False):
    """A user category subclass adding a structure extension."""

    def structure_extension(self):
        return ("marked",)


def _tagged_float_class(tag):
    # The class name is not part of a structure; only structure_extension() is.
    class TaggedFloat(SimpleDType, abstract=False):
        def structure_extension(self):
            return ("tag", tag, 1.5, -0.0, True, None, Whole, (7, "nested"))

    return TaggedFloat


def register(names, variant="base"):
    """Register one extension of every kind; return a dict kind -> descriptor."""
    if variant == "none":
        return {}
    if variant not in MISMATCHED:
        raise ValueError(f"unknown variant {variant!r}")
    category = DTypeCategory(
        names["category"],
        supertype=DType.Integer if variant == "hierarchy" else DType.Floating,
    )
    simple = SimpleDType(
        names["simple"],
        bits=32 if variant == "width" else 16,
        supertype=category,
    )
    rule = TagRule(64 if variant == "rule" else 32)
    compound = PlanePair(
        names["compound"],
        planes=[simple, DType.Float64 if variant == "plane" else DType.Float32],
        rules=[rule],
    )
    tagged_cls = _tagged_float_class("beta" if variant == "extension" else "alpha")
    subclass = tagged_cls(names["subclass"], bits=8, supertype=DType.Floating)
    subcategory = MarkedCategory(names["subcategory"], supertype=DType.Any)
    return {
        "category": category,
        "simple": simple,
        "compound": compound,
        "subclass": subclass,
        "subcategory": subcategory,
    }


def _outcome(blob, expected):
    try:
        loaded = pickle.loads(blob)
    except Exception as exc:  # reported to the parent, which asserts on it
        return [type(exc).__name__, str(exc)]
    return "identity" if loaded is expected else "other"


def child_main():
    variant, path = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        data = pickle.load(f)  # a dict of bytes: no descriptor is loaded here
    names = data["names"]
    mine = register(names, variant)
    results = {}
    for key, blobs in data["payloads"].items():
        if key in BUILTIN_NAMES:
            expected = getattr(DType, key)
            assert expected is DType.from_name(key)
        elif key in mine:
            expected = mine[key]
            assert expected is DType.from_name(names[key])
        else:
            expected = None
        results[key] = [_outcome(blob, expected) for blob in blobs]
    sys.stdout.write(json.dumps(results))
    sys.stdout.flush()
