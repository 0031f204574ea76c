# Type stub for the public module stride_weave.dtypes: it re-exports the
# descriptor model from the C extension stride_weave._dtypes.
from stride_weave._dtypes import (
    BlockScaledDType as BlockScaledDType,
    CompoundDType as CompoundDType,
    DType as DType,
    DTypeCategory as DTypeCategory,
    Level as Level,
    LevelExtent as LevelExtent,
    RepresentationRule as RepresentationRule,
    SimpleDType as SimpleDType,
    SymbolicBits as SymbolicBits,
    UnknownNameError as UnknownNameError,
    Whole as Whole,
    WholeExtent as WholeExtent,
    set_unpickle_imports as set_unpickle_imports,
    unpickle_imports as unpickle_imports,
)
from stride_weave._typing import (
    RepresentationValidationContext as RepresentationValidationContext,
)

__all__ = [
    "DType",
    "DTypeCategory",
    "SimpleDType",
    "CompoundDType",
    "BlockScaledDType",
    "RepresentationRule",
    "LevelExtent",
    "Level",
    "Whole",
    "WholeExtent",
    "SymbolicBits",
    "UnknownNameError",
    "RepresentationValidationContext",
    "set_unpickle_imports",
    "unpickle_imports",
]
