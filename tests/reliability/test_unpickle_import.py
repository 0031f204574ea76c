"""Descriptors across processes: the module hint of a pickle and importing it
on unpickle (with its policy), DType.ensure(), duplicate-name errors that
name their owner, and cloudpickle (docs/pickling.md, docs/processes.md).

Receiving processes are children (support.child): they can import
``_autoimport_ext`` (this folder is on their path) but have not imported it.
"""
import functools
import importlib
import multiprocessing
import os
import pickle
import sys
import textwrap
import threading
from concurrent.futures import ProcessPoolExecutor

import pytest

import support
from support import refused, registry_unchanged, unique_name
from stride_weave import _dtypes
from stride_weave.dtypes import DType, SimpleDType

cloudpickle = pytest.importorskip("cloudpickle")

# The children can import the helper modules of this folder (_autoimport_ext,
# _autoimport_raises), as workers can: nothing imports them for the children.
HERE = os.path.dirname(os.path.abspath(__file__))
run_child = functools.partial(support.run_child, path=(HERE,))
child_report = functools.partial(support.child_report, path=(HERE,))


@pytest.fixture
def ext():
    import _autoimport_ext

    return _autoimport_ext


@pytest.fixture
def policy():
    """Restore the import policy after the test."""
    previous = _dtypes.unpickle_imports()
    yield
    _dtypes.set_unpickle_imports(previous)


def _compiler_names():
    """What the compiler itself adds to every class namespace (3.13 records
    __firstlineno__ and __static_attributes__), from a plain class."""
    class Plain:
        def method(self):
            return self

    return set(vars(Plain)) - {"__module__", "__qualname__", "__doc__", "method",
                               "__dict__", "__weakref__"}


def _s16():
    return SimpleDType.ensure(unique_name("S16"), bits=16, supertype=DType.Floating)


# --------------------------------------------------------------------------
# what the pickle carries
# --------------------------------------------------------------------------

def test_builtins_name_no_module_and_extensions_name_theirs(ext):
    # The record alone for built-ins, in both payload versions.
    args = DType.Float32.__reduce__()[1]
    assert len(args) == 1 and args[0][0] == "Float32"
    assert DType.Float32.__reduce_ex__(1)[1] == ("Float32", DType.Float32.structure())
    assert len(DType.MXFP4.__reduce__()[1]) == 1
    for d in (ext.FLOAT16, ext.TAGGED, ext.MXFLOAT16):
        reconstruct, args = d.__reduce__()
        assert reconstruct is _dtypes._reconstruct
        assert args[0][0] == d.name and args[1:] == ("_autoimport_ext",)
        assert d.__reduce_ex__(1)[1] == (d.name, d.structure(), "_autoimport_ext")


def test_a_model_class_called_directly_records_the_calling_module():
    d = SimpleDType(unique_name("Direct"), bits=16, supertype=DType.Floating)
    assert d.__reduce__()[1][-1] == __name__
    assert d.__reduce_ex__(0)[1][-1] == __name__


def test_old_two_argument_payloads_keep_loading(ext):
    d = ext.TAGGED
    assert _dtypes._reconstruct(d.name, d.structure()) is d
    old = pickle.dumps(d)
    assert pickle.loads(old) is d


# --------------------------------------------------------------------------
# importing the module on unpickle, in a receiving process
# --------------------------------------------------------------------------

_RECEIVE = """
    import json, pickle, sys
    from stride_weave import _dtypes
    before = "_autoimport_ext" in sys.modules
    data = bytes.fromhex(sys.argv[1])
    try:
        objs = pickle.loads(data)
        result = {"ok": [repr(o) for o in objs],
                  "same": all(o is _dtypes.DType.from_name(o.name) for o in objs)}
    except Exception as exc:
        result = {"error": type(exc).__name__, "message": str(exc),
                  "cause": repr(exc.__cause__)}
    result["before"] = before
    result["after"] = "_autoimport_ext" in sys.modules
    print(json.dumps(result))
"""


