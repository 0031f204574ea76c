"""Numeric records against hostile code: a record handed out by
stride_weave.numerics is the truth for the life of the process, whatever
Python code does to it or passes in to build one."""
import copy
import gc
import pickle

import pytest

from support import unique_name
from support.child import child_report
from stride_weave import dtypes
from stride_weave.dtypes import DType, SimpleDType
from stride_weave.numerics import NumericInfo, finfo, numeric_info, register_numeric_info


def _truth(record):
    return repr(record), hash(record)


@pytest.mark.parametrize("field", [
    "max", "min", "kind", "encoding", "bits", "signed", "exponent_bits", "eps",
    "nan_encoding", "has_nan", "__dict__", "fmt",
])
def test_object_setattr_cannot_change_a_record(field):
    record = finfo(DType.Float32)
    before = _truth(record)
    with pytest.raises((AttributeError, TypeError)):
        object.__setattr__(record, field, 1.0)
    with pytest.raises((AttributeError, TypeError)):
        object.__delattr__(record, field)
    assert _truth(finfo(DType.Float32)) == before


def test_a_record_has_no_instance_dict_and_cannot_change_class():
    record = finfo(DType.E4M3)

    class Other:
        __slots__ = ()

    with pytest.raises(TypeError):
        vars(record)
    with pytest.raises(TypeError):
        record.__class__ = Other
    with pytest.raises(TypeError):
        type.__setattr__(NumericInfo, "max", property(lambda self: 0.0))
    assert finfo(DType.E4M3).max == 448.0


def test_no_subclass_can_redefine_what_a_record_means():
    with pytest.raises(TypeError):
        type("Lying", (NumericInfo,), {"__eq__": lambda self, other: True})


def test_the_referents_of_a_record_are_immutable_values():
    record = finfo(DType.E8M0)
    for obj in gc.get_referents(record):
        assert type(obj) in (str, float, int, bool, type(None), type), obj


def test_copies_are_equal_records():
    record = finfo(DType.E5M2)
    assert copy.copy(record) == record == copy.deepcopy(record)
    assert pickle.loads(pickle.dumps(record)) == record


class _Flipping(str):
    """A str that claims to be something else whenever it is asked."""

    def __eq__(self, other):
        return True

    __hash__ = str.__hash__

    def __str__(self):
        return "lie"

    def __repr__(self):
        return "'lie'"


def test_str_subclass_arguments_are_stored_by_value():
    record = NumericInfo.floating(_Flipping("float8_x"), exponent_bits=4, mantissa_bits=3,
                                  bias=7, nan_encoding=_Flipping("all_ones"))
    assert type(record.encoding) is str and record.encoding == "float8_x"
    assert record.nan_encoding == "all_ones" and type(record.nan_encoding) is str
    with pytest.raises(ValueError, match="nan_encoding must be one of"):
        NumericInfo.floating("x", exponent_bits=4, mantissa_bits=3, bias=7,
                             nan_encoding=_Flipping("quiet"))


class _Int(int):
    def __index__(self):
        raise AssertionError("ran user code")

    def __eq__(self, other):
        raise AssertionError("ran user code")

    __hash__ = int.__hash__


def test_int_subclass_parameters_are_refused_without_running_them():
    with pytest.raises(TypeError, match="exponent_bits must be an int"):
        NumericInfo.floating("x", exponent_bits=_Int(4), mantissa_bits=3, bias=7,
                             nan_encoding="ieee")
    with pytest.raises(ValueError, match="bits must be a positive int"):
        NumericInfo.integer(_Int(8), signed=True)


def test_hostile_values_in_the_keyword_constructor_run_no_code():
    class Liar(float):
        def __eq__(self, other):
            raise AssertionError("ran user code")

        __hash__ = float.__hash__

    with pytest.raises(ValueError, match="max=.* contradicts"):
        NumericInfo(kind="float", encoding="f", bits=8, signed=True, min=-448.0,
                    max=Liar(448.0), exponent_bits=4, mantissa_bits=3, bias=7,
                    nan_encoding="all_ones")


def test_a_record_cannot_be_attached_to_an_unfinished_descriptor():
    """An __init__ that tries to attach a record to itself before it is
    registered is refused, and the descriptor stays without one."""
    seen = []

    class Eager(SimpleDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Integer)
            try:
                register_numeric_info(self, NumericInfo.integer(8, signed=True))
            except TypeError as exc:
                seen.append(exc)

    d = Eager(unique_name("Eager"))
    assert seen and "registered SimpleDType" in str(seen[0])
    with pytest.raises(LookupError):
        numeric_info(d)


# ---- a record agrees with its category, and changes no answer given ------------

