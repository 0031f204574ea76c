"""Definitions that several test modules, and the child processes and
workers they start, share.  Importable wherever tests/ is on sys.path."""
from stride_weave.dtypes import (
    BlockScaledDType,
    CompoundDType,
    DType,
    DTypeCategory,
    Level,
    RepresentationRule,
    SimpleDType,
    Whole,
)

BUILTIN_NAMES = (
    "Any", "Floating", "Integer",
    "Bool", "Int32", "Int8", "Float32", "Float64",
    "E8M0", "E5M2", "E4M3", "E3M2", "E2M3", "E2M1",
    "MXFP8_E4M3", "MXFP8_E5M2", "MXFP6_E3M2", "MXFP6_E2M3", "MXFP4",
    "MXINT8", "NVFP4",
)

#: The built-in block-scaled formats: name -> (element, ((scale, block), ...)).
BLOCK_SCALED_BUILTINS = {
    "MXFP8_E4M3": ("E4M3", (("E8M0", 32),)),
    "MXFP8_E5M2": ("E5M2", (("E8M0", 32),)),
    "MXFP6_E3M2": ("E3M2", (("E8M0", 32),)),
    "MXFP6_E2M3": ("E2M3", (("E8M0", 32),)),
    "MXFP4": ("E2M1", (("E8M0", 32),)),
    "MXINT8": ("Int8", (("E8M0", 32),)),
    "NVFP4": ("E2M1", (("E4M3", 16), ("Float32", Whole))),
}


class TagRule(RepresentationRule):
    """A declarative rule whose one parameter is part of its structure."""

    def __init__(self, tag):
        super().__init__()
        self.tag = tag

    def structure_extension(self):
        return ("tag", self.tag)

    def validate(self, context):
        return None


class PlanePair(CompoundDType, abstract=False):
    """A concrete compound dtype built from caller-supplied planes."""

    def __init__(self, name, *, planes, rules=(), supertype=None):
        super().__init__(name, supertype=supertype, simple_types=planes,
                         representation_rules=rules)


class ExtendedSimple(SimpleDType, abstract=False):
    """A simple dtype whose structure extension carries caller values."""

    def __init__(self, name, *, values, bits=8, supertype=None):
        self.values = values
        super().__init__(name, bits=bits, supertype=supertype or DType.Floating)

    def structure_extension(self):
        return ("values", self.values)


class ExtendedCategory(DTypeCategory, abstract=False):
    """A category whose structure extension carries caller values."""

    def __init__(self, name, *, values, supertype=None):
        self.values = values
        super().__init__(name, supertype=supertype)

    def structure_extension(self):
        return ("values", self.values)


#: One value of every type a structure extension may hold (docs/structure.md).
EXTENSION_VALUES = ("text", -5, 2 ** 70, True, False, 1.5, None, Whole, ("nested", (1,)))


def register_every_kind(fresh_name):
    """Register one descriptor of every kind, each under a name from
    ``fresh_name(prefix)``, and return them by kind: a category, a simple
    dtype, a compound dtype with a rule, a block-scaled format, and model
    subclasses (simple and category) whose structure extensions hold
    ``EXTENSION_VALUES``.  For tests that check a property of every
    registered descriptor: with these, such a test covers every kind on its
    own, whatever else the process has registered."""
    category = DTypeCategory(fresh_name("EveryCat"), supertype=DType.Floating)
    simple = SimpleDType(fresh_name("EverySimple"), bits=12, supertype=category)
    extended = ExtendedSimple(fresh_name("EveryExtSimple"), values=EXTENSION_VALUES)
    extended_category = ExtendedCategory(fresh_name("EveryExtCat"), values=EXTENSION_VALUES,
                                         supertype=DType.Integer)
    compound = PlanePair(fresh_name("EveryPair"), planes=[simple, DType.Float32],
                         rules=[TagRule(fresh_name("tag"))])
    element = SimpleDType(fresh_name("EveryElement"), bits=6, supertype=DType.Floating)
    block_scaled = BlockScaledDType(fresh_name("EveryBlock"), element=element,
                                    levels=(Level(DType.E8M0, 32), Level(DType.Float32, Whole)))
    return {"category": category, "simple": simple, "extended_simple": extended,
            "extended_category": extended_category, "compound": compound,
            "element": element, "block_scaled": block_scaled}