def _receive(payload, env=None, prelude=""):
    code = textwrap.dedent(prelude) + textwrap.dedent(_RECEIVE)
    saved = dict(os.environ)
    try:
        os.environ.update(env or {})
        return child_report(code, pickle.dumps(payload).hex())
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_receiver_imports_the_defining_module_once_and_finds_the_names(ext):
    report = _receive((ext.FLOAT16, ext.TAGGED, ext.MXFLOAT16, DType.Float32))
    assert report["before"] is False and report["after"] is True, report
    assert report["ok"] == ["SimpleDType('AI_Float16')", "TaggedFloat('AI_Tagged')",
                            "BlockScaledDType('AI_MXFloat16')",
                            "SimpleDType('Float32')"], report
    assert report["same"] is True


def test_auto_import_turned_off_is_a_lookup_error_and_imports_nothing(ext):
    report = _receive((ext.TAGGED,), prelude="""
        from stride_weave.dtypes import set_unpickle_imports
        assert set_unpickle_imports(False) is True
    """)
    assert report["error"] == "LookupError" and report["after"] is False, report
    assert "module '_autoimport_ext' was not imported: importing on unpickle " \
        "is turned off" in report["message"]


@pytest.mark.parametrize("value, imported", [
    ("0", False), ("1", True), ("", True), ("_autoimport_ext", True),
    ("other, _autoimport_ext", True), ("other,mylib.sub", False),
    ("_autoimport", False),
])
def test_the_environment_variable_sets_the_initial_policy(ext, value, imported):
    report = _receive((ext.TAGGED,), env={"STRIDE_WEAVE_UNPICKLE_IMPORTS": value})
    assert report["after"] is imported, report
    if not imported:
        assert report["error"] == "LookupError", report


def test_a_malformed_environment_variable_fails_the_import():
    rc, out, err = run_child(
        "import os; os.environ['STRIDE_WEAVE_UNPICKLE_IMPORTS'] = 'ok, not-valid';"
        "import stride_weave._dtypes")
    assert rc != 0
    assert "ValueError: environment variable STRIDE_WEAVE_UNPICKLE_IMPORTS: " \
        "module name prefix 'not-valid' is not a dotted name" in err, err


def test_prefix_allow_list(policy, ext):
    assert _dtypes.set_unpickle_imports(("mylib", "_autoimport_ext")) is True
    assert _dtypes.unpickle_imports() == ("mylib", "_autoimport_ext")
    assert _dtypes.set_unpickle_imports(["_autoimport"]) == ("mylib", "_autoimport_ext")
    # "_autoimport" allows "_autoimport" and "_autoimport.x", not "_autoimport_ext"
    with refused(LookupError, match=r"not under the allowed module prefixes "
                                    r"\('_autoimport',\)"):
        _dtypes._reconstruct(unique_name("Missing"), (), "_autoimport_ext")
    assert _dtypes.set_unpickle_imports(False) == ("_autoimport",)
    assert _dtypes.set_unpickle_imports(True) is False


@pytest.mark.parametrize("allow, exc, match", [
    ("mylib", TypeError, "got a single str"),
    (b"mylib", TypeError, "got a single bytes"),
    (5, TypeError, "got int"),
    ([1], TypeError, "must be a str, got int"),
    (["a..b"], ValueError, "'a..b' is not a dotted name"),
    ([".rel"], ValueError, "'.rel' is not a dotted name"),
    ([""], ValueError, "'' is not a dotted name"),
    (None, TypeError, "got NoneType"),
])
def test_set_unpickle_imports_checks_its_argument(policy, allow, exc, match):
    before = _dtypes.unpickle_imports()
    with pytest.raises(exc, match=match):
        _dtypes.set_unpickle_imports(allow)
    assert _dtypes.unpickle_imports() == before


@pytest.mark.parametrize("hint, reason", [
    ("a b", "it is not a dotted name of identifiers"),
    (".relative", "it is not a dotted name of identifiers"),
    ("..x", "it is not a dotted name of identifiers"),
    ("a..b", "it is not a dotted name of identifiers"),
    ("trailing.", "it is not a dotted name of identifiers"),
    ("", "it is not a dotted name of identifiers"),
    ("1abc", "it is not a dotted name of identifiers"),
    ("os;import sys", "it is not a dotted name of identifiers"),
    ("__main__", "__main__ is never imported"),
    ("__main__.sub", "__main__ is never imported"),
    ("__mp_main__", "__main__ is never imported"),
    ("no_such_module_sw13", "no top-level module 'no_such_module_sw13' is "
                            "importable in this process"),
])
def test_crafted_hints_are_lookup_errors_naming_the_module(hint, reason):
    name = unique_name("Crafted")
    with refused(LookupError) as info:
        _dtypes._reconstruct(name, (), hint)
    message = str(info.value)
    assert message.startswith(f"cannot unpickle descriptor {name!r}: no descriptor")
    assert f"its module {hint!r} was not imported: {reason}" in message


