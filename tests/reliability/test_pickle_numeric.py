"""A numeric record is part of a descriptor's identity across processes
(docs/pickling.md, "The numeric records"): a pickle states the records of
the simple dtypes it defines, and a process whose registered definition
has another record (or none) refuses it with the ValueError of a structure
difference, naming the first differing field; ``ensure()``, pickles of
every protocol and worker pools apply the one rule.

Senders are child processes (support.child) that register the same names
and structures with the records a test gives them.  Payloads made by the
release before records were stated load as they always did.
"""
import functools
import json
import multiprocessing
import os
import pickle
import threading
from concurrent.futures import ProcessPoolExecutor

import pytest

import support
from stride_weave import _dtypes, workers
from stride_weave.dtypes import BlockScaledDType, DType, Level, SimpleDType
from stride_weave.numerics import NumericInfo, numeric_info, register_numeric_info
from support import registry_unchanged, unique_name
from support.defs import PlanePair

from _fuzz_oracle import HostileInt, HostileStr, HostileTuple, armed

HERE = os.path.dirname(os.path.abspath(__file__))
child_report = functools.partial(support.child_report, path=(HERE,))
PROTOCOLS = range(pickle.HIGHEST_PROTOCOL + 1)


def _record(bias, encoding="e4m1_like"):
    return NumericInfo.floating(encoding, exponent_bits=4, mantissa_bits=1, bias=bias,
                                nan_encoding="none")


def _fields(bias, encoding="e4m1_like"):
    return ("float", encoding, 6, True, 4, 1, bias, "none")


#: A sender: registers, under the names it is given, an element with the
#: record it is given (None: none), a scale, a block-scaled format of the
#: two and a compound of Float32 and the element, and prints their pickles
#: for every protocol.
_SENDER = """
    import json, pickle, sys
    from stride_weave.dtypes import BlockScaledDType, DType, Level, SimpleDType
    from stride_weave.numerics import NumericInfo
    from support.defs import PlanePair

    names, element, scale = json.loads(sys.argv[1])

    def record(spec):
        return None if spec is None else NumericInfo.floating(
            spec[0], exponent_bits=spec[1], mantissa_bits=1, bias=spec[2],
            nan_encoding="none")

    e = SimpleDType(names["element"], bits=6, supertype=DType.Floating,
                    numeric_info=record(element))
    s = SimpleDType(names["scale"], bits=6, supertype=DType.Floating,
                    numeric_info=record(scale))
    made = {"element": e, "scale": s,
            "block": BlockScaledDType(names["block"], element=e,
                                      levels=(Level(s, 32), Level(DType.Float32, 64))),
            "pair": PlanePair(names["pair"], planes=(DType.Float32, e))}
    print(json.dumps({key: [pickle.dumps(d, protocol=p).hex()
                            for p in range(pickle.HIGHEST_PROTOCOL + 1)]
                      for key, d in made.items()}))
"""


def _names():
    return {key: unique_name("NR" + key.capitalize())
            for key in ("element", "scale", "block", "pair")}


def _send(names, element=("e4m1_like", 4, 7), scale=("scale_like", 4, 7)):
    """The pickles, per protocol, of a sender's definitions under `names`,
    its element and scale having the records `element` and `scale`
    ((encoding, exponent_bits, bias), or None)."""
    report = child_report(_SENDER, json.dumps([names, element, scale]))
    return {key: [bytes.fromhex(h) for h in payloads] for key, payloads in report.items()}


def _define(names, element, scale=_record(7, "scale_like")):
    """This process's definitions under `names` (the sender's structures)."""
    e = SimpleDType(names["element"], bits=6, supertype=DType.Floating, numeric_info=element)
    s = SimpleDType(names["scale"], bits=6, supertype=DType.Floating, numeric_info=scale)
    block = BlockScaledDType(names["block"], element=e,
                             levels=(Level(s, 32), Level(DType.Float32, 64)))
    pair = PlanePair(names["pair"], planes=(DType.Float32, e))
    return {"element": e, "scale": s, "block": block, "pair": pair}


