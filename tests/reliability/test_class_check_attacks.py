"""Reliability: the per-class isinstance/issubclass checks, the metaclass
entries that hand them out, the class-call fast path and the lazily
formatted miss error, attacked from Python.

Everything here is reachable from Python code: the metaclasses' entries
(``type(DType).__dict__['__instancecheck__']``), each class's check
(``DType.__instancecheck__``, ``gc.get_referents(DType)``), classes made
around the metaclass's ``__new__``, and an ``UnknownNameError`` kept,
re-initialized or formatted from several threads.  Each scenario runs in a
child process, so a crash fails the test instead of the run; each must end
in an ordinary answer or exception, with nothing leaked.
"""
import pytest

from support.child import child_report



def test_metaclass_entries_refuse_or_delegate_whatever_they_are_handed():
    report = child_report('''
        import json
        from stride_weave import _dtypes
        from stride_weave.dtypes import DType
        out = {}
        for meta in (_dtypes.DTypeMeta, _dtypes.RuleMeta):
            for name in ("__instancecheck__", "__subclasscheck__"):
                entry = meta.__dict__[name]
                own = getattr(type, name)
                for i, args in enumerate([(), (None,), (None, None), (1,), (1, int),
                                          (DType, 1), (DType, DType), (int,),
                                          (DType.Float32,), (meta,), (type,),
                                          (object(), object())]):
                    def attempt(fn):
                        try:
                            r = fn(*args)
                            return ["ok", repr(type(r).__name__)]
                        except Exception as e:
                            return [type(e).__name__, str(e)]
                    mine, theirs = attempt(entry.__get__), attempt(own.__get__)
                    if args and type(args[0]) in (_dtypes.DTypeMeta, _dtypes.RuleMeta):
                        # bound to a model class: that class's own check
                        ok = mine == ["ok", repr("_ClassCheckMethod")]
                    else:
                        ok = mine == theirs
                    out["%s.%s.%d" % (meta.__name__, name, i)] = ok
                try:
                    type(entry)()
                    out[meta.__name__ + ".new"] = False
                except TypeError:
                    out[meta.__name__ + ".new"] = True
        print(json.dumps(out))
    ''')
    assert report and all(report.values()), report


def test_checks_survive_wrong_calls_and_outlive_their_class():
    report = child_report('''
        import gc, json, sys, weakref
        from stride_weave.dtypes import DType, SimpleDType
        out = {}

        def make():
            class Temp(SimpleDType):
                pass
            return Temp, Temp.__instancecheck__, Temp.__subclasscheck__

        cls, ic, sc = make()
        ref = weakref.ref(cls)
        calls = [(), (1, 2), (1, 2, 3)]
        errors = []
        for check in (ic, sc):
            for args in calls:
                try:
                    check(*args)
                except TypeError as e:
                    errors.append(str(e))
            try:
                check(x=1)
            except TypeError as e:
                errors.append(str(e))
        out["errors"] = len(errors) == 8
        del cls
        gc.collect()
        # the check keeps its class alive and stays usable
        out["alive"] = ref() is not None and ic.__self__ is ref()
        out["answers"] = [ic(DType.Float32), ic(1), sc(bool), sc(ref())]
        del ic, sc, check
        gc.collect()
        out["collected"] = ref() is None

        # the checks are reachable through the collector and are the ones
        # attribute access returns
        refs = gc.get_referents(DType)
        out["referents"] = (DType.__instancecheck__ in refs
                            and DType.__subclasscheck__ in refs)

        # refcounts stay flat over many calls (after a first round that
        # makes what is made once: bound methods, snapshots)
        def calls(n):
            for _ in range(n):
                isinstance(DType.Float32, DType); isinstance(1, DType)
                issubclass(SimpleDType, DType); issubclass(int, DType)
                DType.from_name("Float32"); DType.registered()
                SimpleDType.from_name("Float32"); SimpleDType.registered()
                DType.__instancecheck__; SimpleDType.__subclasscheck__
                try:
                    DType.from_name("float32")
                except LookupError as e:
                    str(e)
        calls(10)
        before = sys.getrefcount(DType), sys.getrefcount(SimpleDType)
        calls(10000)
        out["refcounts"] = before == (sys.getrefcount(DType), sys.getrefcount(SimpleDType))
        print(json.dumps(out))
    ''')
    assert report == {"errors": True, "alive": True,
                      "answers": [False, False, False, True], "collected": True,
                      "referents": True, "refcounts": True}, report


