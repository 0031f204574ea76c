"""Public dtype descriptor API of stride-weave.

Everything here is implemented in the C extension ``stride_weave._dtypes``;
this module re-exports the public names. Run ``python -m stride_weave``
to print the registered descriptor graph as a tree.
"""

from stride_weave._dtypes import (
    BlockScaledDType,
    CompoundDType,
    DType,
    DTypeCategory,
    Level,
    LevelExtent,
    PromotionError,
    PromotionLattice,
    RepresentationRule,
    SimpleDType,
    SymbolicBits,
    UnknownNameError,
    Whole,
    WholeExtent,
    can_cast,
    declare_promotion,
    declare_promotions,
    default_lattice,
    isdtype,
    promote_types,
    result_type,
    set_unpickle_imports,
    unpickle_imports,
)
from stride_weave._typing import RepresentationValidationContext

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
    # The LookupError of a name that is not registered (from_name).
    "UnknownNameError",
    # Which modules unpickling a descriptor may import (docs/pickling.md).
    "set_unpickle_imports",
    "unpickle_imports",
    # Kinds, casting and promotion (docs/relations.md).
    "isdtype",
    "can_cast",
    "promote_types",
    "result_type",
    "PromotionError",
    "PromotionLattice",
    "default_lattice",
    "declare_promotion",
    "declare_promotions",
    # A typing.Protocol: the context RepresentationRule.validate() receives.
    "RepresentationValidationContext",
]

if __name__ == "__main__":
    from stride_weave._cli import main

    raise SystemExit(main(prog="python -m stride_weave.dtypes"))
