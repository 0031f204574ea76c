"""An opt-in pack of common formats: ``import stride_weave.formats``.

Importing this module registers, as ordinary extensions reached through
``DType.from_name()`` and this module's attributes (never as ``DType``
attributes, which hold only the built-ins):

================  ========  ==========  ============================================
name              bits      category    encoding
================  ========  ==========  ============================================
``Float16``       16        Floating    IEEE 754 binary16
``BFloat16``      16        Floating    bfloat16 (binary32's exponent, 7-bit mantissa)
``E4M3FNUZ``      8         Floating    float8_e4m3fnuz (max 240, NaN is 0x80)
``E5M2FNUZ``      8         Floating    float8_e5m2fnuz (max 57344, NaN is 0x80)
``Int16``         16        Integer     two's complement
``Int64``         64        Integer     two's complement
``Int4``          4         Integer     two's complement
``UInt8``         8         Integer     unsigned binary
``UInt16``        16        Integer     unsigned binary
``UInt32``        32        Integer     unsigned binary
``UInt64``        64        Integer     unsigned binary
``UInt4``         4         Integer     unsigned binary
``Complex64``     64        Complex     two binary32 (real, imaginary)
``Complex128``    128       Complex     two binary64 (real, imaginary)
================  ========  ==========  ============================================

and these block-scaled formats, whose element and scales are built-ins:

========================  =======  =============================================
name                      element  levels
========================  =======  =============================================
``NVFP4_16x16``           E2M1     ``Level(E4M3, (16, 16))``, ``Level(Float32, Whole)``
``MXFP8_E4M3_32x32``      E4M3     ``Level(E8M0, (32, 32))``
``FP8_E4M3_128x128``      E4M3     ``Level(Float32, (128, 128))``
``FP8_E4M3_1x128``        E4M3     ``Level(Float32, 128)``
========================  =======  =============================================

(NVIDIA's NVFP4 recipe for weights; Transformer Engine's MXFP8 2-D
weights; DeepSeek-V3's weights and activations, Transformer Engine's
``Float8BlockScaling``.) Their blocks are N-D tuples but for the last, a
1-D block of 128 along whichever axis a layout chooses.

``Complex`` is a category of this pack, directly under ``DType.Any``. Each
simple format has its numeric record (:mod:`stride_weave.numerics`) and its
foreign equivalents (:mod:`stride_weave.interop`). The table itself is
``stride_weave._packs``, which the conversions and the lookup errors read
to say "import stride_weave.formats" without importing the pack.

Importing the pack is all or nothing. It first checks everything that can
refuse it: each of its names must be free, or registered by this pack
itself (an earlier import in this process) with the same definition, the
same numeric record (or none) and the same mapping (or none), and no other
module may have registered one of its block-scaled formats under another
name (a block-scaled format is unique by its structure). Only then
does it register, and nothing after the first registration can fail but
an out-of-memory error (or another thread registering one of its names
at that very moment); an import that failed there completes when it is
tried again. A name registered by any other module, even with the same
structure, refuses the import with a ValueError naming that module, and
nothing is registered: the pack never adopts another module's
descriptor, so its descriptors' pickles always name this module; so does
one of its block-scaled formats registered by another module under another
name.

Where another dtype already maps one of the pack's foreign dtypes
(``float8_e4m3fnuz`` mapped by an extension first), that dtype stays the
canonical equivalent and the pack's format is an alias for it
(:func:`stride_weave.interop.register_mapping`): ``to_numpy`` of the
pack's format works, ``from_numpy`` gives the first one.

Importing the pack also declares its promotion edges into the default
lattice (``PROMOTIONS``), so ``promote_types(Int8, UInt8)`` is ``Int16``;
``Int4``, ``UInt4`` and the fnuz formats take part in no implicit promotion.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from stride_weave import _packs
from stride_weave._dtypes import (
    BlockScaledDType,
    DType,
    DTypeCategory,
    Level,
    SimpleDType,
    Whole,
    declare_promotions,
)
from stride_weave.interop import _declared_as, _prepare, _publish, mapping
from stride_weave.numerics import NumericInfo, numeric_info, register_numeric_info

__all__ = [
    "Complex",
    "Float16",
    "BFloat16",
    "E4M3FNUZ",
    "E5M2FNUZ",
    "Int16",
    "Int64",
    "Int4",
    "UInt8",
    "UInt16",
    "UInt32",
    "UInt64",
    "UInt4",
    "Complex64",
    "Complex128",
    "NVFP4_16x16",
    "MXFP8_E4M3_32x32",
    "FP8_E4M3_128x128",
    "FP8_E4M3_1x128",
    "FORMATS",
    "BLOCK_SCALED",
    "PROMOTIONS",
]

_WHERE = _packs.FORMATS_MODULE


class _Planned(NamedTuple):
    """One name of the pack, checked: what to register (or the registered
    descriptor of an earlier import of the pack) and what to attach."""

    name: str
    bits: int | None              # None for a category
    supertype: str
    record: NumericInfo | None    # None for a category
    data: tuple[Any, ...] | None  # the prepared mapping; None for a category
    found: DType | None


def _existing(name: str) -> DType | None:
    try:
        return DType.from_name(name)
    except LookupError:
        return None


def _registered_by(found: DType) -> str | None:
    """The module that registered ``found`` (what its pickle names), or
    None for a built-in. Read from the model's own pickle, in C."""
    args = found.__reduce_ex__(2)[1]
    module: object = args[1] if len(args) == 2 else None
    return module if type(module) is str else None


