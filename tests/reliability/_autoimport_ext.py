"""An extension module that workers can import but have not imported, for
tests/reliability/test_unpickle_import.py and test_dask.py.

Importing it registers, under fixed names (the same in every process), a
plain SimpleDType, a subclass instance, and a block-scaled format built on
the plain one.  No test process imports it at collection time: the tests
import it when they need it, and worker processes only ever import it
through unpickling (the module hint of a descriptor's pickle).
"""
from stride_weave.dtypes import BlockScaledDType, DType, Level, SimpleDType

NAMES = ("AI_Float16", "AI_Tagged", "AI_MXFloat16")


class TaggedFloat(SimpleDType, abstract=False):
    """A simple dtype carrying a tag in its structure."""

    def __init__(self, name, *, tag):
        self.tag = tag
        super().__init__(name, bits=8, supertype=DType.Floating)

    def structure_extension(self):
        return ("tag", self.tag)


FLOAT16 = SimpleDType("AI_Float16", bits=16, supertype=DType.Floating)
TAGGED = TaggedFloat("AI_Tagged", tag="t1")
MXFLOAT16 = BlockScaledDType(
    "AI_MXFloat16", element=FLOAT16, levels=(Level(DType.E8M0, 32),)
)


def describe(d):
    """A task function that lives in this module."""
    return (d.name, d.bits if d.is_simple() else None)
