"""Refusals that show what they refuse, attacked with what they show.

A refusal names the argument, what was expected and what was given
(docs/guarantees.md).  Showing what was given must neither run code of it
(a ``str``/``int`` subclass's ``__repr__`` is user code: support.hostile's
tripwires record it) nor fail for its size: an ``int`` beyond
``sys.get_int_max_str_digits()`` decimal digits has no decimal ``repr``,
and a message that tries one raises the interpreter's own ValueError about
the digit limit instead of the refusal (for a pickle, "malformed pickle
record", which it is not).  Such ints are shown in hex, as a structure
shows them.

Also here: a pickle record of a deep category chain made while allocations
fail releases everything it allocated (in a child: ``_testcapi``'s
allocation hooks are process-wide).
"""
import functools
import os
import pickle

import pytest

import support
from support import capi as _capi
from support import registry_unchanged, unique_name
from support.hostile import tripwire, tripwire_ints
from stride_weave import _dtypes
from stride_weave.dtypes import (
    BlockScaledDType,
    DType,
    Level,
    LevelExtent,
    SimpleDType,
    default_lattice,
)
from stride_weave.numerics import (
    NumericInfo,
    finfo,
    iinfo,
    numeric_info,
    register_numeric_info,
)

import _hostile_ops as hostile

HERE = os.path.dirname(os.path.abspath(__file__))
child_report = functools.partial(support.child_report, path=(HERE,))

#: An int with more decimal digits than the default limit (4300) allows.
HUGE = 10 ** 5000
HUGE_HEX = hex(HUGE)


def _e4m1(bias=7):
    return NumericInfo.floating("e4m1_like", exponent_bits=4, mantissa_bits=1, bias=bias,
                                nan_encoding="none")


# ---- NumericInfo and the record queries run no code of their arguments ---------------

def _numeric_info_calls(Codes, word):
    """(label, call) pairs, each refusing a tripwire argument."""
    return [
        ("floating bias", lambda: NumericInfo.floating(
            "x", exponent_bits=4, mantissa_bits=1, bias=Codes.SEVEN, nan_encoding="none")),
        ("floating exponent_bits", lambda: NumericInfo.floating(
            "x", exponent_bits=Codes.FOUR, mantissa_bits=1, bias=7, nan_encoding="none")),
        ("floating nan_encoding", lambda: NumericInfo.floating(
            "x", exponent_bits=4, mantissa_bits=1, bias=7, nan_encoding=word)),
        ("floating signed", lambda: NumericInfo.floating(
            "x", exponent_bits=4, mantissa_bits=1, bias=7, nan_encoding="none",
            signed=Codes.ONE)),
        ("integer bits", lambda: NumericInfo.integer(Codes.EIGHT, signed=True)),
        ("boolean bits", lambda: NumericInfo.boolean(Codes.EIGHT)),
        ("keyword kind", lambda: NumericInfo(kind=word, encoding="x", bits=8, signed=True,
                                             min=-128, max=127)),
        ("keyword min", lambda: NumericInfo(kind="int", encoding="x", bits=8, signed=True,
                                            min=Codes.SEVEN, max=127)),
        ("keyword bias of an int", lambda: NumericInfo(kind="int", encoding="x", bits=8,
                                                       signed=True, min=-128, max=127,
                                                       bias=Codes.SEVEN)),
        ("pickle's reconstructor", lambda: NumericInfo._from_params(
            "float", "x", 6, True, 4, 1, Codes.SEVEN, "none")),
        ("numeric_info", lambda: numeric_info(word)),
        ("finfo", lambda: finfo(word)),
        ("iinfo", lambda: iinfo(Codes.EIGHT)),
        ("register_numeric_info dtype", lambda: register_numeric_info(word, _e4m1())),
        ("register_numeric_info record", lambda: register_numeric_info(DType.E4M3, word)),
    ]


def test_numeric_info_refusals_run_no_method_of_the_argument():
    Codes, int_calls = tripwire_ints(ONE=1, FOUR=4, SEVEN=7, EIGHT=8)
    word, str_calls = tripwire("bogus")
    for label, call in _numeric_info_calls(Codes, word):
        with pytest.raises((TypeError, ValueError)) as info:
            call()
        assert int_calls == [] and str_calls == [], (label, int_calls, str_calls)
        # the subclass is named by its type, never shown as the value it holds
        assert "an object of type Tripwire" in str(info.value), (label, str(info.value))