def _check_found(name: str, found: DType, cls: type, bits: int | None,
                 supertype: str) -> None:
    """The registered ``found`` must be this pack's own definition of
    ``name``, registered by this pack."""
    owner = _registered_by(found)
    what = f"category under {supertype}" if bits is None else f"{bits}-bit {supertype} format"
    # The exact class first: only then are its accessors the model's own.
    ours = (type(found) is cls and owner == _WHERE and found.supertype is not None
            and found.supertype.name == supertype
            and (bits is None or (isinstance(found, SimpleDType) and found.bits == bits)))
    if not ours:
        _refuse_taken(name, found, owner, what)


def _by(owner: str | None) -> str:
    return "a built-in" if owner is None else f"module {owner!r}"


def _refuse_taken(name: str, found: DType, owner: str | None, what: str) -> None:
    """ValueError: another module holds ``name``, which the pack registers
    as ``what``."""
    raise ValueError(
        f"{_WHERE}: the name {name!r} is already registered by {_by(owner)} as "
        f"{found!r}; this pack registers its own {what} under that name "
        f"and adopts no other module's descriptor, so nothing was "
        f"registered (register yours under another name, or import "
        f"{_WHERE} first and use its {name})"
    )


def _numeric_record(params: tuple[Any, ...]) -> NumericInfo:
    if params[0] == "floating":
        _, encoding, keywords = params
        return NumericInfo.floating(encoding, **dict(keywords))
    _, bits, signed = params
    return NumericInfo.integer(bits, signed=signed)


def _check_attached(found: SimpleDType, record: NumericInfo, data: tuple[Any, ...]) -> None:
    """An earlier import's descriptor must have this pack's record and
    mapping, or none yet (an import that stopped half-way)."""
    try:
        current: NumericInfo | None = numeric_info(found)
    except LookupError:
        current = None
    if current is not None and current != record:
        raise ValueError(
            f"{_WHERE}: {found.name} has the numeric record {current!r}, not this "
            f"pack's {record!r}; nothing was registered"
        )
    if _declared_as(found, data) is False:
        raise ValueError(
            f"{_WHERE}: {found.name} is mapped to {mapping(found)!r}, not as this "
            f"pack maps it; nothing was registered"
        )