def test_a_module_that_raises_on_import_is_a_lookup_error_with_the_cause():
    name = unique_name("Raises")
    with refused(LookupError) as info:
        _dtypes._reconstruct(name, (), "_autoimport_raises")
    assert "importing its module '_autoimport_raises' raised RuntimeError: " \
        "this module refuses to be imported" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)
    assert "_autoimport_raises" not in sys.modules


def test_an_imported_module_that_does_not_register_the_name(ext):
    name = unique_name("NotThere")
    with refused(LookupError, match=r"also after importing its module 'json'"):
        _dtypes._reconstruct(name, (), "json")


def test_a_missing_submodule_of_an_importable_package():
    with refused(LookupError, match=r"importing its module 'json.no_such_sub' "
                                    r"raised ModuleNotFoundError"):
        _dtypes._reconstruct(unique_name("Sub"), (), "json.no_such_sub")


def test_the_hint_must_be_a_str_or_none():
    with refused(TypeError, match=r"module of 'X' must be a str or None, got bytes"):
        _dtypes._reconstruct("X", (), b"json")
    with refused(LookupError, match=r"no descriptor is registered under that "
                                    r"name in this process \(import"):
        _dtypes._reconstruct(unique_name("NoHint"), (), None)


def test_a_str_subclass_hint_runs_no_code():
    calls = []

    class Sneaky(str):
        def __eq__(self, other):
            calls.append("eq")
            return str.__eq__(self, other)

        def __hash__(self):
            calls.append("hash")
            return str.__hash__(self)

        def split(self, *args):
            calls.append("split")
            return str.split(self, *args)

    with refused(LookupError):
        _dtypes._reconstruct(unique_name("Sub"), (), Sneaky("no_such_module_sw13"))
    assert calls == []


def test_a_registered_name_never_consults_the_hint(ext, policy):
    _dtypes.set_unpickle_imports(False)
    assert _dtypes._reconstruct(ext.TAGGED.name, ext.TAGGED.structure(),
                                "no_such_module_sw13") is ext.TAGGED
    with pytest.raises(ValueError, match="differs"):
        _dtypes._reconstruct(ext.TAGGED.name, DType.Float32.structure(), "json")


# --------------------------------------------------------------------------
# process pools: an extension the workers have not imported
# --------------------------------------------------------------------------

def _loaded_and_echo(obj):
    import sys

    return "_autoimport_ext" in sys.modules, obj


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_process_pool_workers_import_the_extension_on_unpickle(ext, method):
    ctx = multiprocessing.get_context(method)
    with ProcessPoolExecutor(1, mp_context=ctx) as pool:
        before = pool.submit(_loaded_and_echo, DType.Float32).result(timeout=120)
        assert before == (False, DType.Float32)
        loaded, back = pool.submit(_loaded_and_echo,
                                   {ext.TAGGED: ext.MXFLOAT16}).result(timeout=120)
        assert loaded is True
        assert back == {ext.TAGGED: ext.MXFLOAT16}
        (key, value), = back.items()
        assert key is ext.TAGGED and value is ext.MXFLOAT16


# --------------------------------------------------------------------------
# DType.ensure(): idempotent registration
# --------------------------------------------------------------------------

def test_ensure_registers_then_returns_the_registered_descriptor():
    name = unique_name("Ens")
    first = SimpleDType.ensure(name, bits=16, supertype=DType.Floating)
    assert DType.from_name(name) is first
    with registry_unchanged():
        assert SimpleDType.ensure(name, bits=16, supertype=DType.Floating) is first