def _refusals(payloads):
    """The message of each payload's load, which must be a ValueError that
    leaves the registry as it was; all protocols must agree."""
    messages = set()
    for data in payloads:
        with registry_unchanged():
            with pytest.raises(ValueError) as info:
                pickle.loads(data)
        messages.add(str(info.value))
    assert len(messages) == 1, messages
    return messages.pop()


def _prefix(name, where=""):
    return (f"cannot unpickle descriptor {name!r}: the pickled numeric record{where} "
            f"differs from the one registered in this process: ")


# ---- the same definition, another meaning ---------------------------------------

def test_the_same_record_loads_as_the_registered_identity():
    names = _names()
    mine = _define(names, _record(7))
    sent = _send(names)
    for key, d in mine.items():
        for data in sent[key]:
            assert pickle.loads(data) is d, (key, data)


@pytest.mark.parametrize("sender, field, ours, theirs", [
    (("e4m1_like", 4, 7), "bias", "8", "7"),
    (("e4m1_other", 4, 8), "encoding", "'e4m1_like'", "'e4m1_other'"),
    # the first field that differs, in the order of the canonical fields
    (("e4m1_other", 4, 7), "encoding", "'e4m1_like'", "'e4m1_other'"),
])
def test_a_differing_record_is_refused_naming_the_first_field(sender, field, ours, theirs):
    names = _names()
    mine = _define(names, _record(8))
    sent = _send(names, element=sender)
    tail = f"numeric record {field}: registered {ours}, pickle has {theirs}"
    e = names["element"]
    assert _refusals(sent["element"]) == _prefix(e) + tail
    assert _refusals(sent["block"]) == _prefix(names["block"], f" of its element {e!r}") + tail
    assert _refusals(sent["pair"]) == _prefix(names["pair"], f" of its plane 1, {e!r}") + tail
    assert numeric_info(mine["element"]) == _record(8)      # nothing changed here


def test_a_differing_scale_is_named_by_its_level():
    names = _names()
    _define(names, _record(7), scale=_record(9, "scale_like"))
    sent = _send(names)
    s = names["scale"]
    assert _refusals(sent["block"]) == (
        _prefix(names["block"], f" of the scale of its level 0, {s!r}")
        + "numeric record bias: registered 9, pickle has 7")


def test_the_element_is_compared_before_the_scales():
    names = _names()
    _define(names, _record(8), scale=_record(9, "scale_like"))
    sent = _send(names)
    assert _refusals(sent["block"]).startswith(
        _prefix(names["block"], f" of its element {names['element']!r}"))


def test_a_record_on_one_side_only_is_a_difference():
    names = _names()
    _define(names, _record(8))
    sent = _send(names, element=None)
    assert _refusals(sent["element"]) == _prefix(names["element"]) + (
        f"numeric record: registered {_fields(8)!r}, pickle has none")

    names = _names()
    mine = _define(names, None)
    pickle.dumps(mine["element"])       # settled here: it keeps no record
    sent = _send(names)
    assert _refusals(sent["element"]) == _prefix(names["element"]) + (
        f"numeric record: registered none, pickle has {_fields(7)!r}")


def test_a_receiver_without_a_record_yet_refuses_and_stays_open():
    # Loading does not settle it: once its defining module (this one)
    # attaches the same record, the same pickle loads.
    names = _names()
    mine = _define(names, None)
    sent = _send(names)
    assert _refusals(sent["element"]) == _prefix(names["element"]) + (
        f"numeric record: registered none yet, pickle has {_fields(7)!r}")
    assert _refusals(sent["block"]).endswith(
        f"numeric record: registered none yet, pickle has {_fields(7)!r}")
    register_numeric_info(mine["element"], _record(7))
    for key in ("element", "block", "pair"):
        for data in sent[key]:
            assert pickle.loads(data) is mine[key]


def test_a_pickle_without_a_record_settles_a_receiver_without_one_yet():
    names = _names()
    mine = _define(names, None, scale=None)
    sent = _send(names, element=None, scale=None)
    for key, d in mine.items():
        assert pickle.loads(sent[key][-1]) is d
    # the receiver answered as having no record: it keeps none for good
    with pytest.raises(ValueError, match="has no numeric record for good"):
        register_numeric_info(mine["element"], _record(7))


