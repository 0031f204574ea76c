"""Public dtype descriptor API of stride-weave.

Everything here is implemented in the C extension ``stride_weave._dtypes``;
this module re-exports the public names. Run ``python -m stride_weave.dtypes``
to print the registered descriptor graph as a tree.
"""

from stride_weave import _dtypes

from stride_weave._dtypes import (
    CompoundDType,
    DType,
    DTypeCategory,
    RepresentationRule,
    SimpleDType,
    Whole,
    WholeExtent,
)

__all__ = [
    "DType",
    "DTypeCategory",
    "SimpleDType",
    "CompoundDType",
    "RepresentationRule",
    "Whole",
    "WholeExtent",
]

# Names that arrive with the block-scaled formats. They are re-exported as soon
# as the extension defines them, so this module needs no change then.
for _name in ("BlockScaledDType", "Level", "LevelExtent", "SymbolicBits"):
    _value = getattr(_dtypes, _name, None)
    if _value is not None:
        globals()[_name] = _value
        __all__.append(_name)
del _name, _value

if __name__ == "__main__":
    from stride_weave._cli import main

    raise SystemExit(main())
