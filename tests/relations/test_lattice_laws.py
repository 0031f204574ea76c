"""The promotion laws over every pair and triple of registered dtypes.

Each test runs in a fresh interpreter (the ``fresh_interpreter`` marker),
where the registry holds only what the test registers: the built-ins, the
formats pack when it imports it, and its own extensions.  Checked for every
registered dtype (leaves, categories, compound and block-scaled dtypes
included): promote_types(a, a) is a; commutativity; every join is the
least upper bound of the order the joins define; result_type of every
triple is the same in all six orders, defined for one exactly when for
all; and in the default lattice every join is a safe cast from both
operands (the edges are lossless).
"""
import pytest

from support.relations import check_lattice_laws, join_table
from stride_weave.dtypes import (
    DType,
    SimpleDType,
    can_cast,
    declare_promotion,
    default_lattice,
    promote_types,
)

pytestmark = pytest.mark.fresh_interpreter


def test_builtins_without_the_pack():
    import sys

    assert "stride_weave.formats" not in sys.modules
    dtypes = DType.registered()
    check_lattice_laws(default_lattice(), dtypes)
    # The transitive closure restricted to the built-ins.
    assert promote_types(DType.Int8, DType.Int32) is DType.Int32
    assert promote_types(DType.Bool, DType.Int32) is DType.Int32
    assert promote_types(DType.Float32, DType.Float64) is DType.Float64
    assert {(a.name, b.name) for a, b in default_lattice().edges} == {
        ("Bool", "Int8"), ("Int8", "Int32"), ("Float32", "Float64")}


def test_importing_the_pack_changes_no_result_and_keeps_the_laws():
    before = join_table(promote_types, DType.registered())
    import stride_weave.formats  # noqa: F401

    after = join_table(promote_types, DType.registered())
    changed = {pair for pair, result in before.items()
               if result is not None and after[pair] is not result}
    assert changed == set()
    check_lattice_laws(default_lattice(), DType.registered())
    for lower, upper in default_lattice().edges:
        assert can_cast(lower, upper)


def _float(name, e, m, bias):
    from support.relations import extension_with_record
    from stride_weave.numerics import NumericInfo

    return extension_with_record(name, NumericInfo.floating(
        name.lower(), exponent_bits=e, mantissa_bits=m, bias=bias, nan_encoding="ieee"))


def _int(name, bits, signed=True):
    from support.relations import extension_with_record
    from stride_weave.numerics import NumericInfo

    return extension_with_record(name, NumericInfo.integer(bits, signed=signed))


def test_with_extension_dtypes_in_the_default_lattice():
    import stride_weave.formats as F

    int24 = _int("Int24", 24)
    float24 = _float("Float24", 8, 15, 127)
    declare_promotion(F.Int16, int24)
    declare_promotion(int24, DType.Int32)
    declare_promotion(F.BFloat16, float24)
    declare_promotion(float24, DType.Float64)
    # leaves and an extension nothing promotes to
    SimpleDType("Opaque16", bits=16, supertype=DType.Floating)
    _float("Lonely20", 6, 13, 31)
    assert promote_types(F.UInt8, int24) is int24
    assert promote_types(F.Float16, float24) is DType.Float64
    assert promote_types(F.Float16, F.BFloat16) is DType.Float32
    check_lattice_laws(default_lattice(), DType.registered())


def test_in_a_lattice_of_ones_own_with_lossy_edges():
    import stride_weave.formats as F

    int24 = _int("Int24b", 24)
    lattice = default_lattice().extend(
        [(DType.Int32, DType.Float32), (F.Int16, int24), (int24, DType.Int32),
         (F.Int64, DType.Float64)], lossy=True)
    assert lattice.promote_types(DType.Int8, F.Float16) is DType.Float32
    assert lattice.promote_types(F.Int64, DType.Float32) is DType.Float64
    check_lattice_laws(lattice, DType.registered(), lossless=False)
    # the default lattice is not changed by building one
    with pytest.raises(TypeError):
        promote_types(DType.Int8, F.Float16)
    check_lattice_laws(default_lattice(), DType.registered())