def test_pickling_settles_the_sender():
    # A pickle that states "no record" stays true: the dtype keeps none.
    d = SimpleDType(unique_name("NRSent"), bits=6, supertype=DType.Floating)
    stated = d.__reduce__()[1][0][-1]
    assert stated == (None,)
    with pytest.raises(ValueError, match="or it was pickled"):
        register_numeric_info(d, _record(7))
    assert d.__reduce__()[1][0][-1] == (None,)
    # A record attached before the first pickle is what the pickle states.
    e = SimpleDType(unique_name("NRSent"), bits=6, supertype=DType.Floating)
    register_numeric_info(e, _record(7))
    assert e.__reduce__()[1][0][-1] == (_fields(7),)
    assert e.__reduce_ex__(0)[1][3] == (_fields(7),)


def test_a_pickle_racing_the_first_record_states_the_final_truth(fast_switching):
    for _ in range(30):
        d = SimpleDType(unique_name("NRRace"), bits=6, supertype=DType.Floating)
        start = threading.Barrier(2)
        seen = {}

        def dump():
            start.wait()
            seen["stated"] = d.__reduce__()[1][0][-1]

        def attach():
            start.wait()
            try:
                register_numeric_info(d, _record(7))
            except ValueError:
                seen["refused"] = True

        threads = [threading.Thread(target=f) for f in (dump, attach)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if seen.get("refused"):
            assert seen["stated"] == (None,)
            with pytest.raises(LookupError):
                numeric_info(d)
        else:
            assert seen["stated"] == (_fields(7),) and numeric_info(d) == _record(7)
        assert d.__reduce__()[1][0][-1] == seen["stated"]


def test_built_ins_state_nothing_and_their_pickles_are_unchanged():
    assert DType.Float32.__reduce__()[1][0] == (
        "Float32", 2, 32, "Floating", 1, "Any", 1, None, (), (), ())
    assert DType.MXFP4.__reduce__()[1][0][-1] == ()     # its extension
    assert DType.Float32.__reduce_ex__(1)[1] == ("Float32", DType.Float32.structure())
    # a block format of built-in planes states nothing either
    b = BlockScaledDType(unique_name("NRBuiltinPlanes"), element=DType.E2M1,
                         levels=(Level(DType.E4M3, 16),))
    assert b.__reduce__()[1][0][-1] == ()
    assert pickle.loads(pickle.dumps(b)) is b


# ---- ensure(): the same rule ----------------------------------------------------

def test_ensure_and_a_pickle_name_the_same_difference():
    names = _names()
    _define(names, _record(8))
    sent = _send(names)
    pickled = _refusals(sent["element"])
    with pytest.raises(ValueError) as ensured:
        SimpleDType.ensure(names["element"], bits=6, supertype=DType.Floating,
                           numeric_info=_record(7))
    tail = "numeric record bias: registered 8, "
    assert pickled.endswith(tail + "pickle has 7")
    assert str(ensured.value) == (
        f"SimpleDType.ensure(): name {names['element']!r} is already registered by "
        f"SimpleDType in module {__name__!r} with a different numeric record: "
        f"{tail}this definition has 7; nothing was registered")
    # without numeric_info, ensure states nothing and returns the registered one
    assert SimpleDType.ensure(names["element"], bits=6, supertype=DType.Floating) \
        is DType.from_name(names["element"])


def test_ensure_of_a_record_for_a_dtype_without_one_names_both_sides():
    d = SimpleDType(unique_name("NREnsure"), bits=6, supertype=DType.Floating)
    with pytest.raises(ValueError, match=r"numeric record: registered none yet, this "
                                         r"definition has \('float', 'e4m1_like', 6, True, "
                                         r"4, 1, 7, 'none'\); nothing was registered$"):
        SimpleDType.ensure(d.name, bits=6, supertype=DType.Floating, numeric_info=_record(7))
    register_numeric_info(d, _record(7))
    assert SimpleDType.ensure(d.name, bits=6, supertype=DType.Floating,
                              numeric_info=_record(7)) is d


# ---- crafted records --------------------------------------------------------------

def _with_stated(d, stated):
    record = d.__reduce__()[1][0]
    return record[:-1] + (stated,)


@pytest.mark.parametrize("stated, message", [
    ((), "expected a tuple of the 1 numeric records it states after its structure, "
         "got tuple"),
    ((None, None), "expected a tuple of the 1 numeric records"),
    ([None], "got list"),
    (HostileTuple((None,)), "got HostileTuple"),
    (("float",), "expected None or a tuple of the 8 fields"),
    ((_fields(7)[:7],), "expected None or a tuple of the 8 fields"),
    ((list(_fields(7)),), "got list"),
    (((HostileStr("float"),) + _fields(7)[1:],),
     "its field kind is an object of type HostileStr"),
    ((_fields(7)[:6] + (HostileInt(7),) + _fields(7)[7:],),
     "its field bias is an object of type HostileInt"),
    ((_fields(7)[:6] + (7.0,) + _fields(7)[7:],), "its field bias is an object of type float"),
])
def test_a_malformed_statement_is_a_value_error_running_no_code(stated, message):
    d = SimpleDType(unique_name("NRCrafted"), bits=6, supertype=DType.Floating,
                    numeric_info=_record(7))
    crafted = _with_stated(d, stated)
    with registry_unchanged(), armed():
        with pytest.raises(ValueError) as info:
            _dtypes._reconstruct(crafted)
    assert str(info.value).startswith(
        f"cannot unpickle descriptor {d.name!r}: malformed pickle record: ")
    assert message in str(info.value)


@pytest.mark.parametrize("field, value, shown", [
    (3, 1, "signed: registered True, pickle has 1"),        # bool and int differ
    (6, 2 ** 100, f"bias: registered 7, pickle has {2 ** 100}"),
    (6, None, "bias: registered 7, pickle has None"),
    (7, "ieee", "nan_encoding: registered 'none', pickle has 'ieee'"),
    (0, "int", "kind: registered 'float', pickle has 'int'"),
])
def test_a_crafted_field_is_a_difference_shown_exactly(field, value, shown):
    d = SimpleDType(unique_name("NRField"), bits=6, supertype=DType.Floating,
                    numeric_info=_record(7))
    fields = list(_fields(7))
    fields[field] = value
    with registry_unchanged():
        with pytest.raises(ValueError) as info:
            _dtypes._reconstruct(_with_stated(d, (tuple(fields),)))
    assert str(info.value) == _prefix(d.name) + "numeric record " + shown
    # the version-1 form (protocols 0 and 1) says the same
    with pytest.raises(ValueError) as v1:
        _dtypes._reconstruct(d.name, d.structure(), None, (tuple(fields),))
    assert str(v1.value) == str(info.value)


def test_a_statement_after_a_record_that_states_nothing_is_refused():
    # Built-ins and categories state nothing: an item after their structure
    # is not a record of theirs.
    for d in (DType.Float32, DType.Any, DType.NVFP4):
        record = d.__reduce__()[1][0]
        for extra in ((), (None,), (_fields(7),)):
            with registry_unchanged():
                with pytest.raises(ValueError, match="differs from the one registered"):
                    _dtypes._reconstruct(record + (extra,))
        with pytest.raises(ValueError, match="malformed pickle record: 2 items after its end"):
            _dtypes._reconstruct(record + ((), ()))


# ---- payloads of the release before records were stated ------------------------

#: Made by the previous release (protocols 0, 2 and 5) from
#:     e = SimpleDType("OldPayloadE4M1", bits=6, supertype=DType.Floating,
#:                     numeric_info=NumericInfo.floating("old_e4m1", exponent_bits=4,
#:                         mantissa_bits=1, bias=7, nan_encoding="none"))
#:     BlockScaledDType("OldPayloadMX", element=e, levels=(Level(DType.E8M0, 32),))
#: in a script (their module is __main__); they state no record.
OLD_PAYLOADS = {
    "OldPayloadE4M1": [
        "637374726964655f77656176652e5f6474797065730a5f7265636f6e7374727563740a70300a28564f6c"
        "645061796c6f616445344d310a70310a285653696d706c6544547970650a70320a2856626974730a7033"
        "0a56696e743a360a70340a7470350a28567375706572747970650a70360a28567265660a70370a567374"
        "723a466c6f6174696e670a70380a2856445479706543617465676f72790a70390a2867360a2867370a56"
        "7374723a416e790a7031300a2867390a2867360a566e6f6e650a7031310a747031320a2856657874656e"
        "73696f6e0a7031330a2874747031340a747031350a747031360a747031370a6731340a747031380a7470"
        "31390a747032300a6731340a747032310a565f5f6d61696e5f5f0a7032320a747032330a527032340a2e",
        "8002637374726964655f77656176652e5f6474797065730a5f7265636f6e7374727563740a710028580e"
        "0000004f6c645061796c6f616445344d3171014b024b065808000000466c6f6174696e6771024b015803"
        "000000416e7971034b014e29292974710458080000005f5f6d61696e5f5f71058671065271072e",
        "80059569000000000000008c147374726964655f77656176652e5f647479706573948c0c5f7265636f6e"
        "737472756374949394288c0e4f6c645061796c6f616445344d31944b024b068c08466c6f6174696e6794"
        "4b018c03416e79944b014e29292974948c085f5f6d61696e5f5f94869452942e",
    ],
    "OldPayloadMX": [
        "637374726964655f77656176652e5f6474797065730a5f7265636f6e7374727563740a70300a28564f6c"
        "645061796c6f61644d580a70310a2856426c6f636b5363616c656444547970650a70320a2856656c656d"
        "656e740a70330a28567265660a70340a567374723a4f6c645061796c6f616445344d310a70350a285653"
        "696d706c6544547970650a70360a2856626974730a70370a56696e743a360a70380a7470390a28567375"
        "706572747970650a7031300a2867340a567374723a466c6f6174696e670a7031310a2856445479706543"
        "617465676f72790a7031320a286731300a2867340a567374723a416e790a7031330a286731320a286731"
        "300a566e6f6e650a7031340a747031350a2856657874656e73696f6e0a7031360a2874747031370a7470"
        "31380a747031390a747032300a6731370a747032310a747032320a747032330a6731370a747032340a74"
        "7032350a747032360a28566c6576656c730a7032370a2828564c6576656c0a7032380a28567363616c65"
        "0a7032390a2867340a567374723a45384d300a7033300a2867360a2867370a56696e743a380a7033310a"
        "747033320a286731300a6732320a747033330a6731370a747033340a747033350a747033360a2856626c"
        "6f636b0a7033370a56696e743a33320a7033380a747033390a747034300a747034310a747034320a2856"
        "726570726573656e746174696f6e5f72756c65730a7034330a282856526570726573656e746174696f6e"
        "52756c650a7034340a567374723a7374726964655f77656176652e5f6474797065732e4c6576656c4578"
        "74656e740a7034350a286731360a2856696e743a300a7034360a56696e743a33320a7034370a74703438"
        "0a747034390a747035300a747035310a747035320a6731370a747035330a565f5f6d61696e5f5f0a7035"
        "340a747035350a527035360a2e",
        "8002637374726964655f77656176652e5f6474797065730a5f7265636f6e7374727563740a710028580c"
        "0000004f6c645061796c6f61644d5871014b04580e0000004f6c645061796c6f616445344d3171024b02"
        "4b065808000000466c6f6174696e6771034b015803000000416e7971044b014e2929294b015804000000"
        "45384d3071054b024b0868034b0168044b014e2929294b202974710658080000005f5f6d61696e5f5f71"
        "078671085271092e",
        "80059596000000000000008c147374726964655f77656176652e5f647479706573948c0c5f7265636f6e"
        "737472756374949394288c0c4f6c645061796c6f61644d58944b048c0e4f6c645061796c6f616445344d"
        "31944b024b068c08466c6f6174696e67944b018c03416e79944b014e2929294b018c0445384d30944b02"
        "4b0868054b0168064b014e2929294b202974948c085f5f6d61696e5f5f94869452942e",
    ],
}

_OLD_RECEIVER = """
    import json, pickle, sys
    from stride_weave.dtypes import BlockScaledDType, DType, Level, SimpleDType
    from stride_weave.numerics import NumericInfo, numeric_info

    bias, payloads, attach = json.loads(sys.argv[1])
    record = None if bias is None else NumericInfo.floating(
        "old_e4m1", exponent_bits=4, mantissa_bits=1, bias=bias, nan_encoding="none")
    e = SimpleDType("OldPayloadE4M1", bits=6, supertype=DType.Floating,
                    numeric_info=record)
    mx = BlockScaledDType("OldPayloadMX", element=e, levels=(Level(DType.E8M0, 32),))
    mine = {"OldPayloadE4M1": e, "OldPayloadMX": mx}
    loaded = {name: [pickle.loads(bytes.fromhex(h)) is mine[name] for h in hexes]
              for name, hexes in payloads.items()}
    if attach:      # as its defining module, after the loads
        from stride_weave.numerics import register_numeric_info
        register_numeric_info(e, NumericInfo.floating(
            "old_e4m1", exponent_bits=4, mantissa_bits=1, bias=7, nan_encoding="none"))
    try:
        still = repr(numeric_info(e))
    except LookupError:
        still = None
    print(json.dumps({"loaded": loaded, "record": still}))
"""


@pytest.mark.parametrize("bias", [7, 8, None])
def test_payloads_of_the_previous_release_load_as_they_always_did(bias):
    # They state nothing: whatever the receiver's record (the same, another,
    # none yet), the registered descriptor is the result, as before, and
    # nothing is settled.
    report = child_report(_OLD_RECEIVER, json.dumps([bias, OLD_PAYLOADS, False]))
    assert report["loaded"] == {name: [True] * 3 for name in OLD_PAYLOADS}, report
    assert (report["record"] is None) is (bias is None), report
    if bias is None:
        # still open: its defining module may attach a record after the loads
        report = child_report(_OLD_RECEIVER, json.dumps([bias, OLD_PAYLOADS, True]))
        assert report["loaded"] == {name: [True] * 3 for name in OLD_PAYLOADS}, report
        assert "bias=7" in report["record"], report


# ---- worker processes ---------------------------------------------------------------

def test_a_worker_with_another_record_refuses_the_pickle(monkeypatch):
    # spawn: the worker starts with this environment (a forkserver keeps
    # the one it was started with).
    import _numeric_defs

    assert _numeric_defs.BIAS == 7
    monkeypatch.setenv(_numeric_defs.BIAS_ENV, "8")
    ctx = multiprocessing.get_context("spawn")
    setup = workers.initializer("_numeric_defs")
    with ProcessPoolExecutor(1, mp_context=ctx, initializer=setup) as pool:
        results = [pool.submit(_numeric_defs.load, pickle.dumps(d)).result(120)
                   for d in (_numeric_defs.E4M1, _numeric_defs.MX, DType.Float32)]
    tail = "numeric record bias: registered 8, pickle has 7"
    assert results == [
        "ValueError: " + _prefix("NR_E4M1") + tail,
        "ValueError: " + _prefix("NR_MX", " of its element 'NR_E4M1'") + tail,
        "SimpleDType('Float32')",
    ]


def test_a_worker_define_that_ensures_another_record_is_refused_by_the_same_rule(tmp_path):
    # The worker's module registers bias 7; its define ensures bias 8.
    proc = support.run_python(["-c", """
import json, multiprocessing
from concurrent.futures import ProcessPoolExecutor
from stride_weave import workers
import _numeric_defs

if __name__ == "__main__":
    ctx = multiprocessing.get_context("spawn")
    setup = workers.initializer("_numeric_defs", define=_numeric_defs.define_with_bias_8)
    try:
        with ProcessPoolExecutor(1, mp_context=ctx, initializer=setup) as pool:
            pool.submit(len, ()).result(120)
    except Exception as exc:
        print(json.dumps(type(exc).__name__))
"""], env=support.child_env(HERE), cwd=tmp_path, timeout=180)
    support.assert_exited(proc)
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == "BrokenProcessPool"
    assert ("ValueError: SimpleDType.ensure(): name 'NR_E4M1' is already registered by "
            "SimpleDType in module '_numeric_defs' with a different numeric record: "
            "numeric record bias: registered 7, this definition has 8; nothing was "
            "registered") in proc.stderr, proc.stderr[-4000:]
