"""Definitions that several test modules, and the child processes and
workers they start, share.  Importable wherever tests/ is on sys.path."""
from stride_weave.dtypes import CompoundDType, RepresentationRule

BUILTIN_NAMES = (
    "Any", "Floating", "Integer",
    "Bool", "Int32", "Int8", "Float32", "Float64",
    "E8M0", "E5M2", "E4M3", "E3M2", "E2M3", "E2M1",
    "MXFP8_E4M3", "MXFP8_E5M2", "MXFP6_E3M2", "MXFP6_E2M3", "MXFP4",
    "MXINT8", "NVFP4",
)


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
