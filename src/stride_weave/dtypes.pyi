# Type stub for the public module stride_weave.dtypes: it re-exports the
# descriptor model from the C extension stride_weave._dtypes.
from stride_weave._dtypes import (
    CompoundDType as CompoundDType,
    DType as DType,
    DTypeCategory as DTypeCategory,
    Level as Level,
    RepresentationRule as RepresentationRule,
    SimpleDType as SimpleDType,
    SymbolicBits as SymbolicBits,
    Whole as Whole,
    WholeExtent as WholeExtent,
)

__all__ = [
    "DType",
    "DTypeCategory",
    "SimpleDType",
    "CompoundDType",
    "RepresentationRule",
    "Whole",
    "WholeExtent",
    # Re-exported by dtypes.py because the extension defines them now;
    # BlockScaledDType and LevelExtent join when the extension does.
    "Level",
    "SymbolicBits",
]