def test_numeric_info_refusals_still_show_exact_values():
    with pytest.raises(TypeError, match=r"exponent_bits must be an int, got 4\.0$"):
        NumericInfo.floating("x", exponent_bits=4.0, mantissa_bits=1, bias=7,
                             nan_encoding="none")
    with pytest.raises(ValueError, match=r"nan_encoding must be one of .*, got 'quiet'$"):
        NumericInfo.floating("x", exponent_bits=4, mantissa_bits=1, bias=7,
                             nan_encoding="quiet")
    with pytest.raises(TypeError, match=r"^finfo: dtype must be a registered SimpleDType, "
                                        r"got DTypeCategory\('Floating'\)$"):
        finfo(DType.Floating)


@pytest.mark.parametrize("label, call, message", [
    ("floating bias", lambda: NumericInfo.floating(
        "x", exponent_bits=4, mantissa_bits=1, bias=HUGE, nan_encoding="none"),
     f"NumericInfo.floating: bias must be between -1048576 and 1048576, got {HUGE_HEX}"),
    ("boolean bits", lambda: NumericInfo.boolean(HUGE),
     f"NumericInfo.boolean: bits must be a positive int, got {HUGE_HEX}"),
    ("integer bits", lambda: NumericInfo.integer(-HUGE, signed=True),
     f"NumericInfo.integer: bits must be a positive int, got -{HUGE_HEX}"),
    ("keyword min", lambda: NumericInfo(kind="int", encoding="x", bits=8, signed=True,
                                        min=HUGE, max=127),
     f"NumericInfo: min={HUGE_HEX} contradicts the format's parameters, which give -128"),
    ("pickle's reconstructor", lambda: NumericInfo._from_params(
        "float", "x", 6, True, 4, 1, HUGE, "none"),
     f"NumericInfo._from_params: bias must be between -1048576 and 1048576, got {HUGE_HEX}"),
])
def test_an_int_beyond_the_digit_limit_is_refused_in_hex(label, call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == message, label


# ---- pickles ---------------------------------------------------------------------------

def _with_field(d, index, value):
    record = d.__reduce__()[1][0]
    fields = list(record[-1][0])
    fields[index] = value
    return record[:-1] + ((tuple(fields),),), tuple(fields)


@pytest.mark.parametrize("index, field", [(6, "bias"), (2, "bits")])
@pytest.mark.parametrize("sign", [1, -1])
def test_a_huge_numeric_record_field_is_a_difference_not_a_malformed_record(index, field,
                                                                           sign):
    d = SimpleDType(unique_name("RVHuge"), bits=6, supertype=DType.Floating,
                    numeric_info=_e4m1())
    crafted, fields = _with_field(d, index, sign * HUGE)
    registered = 7 if field == "bias" else 6
    expected = (f"cannot unpickle descriptor {d.name!r}: the pickled numeric record "
                f"differs from the one registered in this process: numeric record "
                f"{field}: registered {registered}, pickle has "
                f"{'-' if sign < 0 else ''}{HUGE_HEX}")
    with registry_unchanged():
        with pytest.raises(ValueError) as record_form:
            _dtypes._reconstruct(crafted)
        with pytest.raises(ValueError) as structure_form:
            _dtypes._reconstruct(d.name, d.structure(), None, (fields,))
    assert str(record_form.value) == expected
    assert str(structure_form.value) == expected


def test_a_huge_field_stated_for_a_dtype_without_a_record_is_shown_in_hex():
    d = SimpleDType(unique_name("RVNoRecord"), bits=6, supertype=DType.Floating)
    _, fields = _with_field(SimpleDType(unique_name("RVSender"), bits=6,
                                        supertype=DType.Floating, numeric_info=_e4m1()),
                            6, HUGE)
    with registry_unchanged():
        with pytest.raises(ValueError) as info:
            _dtypes._reconstruct(d.name, d.structure(), None, (fields,))
    assert str(info.value).endswith(
        "numeric record: registered none yet, pickle has ('float', 'e4m1_like', 6, True, "
        f"4, 1, {HUGE_HEX}, 'none')")


def test_a_lattice_pickle_of_a_huge_version_names_the_version():
    with pytest.raises(ValueError) as info:
        _dtypes._reconstruct_lattice(HUGE, (), (), False, False, (None,) * 4, False, ())
    assert str(info.value) == (
        "_reconstruct_lattice: this stride_weave reads lattice pickles of version 1, got "
        f"version {HUGE_HEX} (a pickle of a newer release?)")
    # the usual case reads as before
    payload = pickle.dumps(default_lattice())
    assert pickle.loads(payload).is_default


# ---- blocks ----------------------------------------------------------------------------

def test_an_n_d_block_after_level_0_is_refused_with_its_entries_in_hex():
    wide = 2 ** 70
    with registry_unchanged():
        with pytest.raises(ValueError) as info:
            BlockScaledDType(unique_name("RVLate"), element=DType.E2M1,
                             levels=(Level(DType.E8M0, 32), Level(DType.E8M0, (16, HUGE))))
    assert str(info.value) == (
        "BlockScaledDType.__init__(): only levels[0] may have an N-D (tuple) block, got "
        f"(16, {HUGE_HEX}) at levels[1]")
    with registry_unchanged():
        with pytest.raises(ValueError) as info:
            BlockScaledDType(unique_name("RVAfter"), element=DType.E2M1,
                             levels=(Level(DType.E8M0, (16, HUGE)), Level(DType.E8M0, wide)))
    assert str(info.value) == (
        f"BlockScaledDType.__init__(): levels[0] has the N-D block (16, {HUGE_HEX}), so "
        f"every later level must be Whole, got block={hex(wide)} at levels[1]")


def test_level_extent_refuses_huge_negative_arguments_in_hex():
    with pytest.raises(ValueError) as info:
        LevelExtent(-HUGE, 32)
    assert str(info.value).endswith(f"level must be a non-negative int, got -{HUGE_HEX}")
    with pytest.raises(ValueError) as info:
        LevelExtent(0, -HUGE)
    assert str(info.value).endswith(f"extent must be a positive int or Whole, got -{HUGE_HEX}")


def test_the_c_api_overflow_of_a_huge_block_stays_an_overflow_error():
    if _capi.compiler() is None:
        pytest.skip(_capi.no_compiler_reason())
    probe = _capi.load("probe")
    d = BlockScaledDType(unique_name("RVCapiHuge"), element=DType.E2M1,
                         levels=[Level(DType.E8M0, HUGE)])
    for call, what in ((lambda: probe.level_block(d, 0), "SW_DType_LevelBlock: the level block"),
                       (lambda: probe.level_block_shape(d, 0, 1),
                        "SW_DType_LevelBlockShape: the level block extent")):
        with pytest.raises(OverflowError) as info:
            call()
        assert str(info.value) == (f"{what} of {d!r} ({HUGE_HEX}) does not fit in a "
                                   "Py_ssize_t")


# ---- a record made while allocations fail ----------------------------------------------

_RECORD_UNDER_FAILING_ALLOCATIONS = """
import gc, json, sys, _testcapi
from stride_weave.dtypes import DType, DTypeCategory, SimpleDType

# A chain deep enough that its record (over 256 items) is never cached, so
# every __reduce__ makes it again, growing its stack of categories 4 times.
chain = [DType.Floating]
for i in range(100):
    chain.append(DTypeCategory("RVChain%d" % i, supertype=chain[-1]))
deep = SimpleDType("RVDeep", bits=16, supertype=chain[-1])
deep.__reduce__()

def attempt(index):
    sys._getframe()
    _testcapi.set_nomemory(index, index + 1)
    try:
        deep.__reduce__()
    except MemoryError:
        return True
    finally:
        _testcapi.remove_mem_hooks()
    return False

failing = [i for i in range(600) if attempt(i)]
growth = {}
for index in failing:
    for _ in range(3):
        attempt(index)
    gc.collect()
    before = sys.getallocatedblocks()
    for _ in range(100):
        attempt(index)
    gc.collect()
    grown = sys.getallocatedblocks() - before
    if grown > 20:
        growth[index] = grown
print(json.dumps({"failing": len(failing), "growth": growth}))
"""


@pytest.mark.skipif(hostile.nomemory_unusable() is not None,
                    reason=str(hostile.nomemory_unusable()))
def test_a_deep_record_made_while_allocations_fail_releases_what_it_allocated():
    report = child_report(_RECORD_UNDER_FAILING_ALLOCATIONS, timeout=600)
    assert report["failing"] > 10, report     # the sweep made allocations fail
    assert report["growth"] == {}, report     # 1 leaked block per attempt: 100
