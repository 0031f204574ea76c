"""Helpers for the tests of kinds, casting and promotion (tests/relations/).

* value sets: `ValueSet`, the values of a format as a set of finite floats
  (or ints) plus its special values; `decode_all` decodes every code of a
  numpy / ml_dtypes type; `enumerate_record` lists every value a numeric
  record describes, from its parameters alone (an independent reference:
  it shares no code with the C core);
* `GROUND_TRUTH`: the formats of at most 16 bits that numpy or ml_dtypes can
  decode, each with the dtype that stands for it (built-in, formats pack,
  or an extension registered here with a record, for the ml_dtypes formats
  stride-weave has no dtype for);
* lattice checks: `check_lattice_laws` (idempotent, commutative,
  associative, least upper bounds) over a set of dtypes.
"""
import itertools
import math

from stride_weave.dtypes import (
    DType,
    PromotionError,
    SimpleDType,
    can_cast,
)
from stride_weave.numerics import NumericInfo, register_numeric_info


class ValueSet:
    """The values of a format: finite values (-0.0 equals 0.0: by value),
    and whether it has +inf, -inf and NaN."""

    def __init__(self, finite, posinf=False, neginf=False, nan=False):
        self.finite = frozenset(finite)
        self.posinf, self.neginf, self.nan = posinf, neginf, nan

    @classmethod
    def of(cls, values):
        finite, posinf, neginf, nan = set(), False, False, False
        for x in values:
            if isinstance(x, float) and math.isnan(x):
                nan = True
            elif x == math.inf:
                posinf = True
            elif x == -math.inf:
                neginf = True
            else:
                finite.add(x)
        return cls(finite, posinf, neginf, nan)

    def within(self, other):
        """Every value of self is a value of other."""
        return (self.finite <= other.finite
                and (not self.posinf or other.posinf)
                and (not self.neginf or other.neginf)
                and (not self.nan or other.nan))


def decode_all(np_type, bits):
    """Every value of the numpy / ml_dtypes type `np_type` whose codes are
    `bits` wide (stored in one or two bytes), as a ValueSet."""
    import numpy as np

    if np_type is np.bool_:
        return ValueSet.of([0, 1])
    storage = np.uint16 if np.dtype(np_type).itemsize == 2 else np.uint8
    codes = np.arange(2 ** bits, dtype=storage)
    values = codes.view(np_type)
    kind = np.dtype(np_type).kind
    if kind in "iu" or np_type.__name__.startswith(("int", "uint")):
        return ValueSet.of(int(v) for v in values.astype(np.int64))
    with np.errstate(invalid="ignore"):
        return ValueSet.of(values.astype(np.float64).tolist())


def enumerate_record(record):
    """Every value the numeric record `record` describes, from its
    parameters, as a ValueSet (integers and booleans as ints)."""
    if record.kind == "bool":
        return ValueSet.of([0, 1])
    if record.kind == "int":
        return ValueSet.of(range(record.min, record.max + 1))
    e, m, bias = record.exponent_bits, record.mantissa_bits, record.bias
    nan, signed = record.nan_encoding, record.signed
    values = []
    for sign in ((1, -1) if signed else (1,)):
        for field in range(2 ** e):
            for fraction in range(2 ** m):
                top = field == 2 ** e - 1
                if nan == "ieee" and top:
                    values.append(sign * math.inf if fraction == 0 else math.nan)
                    continue
                if nan == "all_ones" and top and fraction == 2 ** m - 1:
                    values.append(math.nan)
                    continue
                if nan == "negative_zero" and sign == -1 and field == 0 and fraction == 0:
                    values.append(math.nan)
                    continue
                if field == 0 and (m > 0 or signed):
                    # zero and the subnormals (a signed format without
                    # mantissa bits: zero alone)
                    value = math.ldexp(fraction, 1 - bias - m)
                elif field == 0:
                    value = math.ldexp(1.0, -bias)     # e8m0: no zero
                else:
                    value = math.ldexp(2 ** m + fraction, field - bias - m)
                values.append(sign * value)
    return ValueSet.of(values)


# --- the ground truth formats ----------------------------------------------

_floating = NumericInfo.floating

# ml_dtypes formats with no built-in or pack dtype: name -> (record, bits)
ML_DTYPES_EXTRAS = {
    "float8_e5m3fnu": (_floating("float8_e5m3fnu", exponent_bits=5, mantissa_bits=3,
                                 bias=15, nan_encoding="all_ones", signed=False), 8),
    "float8_e3m4": (_floating("float8_e3m4", exponent_bits=3, mantissa_bits=4, bias=3,
                              nan_encoding="ieee"), 8),
    "float8_e4m3": (_floating("float8_e4m3", exponent_bits=4, mantissa_bits=3, bias=7,
                              nan_encoding="ieee"), 8),
    "float8_e4m3b11fnuz": (_floating("float8_e4m3b11fnuz", exponent_bits=4,
                                     mantissa_bits=3, bias=11,
                                     nan_encoding="negative_zero"), 8),
    "int2": (NumericInfo.integer(2, signed=True), 2),
    "uint2": (NumericInfo.integer(2, signed=False), 2),
    "int1": (NumericInfo.integer(1, signed=True), 1),
    "uint1": (NumericInfo.integer(1, signed=False), 1),
}