def test_a_late_record_changes_no_defined_result_and_contradicts_no_category():
    x = SimpleDType(unique_name("LateRecord_"), bits=16, supertype=DType.Floating)
    before = dtypes.result_type(x, 1.5)
    assert before is x
    with pytest.raises(ValueError, match=r"kind 'int' does not agree with the category "
                                         rf"of {x.name} \(under Floating\)"):
        register_numeric_info(x, NumericInfo.integer(16, signed=True))
    with pytest.raises(LookupError):
        numeric_info(x)                         # the registry is unchanged
    assert dtypes.result_type(x, 1.5) is before
    assert not (dtypes.isdtype(x, DType.Floating) and dtypes.isdtype(x, "integral"))


_F16 = dict(exponent_bits=5, mantissa_bits=10, bias=15, nan_encoding="ieee")


@pytest.mark.parametrize("supertype, record", [
    ("Floating", NumericInfo.integer(16, signed=False)),
    ("Floating", NumericInfo.floating("c16", complex=True, exponent_bits=2,
                                      mantissa_bits=5, bias=1, nan_encoding="ieee")),
    ("Integer", NumericInfo.floating("f16", **_F16)),
    ("Integer", NumericInfo.boolean(16)),
    ("Any", NumericInfo.integer(16, signed=True)),
    ("Any", NumericInfo.floating("f16", **_F16)),
])
def test_a_record_contradicting_the_category_is_refused(supertype, record):
    d = SimpleDType(unique_name("Contra"), bits=16, supertype=DType.from_name(supertype))
    with pytest.raises(ValueError, match=rf"kind '{record.kind}' does not agree with the "
                                         rf"category of {d.name} \(under {supertype}\)"):
        register_numeric_info(d, record)
    with pytest.raises(ValueError, match="does not agree with the category"):
        SimpleDType(unique_name("Contra"), bits=16, supertype=DType.from_name(supertype),
                    numeric_info=record)
    with pytest.raises(LookupError):
        numeric_info(d)


@pytest.mark.parametrize("supertype, kind, record", [
    ("Integer", "signed integer", NumericInfo.integer(16, signed=True)),
    ("Integer", "unsigned integer", NumericInfo.integer(16, signed=True)),
    ("Any", "bool", NumericInfo.boolean(16)),
    ("Any", "numeric", NumericInfo.floating("c16", complex=True, exponent_bits=2,
                                            mantissa_bits=5, bias=1, nan_encoding="ieee")),
])
def test_an_isdtype_answer_a_record_could_change_settles_the_dtype(supertype, kind, record):
    d = SimpleDType(unique_name("Settled"), bits=16, supertype=DType.from_name(supertype))
    before = dtypes.isdtype(d, kind)
    with pytest.raises(ValueError, match="has no numeric record for good"):
        register_numeric_info(d, record)
    assert dtypes.isdtype(d, kind) is before
    assert dtypes.isdtype(d, (kind, "real floating")) is before


def test_answers_no_record_could_change_leave_the_record_to_come():
    """Kinds a record of the category's kind has anyway, the category
    itself and weak scalars settle nothing."""
    f = SimpleDType(unique_name("Open"), bits=16, supertype=DType.Floating)
    i = SimpleDType(unique_name("Open"), bits=16, supertype=DType.Integer)
    assert dtypes.isdtype(f, "real floating") and dtypes.isdtype(f, DType.Floating)
    assert dtypes.isdtype(i, "integral") and dtypes.isdtype(i, "numeric")
    assert dtypes.result_type(f, 1.5) is f and dtypes.result_type(i, 1) is i
    register_numeric_info(f, NumericInfo.floating("f16", **_F16))
    register_numeric_info(i, NumericInfo.integer(16, signed=False))
    assert dtypes.isdtype(f, "real floating") and dtypes.result_type(f, 1.5) is f
    assert dtypes.isdtype(i, "integral") and dtypes.result_type(i, 1) is i