def test_ensure_with_a_different_structure_names_the_first_difference():
    name = unique_name("EnsDiff")
    SimpleDType(name, bits=16, supertype=DType.Floating)
    with refused(ValueError) as info:
        SimpleDType.ensure(name, bits=32, supertype=DType.Floating)
    assert str(info.value) == (
        f"SimpleDType.ensure(): name {name!r} is already registered by "
        f"SimpleDType in module {__name__!r} with a different structure at "
        "SimpleDType.bits: registered 16 (int), this definition has 32 (int); "
        "nothing was registered")


def test_plain_construction_keeps_the_duplicate_name_error():
    name = unique_name("Dup")
    SimpleDType.ensure(name, bits=16, supertype=DType.Floating)
    with refused(ValueError, match=rf"^SimpleDType: name '{name}' is already "
                                   rf"registered by SimpleDType in module "
                                   rf"'{__name__}'$"):
        SimpleDType(name, bits=16, supertype=DType.Floating)


def test_duplicate_name_error_names_the_owner_class_and_module():
    class Owner(SimpleDType, abstract=False):
        pass

    name = unique_name("Owned")
    Owner(name, bits=8, supertype=DType.Floating)
    with refused(ValueError, match=rf"^SimpleDType: name '{name}' is already "
                                   rf"registered by {__name__}\.test_duplicate_"
                                   r"name_error_names_the_owner_class_and_module"
                                   r"\.<locals>\.Owner$"):
        SimpleDType(name, bits=8, supertype=DType.Floating)
    with refused(ValueError, match=r"^SimpleDType: name 'Float32' is already "
                                   r"registered by a built-in SimpleDType$"):
        SimpleDType("Float32", bits=32, supertype=DType.Floating)


def test_ensure_of_a_subclass_compares_structure_extension():
    class Tagged(SimpleDType, abstract=False):
        def __init__(self, name, tag):
            self.tag = tag
            super().__init__(name, bits=8, supertype=DType.Floating)

        def structure_extension(self):
            return ("tag", self.tag)

    name = unique_name("EnsTag")
    first = Tagged.ensure(name, "a")
    assert Tagged.ensure(name, tag="a") is first
    with refused(ValueError, match=r"at SimpleDType\.extension\[1\]: registered "
                                   r"'a' \(str\), this definition has 'b' \(str\)"):
        Tagged.ensure(name, "b")


def test_ensure_passes_constructor_errors_through():
    with refused(TypeError, match="cannot instantiate abstract"):
        DType.ensure("X")
    with refused(ValueError):
        SimpleDType.ensure(unique_name("Bad"), bits=0, supertype=DType.Floating)
    # the C layout class is not a descriptor class: ensure() bound to it
    layout = DType.__mro__[-2]
    assert layout.__name__ == "_DescriptorBase"
    with refused(TypeError, match="must be called on a descriptor class, got type"):
        DType.__dict__["ensure"].__get__(None, layout)("X")


def test_ensure_of_a_block_scaled_format(ext):
    from stride_weave.dtypes import BlockScaledDType, Level

    assert BlockScaledDType.ensure("AI_MXFloat16", element=ext.FLOAT16,
                                   levels=(Level(DType.E8M0, 32),)) is ext.MXFLOAT16
    with refused(ValueError, match="this definition has"):
        BlockScaledDType.ensure("AI_MXFloat16", element=ext.FLOAT16,
                                levels=(Level(DType.E8M0, 16),))


def test_threads_ensuring_one_definition_all_get_the_winner():
    name = unique_name("EnsRace")
    results, errors = [], []
    barrier = threading.Barrier(8)

    def work():
        barrier.wait()
        try:
            results.append(SimpleDType.ensure(name, bits=16, supertype=DType.Floating))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert errors == []
    assert len(results) == 8 and all(r is results[0] for r in results)
    assert DType.from_name(name) is results[0]
    assert [d.name for d in DType.registered()].count(name) == 1


def test_threads_ensuring_different_definitions_get_one_winner_and_errors():
    name = unique_name("EnsRace2")
    results, errors = [], []
    barrier = threading.Barrier(6)

    def work(bits):
        barrier.wait()
        try:
            results.append(SimpleDType.ensure(name, bits=bits, supertype=DType.Floating))
        except ValueError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=work, args=(8 * (1 + i % 2),)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winner = DType.from_name(name)
    assert all(r is winner for r in results)
    assert len(results) == 3 and len(errors) == 3
    assert all("with a different structure at SimpleDType.bits" in e for e in errors)