class _PlannedBlockScaled(NamedTuple):
    """One block-scaled format of the pack, checked: its definition, and
    the registered descriptor of an earlier import of the pack, if any."""

    name: str
    element: SimpleDType
    levels: tuple[Level, ...]
    found: BlockScaledDType | None


def _block_scaled_definition(element: str, levels: tuple[tuple[str, Any], ...]
                             ) -> tuple[SimpleDType, tuple[Level, ...]]:
    elem = DType.from_name(element)
    assert isinstance(elem, SimpleDType)
    built = []
    for scale, block in levels:
        s = DType.from_name(scale)
        assert isinstance(s, SimpleDType)
        built.append(Level(s, Whole if block is None else block))
    return elem, tuple(built)


def _describe(element: SimpleDType, levels: tuple[Level, ...]) -> str:
    return f"{element.name} with {', '.join(map(_level_text, levels))}"


def _level_text(level: Level) -> str:
    return f"Level({level.scale.name}, {level.block!r})"


def _check_block_scaled(name: str, element: SimpleDType,
                        levels: tuple[Level, ...]) -> BlockScaledDType | None:
    """The registered descriptor of an earlier import of the pack under
    ``name``, or None when the name is free; ValueError when another module
    holds the name or this format's structure."""
    what = f"block-scaled format ({_describe(element, levels)})"
    found = _existing(name)
    if found is not None:
        owner = _registered_by(found)
        # The exact class first: only then are its accessors the model's own.
        ours = (type(found) is BlockScaledDType and owner == _WHERE
                and found.element is element and found.levels == levels)
        if not ours:
            _refuse_taken(name, found, owner, what)
        assert isinstance(found, BlockScaledDType)
        return found
    for other in BlockScaledDType.registered():
        # The same element, levels and no extension: the same structure.
        if (other.element is element and other.levels == levels
                and other.structure()[-1] == ("extension", ())):
            raise ValueError(
                f"{_WHERE}: the {what} that this pack registers as {name!r} is "
                f"already registered by {_by(_registered_by(other))} as {other!r}; "
                f"a block-scaled format is unique by its structure, so nothing was "
                f"registered (import {_WHERE} first and use its {name})"
            )
    return None


def _plan() -> tuple[_Planned, ...]:
    """Everything the import will do, checked before anything is
    registered; ValueError when any of it would be refused."""
    planned = []
    for name, supertype in _packs.FORMATS_CATEGORIES:
        found = _existing(name)
        if found is not None:
            _check_found(name, found, DTypeCategory, None, supertype)
        planned.append(_Planned(name, None, supertype, None, None, found))
    for name, bits, supertype, params, equivalents in _packs.FORMATS_TABLE:
        record = _numeric_record(params)
        data = _prepare(name, bits, equivalents, check_now=False)
        found = _existing(name)
        if found is not None:
            _check_found(name, found, SimpleDType, bits, supertype)
            assert isinstance(found, SimpleDType)
            _check_attached(found, record, data)
        planned.append(_Planned(name, bits, supertype, record, data, found))
    return tuple(planned)


def _plan_block_scaled() -> tuple[_PlannedBlockScaled, ...]:
    """The block-scaled formats, checked before anything is registered."""
    planned = []
    for name, element_name, level_names in _packs.FORMATS_BLOCK_SCALED:
        element, levels = _block_scaled_definition(element_name, level_names)
        found = _check_block_scaled(name, element, levels)
        planned.append(_PlannedBlockScaled(name, element, levels, found))
    return tuple(planned)


