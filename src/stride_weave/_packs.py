"""The optional packs of formats, described without importing them.

A pack registers descriptors when it is imported; this module only says
what each pack would register, as plain immutable data (exact ``str``,
``int``, ``bool``, ``None`` and tuples), and imports nothing. It is the one
place that lists a pack's names and equivalents:

- the pack itself (:mod:`stride_weave.formats`) registers from it;
- :mod:`stride_weave.interop` reads it when a conversion finds no
  equivalent, to say which pack has one ("import stride_weave.formats");
- the message of a name that is not registered (``DType.from_name``) reads
  :data:`PACKS` to say which pack registers it.

Nothing here is registered, and reading it never imports a pack.
"""

from __future__ import annotations

#: The module of the formats pack.
FORMATS_MODULE = "stride_weave.formats"

#: The pack's categories: (name, supertype name).
FORMATS_CATEGORIES: tuple[tuple[str, str], ...] = (
    ("Complex", "Any"),
)

# A numeric record's parameters: ("floating", encoding, (keyword, value)...)
# for NumericInfo.floating, or ("integer", bits, signed) for
# NumericInfo.integer.
_NumericParams = tuple[object, ...]
# The equivalents, in the order of interop.TARGETS: numpy name, DLPack
# (code, bits), pyarrow factory name, PEP 3118 format, torch name.
_Equivalents = tuple[str | None, tuple[int, int] | None, str | None, str | None, str | None]


def _ieee(encoding: str, exponent: int, mantissa: int, bias: int, *,
          complex: bool = False) -> _NumericParams:
    return ("floating", encoding, (("exponent_bits", exponent), ("mantissa_bits", mantissa),
                                   ("bias", bias), ("nan_encoding", "ieee"),
                                   ("complex", complex)))


def _fnuz(encoding: str, exponent: int, mantissa: int, bias: int) -> _NumericParams:
    return ("floating", encoding, (("exponent_bits", exponent), ("mantissa_bits", mantissa),
                                   ("bias", bias), ("nan_encoding", "negative_zero"),
                                   ("complex", False)))


# DLPack type codes (interop.DLDataTypeCode), spelled out so that this
# module imports nothing.
_INT, _UINT, _FLOAT, _BFLOAT, _COMPLEX = 0, 1, 2, 4, 5
_E4M3FNUZ, _E5M2FNUZ = 11, 13

#: The pack's simple formats, in registration order: (name, bits, supertype
#: name, numeric record parameters, equivalents).
FORMATS_TABLE: tuple[tuple[str, int, str, _NumericParams, _Equivalents], ...] = (
    ("Float16", 16, "Floating", _ieee("ieee754_binary16", 5, 10, 15),
     ("float16", (_FLOAT, 16), "float16", "e", "float16")),
    ("BFloat16", 16, "Floating", _ieee("bfloat16", 8, 7, 127),
     ("bfloat16", (_BFLOAT, 16), None, None, "bfloat16")),
    ("E4M3FNUZ", 8, "Floating", _fnuz("float8_e4m3fnuz", 4, 3, 8),
     ("float8_e4m3fnuz", (_E4M3FNUZ, 8), None, None, "float8_e4m3fnuz")),
    ("E5M2FNUZ", 8, "Floating", _fnuz("float8_e5m2fnuz", 5, 2, 16),
     ("float8_e5m2fnuz", (_E5M2FNUZ, 8), None, None, "float8_e5m2fnuz")),
    ("Int16", 16, "Integer", ("integer", 16, True),
     ("int16", (_INT, 16), "int16", "h", "int16")),
    ("Int64", 64, "Integer", ("integer", 64, True),
     ("int64", (_INT, 64), "int64", "q", "int64")),
    # torch.int4/uint4 are one-byte placeholders, not 4-bit storage: none.
    ("Int4", 4, "Integer", ("integer", 4, True),
     ("int4", (_INT, 4), None, None, None)),
    ("UInt8", 8, "Integer", ("integer", 8, False),
     ("uint8", (_UINT, 8), "uint8", "B", "uint8")),
    ("UInt16", 16, "Integer", ("integer", 16, False),
     ("uint16", (_UINT, 16), "uint16", "H", "uint16")),
    ("UInt32", 32, "Integer", ("integer", 32, False),
     ("uint32", (_UINT, 32), "uint32", "I", "uint32")),
    ("UInt64", 64, "Integer", ("integer", 64, False),
     ("uint64", (_UINT, 64), "uint64", "Q", "uint64")),
    ("UInt4", 4, "Integer", ("integer", 4, False),
     ("uint4", (_UINT, 4), None, None, None)),
    ("Complex64", 64, "Complex", _ieee("complex64", 8, 23, 127, complex=True),
     ("complex64", (_COMPLEX, 64), None, "Zf", "complex64")),
    ("Complex128", 128, "Complex", _ieee("complex128", 11, 52, 1023, complex=True),
     ("complex128", (_COMPLEX, 128), None, "Zd", "complex128")),
)

# A level's block: an int (a 1-D block), a tuple of ints (an N-D block) or
# None (Whole, which this module cannot name without importing the core).
_Block = int | tuple[int, ...] | None

#: The pack's block-scaled formats, in registration order: (name, element
#: name, levels), each level (scale name, block), innermost first. Their
#: element and scales are built-ins.
FORMATS_BLOCK_SCALED: tuple[tuple[str, str, tuple[tuple[str, _Block], ...]], ...] = (
    # NVIDIA's NVFP4 recipe for weights: one E4M3 scale per 16x16 block.
    ("NVFP4_16x16", "E2M1", (("E4M3", (16, 16)), ("Float32", None))),
    # Transformer Engine's MXFP8 2-D weights.
    ("MXFP8_E4M3_32x32", "E4M3", (("E8M0", (32, 32)),)),
    # DeepSeek-V3 weights; Transformer Engine's 2-D Float8BlockScaling.
    ("FP8_E4M3_128x128", "E4M3", (("Float32", (128, 128)),)),
    # DeepSeek-V3 activations; Transformer Engine's 1-D Float8BlockScaling.
    ("FP8_E4M3_1x128", "E4M3", (("Float32", 128),)),
)

#: Every name the formats pack registers: its categories, then its simple
#: formats, then its block-scaled formats.
FORMATS_NAMES: tuple[str, ...] = (tuple(name for name, _ in FORMATS_CATEGORIES)
                                  + tuple(row[0] for row in FORMATS_TABLE)
                                  + tuple(row[0] for row in FORMATS_BLOCK_SCALED))

#: Every pack and the names it registers: ((module, names), ...). An
#: unknown name that one of these lists is registered by importing that
#: module.
PACKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (FORMATS_MODULE, FORMATS_NAMES),
)


def pack_of(name: str) -> str | None:
    """The module of the pack that registers ``name`` (an exact str), or
    None."""
    for module, names in PACKS:
        if name in names:
            return module
    return None