def test_an_answer_racing_the_first_record_is_the_answer_after_it():
    """Threads ask can_cast and isdtype while another attaches the record:
    whichever comes first, every answer is the final one."""
    import threading

    for _ in range(20):
        d = SimpleDType(unique_name("Race"), bits=16, supertype=DType.Integer)
        record = NumericInfo.integer(16, signed=True)
        start = threading.Barrier(3)
        answers = []

        def ask():
            start.wait()
            answers.append((dtypes.isdtype(d, "signed integer"),
                            dtypes.can_cast(DType.Int8, d)))

        def attach():
            start.wait()
            try:
                register_numeric_info(d, record)
            except ValueError:
                pass

        threads = [threading.Thread(target=f) for f in (ask, ask, attach)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        final = (dtypes.isdtype(d, "signed integer"), dtypes.can_cast(DType.Int8, d))
        assert final in ((True, True), (False, False))
        assert set(answers) == {final}


# ---- only the defining module gives the first record ----------------------------

def test_code_of_another_module_cannot_give_the_first_record():
    d = SimpleDType(unique_name("Owned"), bits=16, supertype=DType.Floating)
    record = NumericInfo.floating("f16", **_F16)
    elsewhere = {"__name__": "someone_else"}
    exec("def give(register, d, r):\n    register(d, r)\n", elsewhere)
    with pytest.raises(ValueError, match=rf"only code of the module that defined {d.name} "
                                         rf"\('{__name__}'\) may give it its first record, "
                                         r"got code of 'someone_else'"):
        elsewhere["give"](register_numeric_info, d, record)
    with pytest.raises(LookupError):
        numeric_info(d)
    register_numeric_info(d, record)                        # the defining module
    elsewhere["give"](register_numeric_info, d, record)     # the same again: harmless
    assert numeric_info(d) is record


def test_a_record_given_at_construction_is_there_before_registration():
    record = NumericInfo.floating("f16", **_F16)
    d = SimpleDType(unique_name("AtOnce"), bits=16, supertype=DType.Floating,
                    numeric_info=record)
    assert numeric_info(d) is record
    assert SimpleDType.ensure(d.name, bits=16, supertype=DType.Floating,
                              numeric_info=record) is d
    with pytest.raises(ValueError, match=rf"^SimpleDType.ensure\(\): name '{d.name}' is "
                                         r"already registered by SimpleDType in module "
                                         rf"'{__name__}' with a different numeric record: "
                                         r"numeric record encoding: registered 'f16', "
                                         r"this definition has 'g16'; nothing was "
                                         r"registered$"):
        SimpleDType.ensure(d.name, bits=16, supertype=DType.Floating,
                           numeric_info=NumericInfo.floating("g16", **_F16))
    with pytest.raises(TypeError, match="numeric_info must be a NumericInfo"):
        SimpleDType(unique_name("AtOnce"), bits=16, supertype=DType.Floating,
                    numeric_info="f16")


def test_a_hook_finds_no_pack_format_without_its_record():
    """A profile hook that, at every event of the pack's import, tries to
    give every SimpleDType in the running frame a record of its own."""
    report = child_report("""
        import json, sys
        from stride_weave.dtypes import SimpleDType
        from stride_weave.numerics import NumericInfo, register_numeric_info, numeric_info
        seen = set()

        def hook(frame, event, arg):
            for value in list(frame.f_locals.values()):
                if type(value) is SimpleDType and value.name not in seen:
                    seen.add(value.name)
                    for signed in (True, False):   # one differs from the pack's
                        try:
                            register_numeric_info(value, NumericInfo.integer(value.bits,
                                                                             signed=signed))
                        except ValueError:
                            pass

        sys.setprofile(hook)
        try:
            import stride_weave.formats as formats
        finally:
            sys.setprofile(None)
        print(json.dumps({"seen": sorted(seen),
                          "encodings": [numeric_info(d).encoding for d in formats.FORMATS]}))
    """)
    from stride_weave import formats
    assert set(report["seen"]) >= {d.name for d in formats.FORMATS}
    assert report["encodings"] == [numeric_info(d).encoding for d in formats.FORMATS]


def test_a_thread_cannot_give_the_pack_formats_records_while_it_imports():
    report = child_report("""
        import json, threading
        from stride_weave.dtypes import DType
        from stride_weave.numerics import NumericInfo, register_numeric_info, numeric_info
        from stride_weave import _packs
        names = [row[0] for row in _packs.FORMATS_TABLE]
        done = threading.Event()

        def thief():
            while not done.is_set():
                for name in names:
                    for signed in (True, False):   # one differs from the pack's
                        try:
                            d = DType.from_name(name)
                            register_numeric_info(d, NumericInfo.integer(d.bits, signed=signed))
                        except (LookupError, ValueError):
                            pass

        t = threading.Thread(target=thief)
        t.start()
        import stride_weave.formats as formats
        done.set()
        t.join()
        print(json.dumps({
                          "encodings": [numeric_info(d).encoding for d in formats.FORMATS]}))
    """)
    from stride_weave import formats
    assert report["encodings"] == [numeric_info(d).encoding for d in formats.FORMATS]


def test_the_formats_pack_records_cannot_be_taken_before_the_pack_attaches_them():
    report = child_report("""
        import json, sys
        from stride_weave.numerics import NumericInfo, register_numeric_info, numeric_info
        taken = []

        def hook(frame, event, arg):
            if (event == "c_call" and getattr(arg, "__name__", "") == "register_numeric_info"
                    and frame.f_code.co_name == "_register" and not taken):
                dtype = frame.f_locals["dtype"]
                try:
                    register_numeric_info(dtype, NumericInfo.integer(dtype.bits, signed=False))
                    taken.append(dtype.name)
                except ValueError:
                    pass

        sys.setprofile(hook)
        try:
            import stride_weave.formats
        except ValueError:
            pass
        finally:
            sys.setprofile(None)
        from stride_weave.dtypes import DType
        try:
            f16 = DType.from_name("Float16")
        except LookupError:
            encoding = None
        else:
            encoding = numeric_info(f16).encoding
        print(json.dumps({"encoding": encoding}))
    """)
    assert report["encoding"] in (None, "ieee754_binary16")