def _register(planned: tuple[_Planned, ...]) -> tuple[dict[str, DTypeCategory],
                                                  dict[str, SimpleDType]]:
    """Register what ``_plan`` checked: the categories, then the formats.
    A descriptor of an earlier import is kept, and gets what it lacks."""
    categories: dict[str, DTypeCategory] = {}
    formats: dict[str, SimpleDType] = {}
    for p in planned:
        found = p.found
        supertype = categories.get(p.supertype) or DType.from_name(p.supertype)
        assert isinstance(supertype, DTypeCategory)
        if p.bits is None:
            assert found is None or isinstance(found, DTypeCategory)
            categories[p.name] = found or DTypeCategory(p.name, supertype=supertype)
            continue
        assert found is None or isinstance(found, SimpleDType)
        assert p.record is not None and p.data is not None
        if found is None:
            # The record is attached before the format is registered: no
            # code (a profile hook, another thread) ever sees it without.
            d = SimpleDType(p.name, bits=p.bits, supertype=supertype,
                            numeric_info=p.record)
        else:
            d = found
            register_numeric_info(d, p.record)   # an equal record again is harmless
        # The first mapping of a foreign dtype stays canonical: where an
        # extension mapped one first, the pack's format is an alias.
        _publish(d, p.data, alias=True)
        formats[p.name] = d
    return categories, formats


def _register_block_scaled(planned: tuple[_PlannedBlockScaled, ...]
                           ) -> dict[str, BlockScaledDType]:
    """Register what ``_plan_block_scaled`` checked, keeping a descriptor
    of an earlier import."""
    return {p.name: p.found or BlockScaledDType(p.name, element=p.element, levels=p.levels)
            for p in planned}


_planned, _planned_block_scaled = _plan(), _plan_block_scaled()
_categories, _formats = _register(_planned)
_block_scaled = _register_block_scaled(_planned_block_scaled)

Complex: DTypeCategory = _categories["Complex"]
Float16: SimpleDType = _formats["Float16"]
BFloat16: SimpleDType = _formats["BFloat16"]
E4M3FNUZ: SimpleDType = _formats["E4M3FNUZ"]
E5M2FNUZ: SimpleDType = _formats["E5M2FNUZ"]
Int16: SimpleDType = _formats["Int16"]
Int64: SimpleDType = _formats["Int64"]
Int4: SimpleDType = _formats["Int4"]
UInt8: SimpleDType = _formats["UInt8"]
UInt16: SimpleDType = _formats["UInt16"]
UInt32: SimpleDType = _formats["UInt32"]
UInt64: SimpleDType = _formats["UInt64"]
UInt4: SimpleDType = _formats["UInt4"]
Complex64: SimpleDType = _formats["Complex64"]
Complex128: SimpleDType = _formats["Complex128"]

NVFP4_16x16: BlockScaledDType = _block_scaled["NVFP4_16x16"]
MXFP8_E4M3_32x32: BlockScaledDType = _block_scaled["MXFP8_E4M3_32x32"]
FP8_E4M3_128x128: BlockScaledDType = _block_scaled["FP8_E4M3_128x128"]
FP8_E4M3_1x128: BlockScaledDType = _block_scaled["FP8_E4M3_1x128"]

#: Every simple format of the pack, in the order of the first table above.
FORMATS: tuple[SimpleDType, ...] = tuple(_formats.values())

#: Every block-scaled format of the pack, in the order of the second table.
BLOCK_SCALED: tuple[BlockScaledDType, ...] = tuple(_block_scaled.values())

#: The pack's edges of the default promotion lattice, (lower, upper) pairs,
#: declared together when the pack is imported. With the built-in edges
#: (Bool -> Int8 -> Int32, Float32 -> Float64) they make the lattice of
#: docs/relations.md.
PROMOTIONS: tuple[tuple[SimpleDType, SimpleDType], ...] = (
    (DType.Bool, UInt8),
    (DType.Int8, Int16),
    (Int16, DType.Int32),
    (DType.Int32, Int64),
    (UInt8, UInt16),
    (UInt16, UInt32),
    (UInt32, UInt64),
    (UInt8, Int16),
    (UInt16, DType.Int32),
    (UInt32, Int64),
    (Float16, DType.Float32),
    (BFloat16, DType.Float32),
    (DType.Float32, Complex64),
    (Complex64, Complex128),
    (DType.Float64, Complex128),
)

declare_promotions(PROMOTIONS)
