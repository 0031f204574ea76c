"""A typed tour of stride-weave's descriptor API.

This file is checked by ``python -m mypy --strict examples/typed_usage.py``
and run by ``python examples/typed_usage.py`` (tests/surfaces/test_typing.py does
both). It registers names, and registered names live for the whole process,
so run it once per process.
"""

from __future__ import annotations

import copy
import pickle
from dataclasses import dataclass
from typing import assert_type

from stride_weave import interop, numerics, workers
from stride_weave._typing import (
    AdjacentLayout,
    LevelShape,
    RepresentationValidationContext,
    Structure,
    StructureExtension,
)
from stride_weave.dtypes import (
    BlockScaledDType,
    CompoundDType,
    DType,
    DTypeCategory,
    Level,
    LevelExtent,
    RepresentationRule,
    SimpleDType,
    SymbolicBits,
    Whole,
    WholeExtent,
)


# --- an extension simple dtype --------------------------------------------
class IEEEFloat(SimpleDType, abstract=False):
    """A binary floating-point encoding described by its field widths."""

    exponent_bits: int
    mantissa_bits: int

    def __init__(self, name: str, *, exponent_bits: int, mantissa_bits: int) -> None:
        # Fields may be set on self until the descriptor is sealed.
        self.exponent_bits = exponent_bits
        self.mantissa_bits = mantissa_bits
        super().__init__(
            name, bits=1 + exponent_bits + mantissa_bits, supertype=DType.Floating
        )

    def structure_extension(self) -> tuple[str, int, str, int]:
        # Called once at registration; part of structure() and of pickling.
        return ("exponent_bits", self.exponent_bits, "mantissa_bits", self.mantissa_bits)


# --- a representation rule and an extension compound dtype ---------------
class PlanesMatchStorage(RepresentationRule):
    """Each plane must be stored with exactly its declared simple dtype."""

    def validate(self, context: RepresentationValidationContext) -> None:
        expected = context.logical_dtype.simple_types
        if context.storage_dtypes != expected:
            got = [d.name for d in context.storage_dtypes]
            raise ValueError(
                f"{context.logical_dtype.name}: planes {[d.name for d in expected]} "
                f"stored as {got}"
            )


class BlockSize(RepresentationRule):
    """Level 0 is scaled in blocks of `block` (or once, for Whole)."""

    block: int | WholeExtent

    def __init__(self, block: int | WholeExtent) -> None:
        self.block = block

    def structure_extension(self) -> StructureExtension:
        return ("block", self.block)

    def validate(self, context: RepresentationValidationContext) -> None:
        src = context.level_shapes[0].logical_size
        dst = context.level_shapes[1].logical_size
        extent = context.adjacent_layouts[0].uniform_preimage_extent(
            context.level_shapes[1]
        )
        want = src if isinstance(self.block, WholeExtent) else self.block
        if extent != want or dst * want != src:
            raise ValueError(f"expected blocks of {want}, got {extent} ({src} -> {dst})")


class ScaledInt8(CompoundDType, abstract=False):
    """Int8 values with one Float32 scale per block."""

    def __init__(self, name: str, block: int | WholeExtent) -> None:
        super().__init__(
            name,
            supertype=DType.Integer,
            simple_types=[DType.Int8, DType.Float32],
            representation_rules=(PlanesMatchStorage(), BlockSize(block)),
        )


# --- a context, as the tensor side would build it ---------------------------
@dataclass(frozen=True)
class Shape:
    logical_size: int


@dataclass(frozen=True)
class BlockLayout:
    block: int

    def uniform_preimage_extent(self, shape: LevelShape, /) -> int | None:
        return self.block


@dataclass(frozen=True)
class Context:
    logical_dtype: CompoundDType
    storage_dtypes: tuple[SimpleDType, ...]
    placement_layouts: tuple[object, ...]
    adjacent_layouts: tuple[AdjacentLayout, ...]
    level_shapes: tuple[LevelShape, ...]


def validate_all(dtype: CompoundDType, context: RepresentationValidationContext) -> None:
    for rule in dtype.representation_rules:
        rule.validate(context)