def test_classes_made_around_the_metaclass_take_types_paths():
    # type.__new__(DTypeMeta, ...) allocates a class the metaclass never
    # finished: it has no checks, no record, and no DType in its MRO.
    report = child_report('''
        import json
        from stride_weave import _dtypes
        from stride_weave.dtypes import DType, SimpleDType
        out = {}
        for meta in (_dtypes.DTypeMeta, _dtypes.RuleMeta):
            try:
                odd = type.__new__(meta, "Odd", (), {})
            except Exception as e:
                out[meta.__name__] = ["refused", type(e).__name__]
                continue
            res = [isinstance(1, odd), issubclass(odd, odd), issubclass(int, odd)]
            try:
                DType.__dict__["from_name"].__get__(None, odd)
                res.append("bound")
            except TypeError:
                res.append("refused")
            try:
                odd.from_name
                res.append("from_name found")
            except AttributeError:
                res.append("no from_name")
            out[meta.__name__] = res
        print(json.dumps(out))
    ''')
    for name, res in report.items():
        if res[0] == "refused":
            continue
        assert res[:3] == [False, True, False], (name, res)
        assert res[-1] == "no from_name", (name, res)


def test_threads_check_create_and_drop_classes_concurrently():
    report = child_report('''
        import gc, json, sys, threading
        from stride_weave.dtypes import DType, SimpleDType
        sys.setswitchinterval(1e-6)
        stop = threading.Event()
        made = []
        failures = []

        def churn():
            i = 0
            while not stop.is_set():
                class Churn(SimpleDType):
                    pass
                made.append(Churn)
                if len(made) > 20:
                    made.pop(0)
                i += 1
                if i % 50 == 0:
                    gc.collect()

        def check():
            for _ in range(20000):
                for cls in list(made[-3:]) + [DType, SimpleDType]:
                    if isinstance(DType.Float32, cls) != (cls in (DType, SimpleDType)):
                        failures.append(("isinstance", cls.__name__))
                    if not issubclass(cls, DType):
                        failures.append(("issubclass", cls.__name__))
                    cls.__instancecheck__(1)
                if DType.from_name("Float32") is not DType.Float32:
                    failures.append("from_name")

        threads = [threading.Thread(target=churn)] + [
            threading.Thread(target=check) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads[1:]:
            t.join()
        stop.set()
        threads[0].join()
        print(json.dumps({"failures": failures[:5]}))
    ''')
    assert report == {"failures": []}


def test_unknown_name_errors_under_attack():
    report = child_report('''
        import copy, gc, json, pickle, threading
        from stride_weave import _dtypes
        from stride_weave.dtypes import DType
        out = {}

        def miss(name):
            try:
                DType.from_name(name)
            except LookupError as e:
                return e

        expected = "no descriptor is registered under the name 'float32'; did you mean 'Float32'?"
        # read from many threads at once: one message, the right one
        errors = [miss("float32") for _ in range(50)]
        seen = []
        def read(e):
            for _ in range(20):
                seen.append(str(e)); seen.append(e.args[0]); seen.append(repr(e))
        threads = [threading.Thread(target=read, args=(e,)) for e in errors for _ in range(2)]
        for t in threads: t.start()
        for t in threads: t.join()
        out["threads"] = all(s in (expected, repr(_dtypes.UnknownNameError(expected))) for s in seen)

        # args replaced before or after the message is read
        e = miss("float32"); e.args = ("mine",); out["set_before"] = [e.args, str(e)]
        e = miss("float32"); str(e); e.args = ["x", 1]; out["set_after"] = [list(e.args), str(e)]
        e = miss("float32")
        try:
            del e.args
        except TypeError:
            out["del"] = True
        e = miss("float32"); e.__init__("again"); out["reinit"] = [e.args, str(e)]
        # made from Python: an ordinary exception with the args it is given
        made = _dtypes.UnknownNameError("a", 2)
        out["made"] = [list(made.args), str(made)]
        out["made_empty"] = [list(_dtypes.UnknownNameError().args), str(_dtypes.UnknownNameError())]
        # copies and pickles carry the full message
        e = miss("float32")
        out["pickle"] = pickle.loads(pickle.dumps(e)).args == (expected,)
        e = miss("float32")
        out["copy"] = copy.copy(e).args == (expected,) and copy.deepcopy(miss("float32")).args == (expected,)
        try:
            class Sub(_dtypes.UnknownNameError):
                pass
            out["subclass"] = "allowed"
        except TypeError:
            out["subclass"] = "refused"
        # a cycle through the exception's traceback is collected
        e = miss("zzzz"); e.loop = e; del e
        gc.collect()
        out["gc"] = True
        print(json.dumps(out))
    ''')
    assert report == {
        "threads": True,
        "set_before": [["mine"], "mine"],
        "set_after": [["x", 1], "('x', 1)"],
        "del": True,
        "reinit": [["again"], "again"],
        "made": [["a", 2], "('a', 2)"],
        "made_empty": [[], ""],
        "pickle": True,
        "copy": True,
        "subclass": "refused",
        "gc": True,
    }, report