def test_reloading_a_module_that_ensures_returns_the_registered_ones(tmp_path, monkeypatch):
    modname = f"sw_reload_{os.getpid()}_{unique_name('m')}".replace("-", "_")
    name = unique_name("Reload")
    (tmp_path / f"{modname}.py").write_text(textwrap.dedent(f"""
        from stride_weave.dtypes import DType, SimpleDType

        class Half(SimpleDType, abstract=False):
            def __init__(self, name):
                super().__init__(name, bits=16, supertype=DType.Floating)

        HALF = Half.ensure({name!r})
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(modname)
    first, first_class = module.HALF, module.Half
    reloaded = importlib.reload(module)
    assert reloaded.HALF is first
    assert reloaded.Half is not first_class and type(first) is first_class
    sys.modules.pop(modname, None)


# --------------------------------------------------------------------------
# class namespaces and cloudpickle
# --------------------------------------------------------------------------

def test_a_user_class_namespace_holds_only_what_the_class_statement_wrote():
    class Written(SimpleDType, abstract=False):
        """Doc."""

        def __init__(self, name):
            super().__init__(name, bits=16, supertype=DType.Floating)

        def describe(self):
            return self.name

    # __dict__ is the metaclass's accessor of the object's own attributes
    # (it gives instances their sealed attribute storage, docs/design.md).
    assert set(vars(Written)) == {"__module__", "__doc__", "__init__",
                                  "describe", "__dict__"} | _compiler_names()


_BY_VALUE_SENDER = """
    import pickle, sys
    import cloudpickle
    from stride_weave.dtypes import DType, SimpleDType

    class MainFloat(SimpleDType, abstract=False):
        '''Defined in __main__.'''
        def __init__(self, name, *, bits=16):
            super().__init__(name, bits=bits, supertype=DType.Floating)

        def describe(self):
            return f"{self.name}:{self.bits}"

    made = MainFloat(sys.argv[1])
    assert pickle.loads(cloudpickle.dumps(MainFloat)) is MainFloat
    assert pickle.loads(cloudpickle.dumps(made)) is made
    sys.stdout.write(cloudpickle.dumps(MainFloat).hex() + "\\n")
    sys.stdout.write(cloudpickle.dumps(made).hex() + "\\n")
"""


def test_cloudpickle_rebuilds_a_main_class_in_another_process():
    name = unique_name("MainFloat")
    rc, out, err = run_child(_BY_VALUE_SENDER, name)
    assert rc == 0, err
    cls_hex, obj_hex = out.split()
    Main = pickle.loads(bytes.fromhex(cls_hex))
    assert Main.__name__ == "MainFloat" and Main.__module__ == "__main__"
    assert Main.__doc__ == "Defined in __main__."
    assert issubclass(Main, SimpleDType) and type(Main) is type(SimpleDType)
    assert Main.describe(DType.Float32) == "Float32:32"
    # the instance's name is registered only in the sender: the same clear
    # error as any unregistered name, and __main__ is never imported
    with refused(LookupError) as info:
        pickle.loads(bytes.fromhex(obj_hex))
    assert f"cannot unpickle descriptor {name!r}" in str(info.value)
    assert "its module '__main__' was not imported: __main__ is never imported" \
        in str(info.value)


def test_cloudpickle_by_value_of_a_registered_module(tmp_path, monkeypatch):
    modname = f"sw_byvalue_{os.getpid()}_{unique_name('m')}".replace("-", "_")
    (tmp_path / f"{modname}.py").write_text(textwrap.dedent("""
        from stride_weave.dtypes import DType, SimpleDType

        class ByValue(SimpleDType, abstract=False):
            def __init__(self, name):
                super().__init__(name, bits=16, supertype=DType.Floating)

            def twice(self):
                return 2 * self.bits
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(modname)
    cloudpickle.register_pickle_by_value(module)
    try:
        data = cloudpickle.dumps(module.ByValue)
    finally:
        cloudpickle.unregister_pickle_by_value(module)
    report = child_report(f"""
        import json, pickle, sys
        cls = pickle.loads(bytes.fromhex({data.hex()!r}))
        print(json.dumps({{"module": cls.__module__,
                           "names": sorted(set(vars(cls)) - set({sorted(_compiler_names())!r})),
                           "loaded": {modname!r} in sys.modules,
                           "twice": cls.twice(__import__("stride_weave.dtypes",
                               fromlist=["DType"]).DType.Float32)}}))
    """)
    assert report == {"module": modname, "names": ["__dict__", "__doc__",
                                                   "__init__", "__module__",
                                                   "twice"],
                      "loaded": False, "twice": 64}
    sys.modules.pop(modname, None)


def test_cloudpickle_by_reference(ext):
    data = cloudpickle.dumps((ext.TaggedFloat, ext.TAGGED, ext.describe))
    report = child_report(f"""
        import json, pickle, sys
        cls, tagged, describe = pickle.loads(bytes.fromhex({data.hex()!r}))
        import _autoimport_ext as m
        print(json.dumps({{"same": cls is m.TaggedFloat and tagged is m.TAGGED,
                           "describe": describe(tagged)}}))
    """)
    assert report == {"same": True, "describe": ["AI_Tagged", 8]}


# --------------------------------------------------------------------------
# hostile: what the imported module, or a caller of the C entry points, does
# --------------------------------------------------------------------------

def test_a_module_that_registers_a_different_structure_on_import(tmp_path, monkeypatch):
    modname = f"sw_other_def_{os.getpid()}_{unique_name('m')}".lower()
    name = unique_name("OtherDef")
    (tmp_path / f"{modname}.py").write_text(textwrap.dedent(f"""
        from stride_weave.dtypes import DType, SimpleDType
        SimpleDType({name!r}, bits=32, supertype=DType.Floating)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    pickled = SimpleDType(unique_name("Shape"), bits=16, supertype=DType.Floating)
    with pytest.raises(ValueError, match=r"at SimpleDType\.bits: registered 32 "
                                         r"\(int\), pickle has 16 \(int\)"):
        _dtypes._reconstruct(name, pickled.structure(), modname)
    assert DType.from_name(name).bits == 32
    sys.modules.pop(modname, None)


def test_a_module_that_turns_imports_off_and_unpickles_while_imported(
        tmp_path, monkeypatch, policy):
    modname = f"sw_reenter_{os.getpid()}_{unique_name('m')}".lower()
    (tmp_path / f"{modname}.py").write_text(textwrap.dedent("""
        from stride_weave import _dtypes
        _dtypes.set_unpickle_imports(False)
        try:
            _dtypes._reconstruct("SW_Never_Registered", (), __name__)
        except LookupError as exc:
            SEEN = str(exc)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    with refused(LookupError, match="also after importing its module"):
        _dtypes._reconstruct(unique_name("Reenter"), (), modname)
    assert "importing on unpickle is turned off" in sys.modules[modname].SEEN
    assert _dtypes.unpickle_imports() is False
    sys.modules.pop(modname, None)


def test_ensure_reentered_from_init_returns_the_inner_registration():
    name = unique_name("Inner")

    class Reentrant(SimpleDType, abstract=False):
        inner = None

        def __init__(self, name, depth=0):
            if depth == 0:
                Reentrant.inner = Reentrant.ensure(name, depth=1)
            super().__init__(name, bits=16, supertype=DType.Floating)

    outer = Reentrant.ensure(name)
    assert outer is Reentrant.inner is DType.from_name(name)


def test_the_class_bound_descriptor_checks_what_it_is_bound_to():
    descr = DType.__dict__["from_name"]
    with pytest.raises(TypeError, match=r"from_name\(\) must be bound to a "
                                        r"descriptor class, got type"):
        descr.__get__(None, int)
    with pytest.raises(TypeError, match=r"__get__\(None, None\) is invalid"):
        descr.__get__(None)
    with pytest.raises(TypeError):
        type(descr)()
    # bound through an instance: its class, as a classmethod would
    assert descr.__get__(DType.Float32)("Float32") is DType.Float32
    assert DType.Float32.registered is SimpleDType.registered
    assert DType.__dict__["registered"].__get__(None, SimpleDType)() == \
        SimpleDType.registered()