def extension_with_record(name, record, supertype=None):
    """The extension SimpleDType `name` with `record` (registered once per
    process: ensure() finds it again)."""
    if supertype is None:
        # The category a record of each kind agrees with.
        supertype = {"int": DType.Integer, "float": DType.Floating}.get(record.kind, DType.Any)
    d = SimpleDType.ensure(name, bits=record.bits, supertype=supertype, numeric_info=record)
    return d


def ground_truth_formats():
    """[(label, dtype, numpy type, code bits)] for every format of at most 16
    bits that numpy or ml_dtypes decodes."""
    import ml_dtypes
    import numpy as np

    import stride_weave.formats as F

    table = [
        ("bool", DType.Bool, np.bool_, 1),
        ("int8", DType.Int8, np.int8, 8),
        ("uint8", F.UInt8, np.uint8, 8),
        ("int16", F.Int16, np.int16, 16),
        ("uint16", F.UInt16, np.uint16, 16),
        ("float16", F.Float16, np.float16, 16),
        ("bfloat16", F.BFloat16, ml_dtypes.bfloat16, 16),
        ("float8_e4m3fn", DType.E4M3, ml_dtypes.float8_e4m3fn, 8),
        ("float8_e5m2", DType.E5M2, ml_dtypes.float8_e5m2, 8),
        ("float8_e8m0fnu", DType.E8M0, ml_dtypes.float8_e8m0fnu, 8),
        ("float6_e3m2fn", DType.E3M2, ml_dtypes.float6_e3m2fn, 6),
        ("float6_e2m3fn", DType.E2M3, ml_dtypes.float6_e2m3fn, 6),
        ("float4_e2m1fn", DType.E2M1, ml_dtypes.float4_e2m1fn, 4),
        ("float8_e4m3fnuz", F.E4M3FNUZ, ml_dtypes.float8_e4m3fnuz, 8),
        ("float8_e5m2fnuz", F.E5M2FNUZ, ml_dtypes.float8_e5m2fnuz, 8),
        ("int4", F.Int4, ml_dtypes.int4, 4),
        ("uint4", F.UInt4, ml_dtypes.uint4, 4),
    ]
    for label, (record, bits) in ML_DTYPES_EXTRAS.items():
        np_type = getattr(ml_dtypes, label, None)     # newer ml_dtypes only
        if np_type is not None:
            d = extension_with_record(f"GroundTruth_{label}", record)
            table.append((label, d, np_type, bits))
    return table


# --- lattice laws ------------------------------------------------------------


def join_or_none(promote, a, b):
    """promote(a, b), or None for a PromotionError."""
    try:
        return promote(a, b)
    except PromotionError:
        return None


def join_table(promote, dtypes):
    """{(a, b): join or None} over every ordered pair of `dtypes`."""
    return {(a, b): join_or_none(promote, a, b)
            for a in dtypes for b in dtypes}


def check_lattice_laws(lattice, dtypes, *, triples=True, lossless=True):
    """Assert the promotion laws of `lattice` over `dtypes`: idempotent,
    commutative, every join the least upper bound of the order the joins
    define, result_type independent of the order of every triple (defined
    for one order exactly when for all), and (with `lossless`) every join a
    safe cast from both operands."""
    dtypes = list(dtypes)
    table = join_table(lattice.promote_types, dtypes)
    for a in dtypes:
        assert table[a, a] is a, a
    for a, b in itertools.combinations(dtypes, 2):
        assert table[a, b] is table[b, a], (a, b)
    # the order the joins define: a <= c when join(a, c) is c
    above = {a: {c for c in dtypes if table[a, c] is c} for a in dtypes}
    for a, b in itertools.combinations(dtypes, 2):
        common = above[a] & above[b]
        j = table[a, b]
        if j is None:
            assert not common, (a, b, common)
            continue
        assert j in common, (a, b, j)
        assert common <= above[j], (a, b, j)   # the least of them
        if lossless:
            assert can_cast(a, j) and can_cast(b, j), (a, b, j)
    if not triples:
        return table
    for triple in itertools.combinations(dtypes, 3):
        results = set()
        for order in itertools.permutations(triple):
            try:
                results.add(lattice.result_type(*order))
            except PromotionError:
                results.add(None)
        assert len(results) == 1, (triple, results)
    return table