def main() -> None:
    # A category extension and the built-in graph.
    quantized = DTypeCategory("Quantized", supertype=DType.Any)
    assert quantized.is_category() and quantized.supertype is DType.Any
    assert DType.Float32.bits == 32
    # A simple dtype's supertype is always a category (never None).
    assert DType.Float32.supertype.name == "Floating"

    # Register extensions.
    bf16 = IEEEFloat("BFloat16", exponent_bits=8, mantissa_bits=7)
    assert bf16.bits == 16 and bf16.is_simple()
    assert bf16.is_subtype_of(DType.Floating)
    assert bf16.supertypes() == (DType.Floating, DType.Any)
    structure: Structure = bf16.structure()
    assert structure[-1] == ("extension", ("str:exponent_bits", "int:8", "str:mantissa_bits", "int:7"))

    si8 = ScaledInt8("ScaledInt8_b32", 32)
    assert si8.num_carriers == 2 and si8.simple_types == (DType.Int8, DType.Float32)

    # from_name narrows to the class it is called on.
    assert_type(DType.from_name("BFloat16"), DType)
    assert_type(SimpleDType.from_name("BFloat16"), SimpleDType)
    found = IEEEFloat.from_name("BFloat16")
    assert_type(found, IEEEFloat)
    assert found is bf16 and found.mantissa_bits == 7
    try:
        SimpleDType.from_name("Floating")  # a category, not a simple dtype
    except LookupError:
        pass
    else:
        raise AssertionError("expected LookupError")

    # registered() is a tuple of the class it is called on.
    floats = IEEEFloat.registered()
    assert_type(floats, tuple[IEEEFloat, ...])
    assert floats == (bf16,)
    assert bf16 in SimpleDType.registered() and si8 in DType.registered()
    assert "BFloat16" not in vars(DType)  # the DType namespace holds built-ins only
    widths = {d.name: d.bits for d in SimpleDType.registered()}
    assert widths["Float32"] == 32 and widths["BFloat16"] == 16

    # Pickling and copying preserve identity.
    for descriptor in (bf16, si8, quantized, DType.E2M1):
        assert pickle.loads(pickle.dumps(descriptor)) is descriptor
        assert copy.deepcopy(descriptor) is descriptor
    assert pickle.loads(pickle.dumps(Whole)) is Whole

    # Rules validate a context built by the tensor side.
    context = Context(
        logical_dtype=si8,
        storage_dtypes=(DType.Int8, DType.Float32),
        placement_layouts=(),
        adjacent_layouts=(BlockLayout(32),),
        level_shapes=(Shape(1024), Shape(32)),
    )
    validate_all(si8, context)

    # Block-scaled building blocks.
    level = Level(DType.E8M0, 32)
    block = level.block
    per_element = bf16.bits + (DType.E8M0.bits / block if isinstance(block, int) else 0)
    assert per_element == 16.25 and not level.is_whole()
    tile = Level(DType.E4M3, (16, 16))     # an N-D block: one scale per 16x16 tile
    assert_type(tile.block_shape, tuple[int, ...] | None)
    assert tile.block_shape == (16, 16) and tile.block_size == 256
    assert level.block_shape == (32,) and Level(DType.Float32, Whole).block_shape is None
    nvfp4_like = SymbolicBits(4.5, 32)
    assert nvfp4_like.evaluate(1024) == 4.53125

    # Block-scaled formats: the built-ins and one of our own.
    mxfp4 = assert_type(DType.MXFP4, BlockScaledDType)
    assert mxfp4.bits_per_element == 4.25 and mxfp4.element is DType.E2M1
    nvfp4_bits = DType.NVFP4.bits_per_element
    assert isinstance(nvfp4_bits, SymbolicBits)
    assert nvfp4_bits == nvfp4_like
    bf16_mx = BlockScaledDType("BF16_MX_example", element=bf16, levels=[level])
    assert_type(bf16_mx.levels, tuple[Level, ...])
    first_rule = bf16_mx.representation_rules[0]
    assert isinstance(first_rule, LevelExtent) and first_rule.extent == 32
    assert BlockScaledDType.from_name("MXFP4") is mxfp4
    assert mxfp4.block_shape == (32,) and mxfp4.num_axes == 1
    assert pickle.loads(pickle.dumps(bf16_mx)) is bf16_mx

    # Conversions: each one's result has its target's type.
    triple = assert_type(interop.to_dlpack(DType.E4M3), interop.DLPackDType)
    assert interop.from_dlpack(*triple) is DType.E4M3
    assert assert_type(interop.to_buffer_format(DType.Float32), str) == "f"
    planes = assert_type(interop.planes(DType.NVFP4, "dlpack"),
                         tuple[interop.Plane[interop.DLPackDType], ...])
    assert [p.foreign.code for p in planes] == [17, 10, 2]
    records = assert_type(interop.planes(DType.MXFP4, numerics.finfo),
                          tuple[interop.Plane[numerics.NumericInfo], ...])
    assert records[0].foreign.max == 6.0
    declared = assert_type(interop.register_mapping(bf16, dlpack=(4, 16)),
                           interop.Mapping)
    assert interop.to_dlpack(bf16) == declared.dlpack
    # What each worker of a pool runs first: definitions included.
    setup = assert_type(workers.initializer("json"), workers.WorkerSetup)
    assert setup.modules == ("json",)

    print(f"registered {bf16!r}, {si8!r}, {quantized!r}; rules ok")


if __name__ == "__main__":
    main()
