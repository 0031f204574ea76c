"""Descriptors across processes: the module hint of a pickle and importing it
on unpickle; the policy that decides which modules may be imported (its
environment variable, also under -E and -I, the modules distributions
declare, names that are never imported, threads racing its first read);
DType.ensure(), duplicate-name errors that name their owner, and
cloudpickle (docs/pickling.md, docs/processes.md).

Receiving processes are children (support.child): they can import
``_autoimport_ext`` (this folder is on their path) but have not imported it.
The policy of this process is left as the test found it (the ``policy``
fixture); a test that needs its first read runs in a child.
"""
import functools
import importlib
import itertools
import json
import multiprocessing
import os
import pickle
import sys
import textwrap
import threading
import time
from concurrent.futures import ProcessPoolExecutor

import hypothesis
import hypothesis.strategies as st
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

POLICY_ENV = "STRIDE_WEAVE_UNPICKLE_IMPORTS"
GROUP = "stride_weave.unpickle_imports"


@pytest.fixture
def ext():
    import _autoimport_ext

    return _autoimport_ext


@pytest.fixture
def policy():
    """The default setting for the test (the modules distributions declare,
    no prefixes of the user's), whatever this process's environment says;
    the previous setting after it."""
    previous = _dtypes.set_unpickle_imports(())
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
        assert d.__reduce_ex__(1)[1][:3] == (d.name, d.structure(), "_autoimport_ext")


def test_a_model_class_called_directly_records_the_calling_module():
    d = SimpleDType(unique_name("Direct"), bits=16, supertype=DType.Floating)
    assert d.__reduce__()[1][-1] == __name__
    assert d.__reduce_ex__(0)[1][2] == __name__


def test_old_two_argument_payloads_keep_loading(ext):
    d = ext.TAGGED
    assert _dtypes._reconstruct(d.name, d.structure()) is d
    old = pickle.dumps(d)
    assert pickle.loads(old) is d


# --------------------------------------------------------------------------
# importing the module on unpickle, in a receiving process
# --------------------------------------------------------------------------

_RECEIVE = """
    import json, pickle, sys, warnings
    from stride_weave import _dtypes
    before = "_autoimport_ext" in sys.modules
    data = bytes.fromhex(sys.argv[1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            objs = pickle.loads(data)
            result = {"ok": [repr(o) for o in objs],
                      "same": all(o is _dtypes.DType.from_name(o.name) for o in objs)}
        except Exception as exc:
            result = {"error": type(exc).__name__, "message": str(exc),
                      "cause": repr(exc.__cause__)}
        try:
            result["policy"] = _dtypes.unpickle_imports()
        except Exception as exc:
            result["policy"] = f"{type(exc).__name__}: {exc}"
    result["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    result["before"] = before
    result["after"] = "_autoimport_ext" in sys.modules
    print(json.dumps(result))
"""


def _child_env(env):
    """The environment of a receiving child: this process's, without the
    policy variable, plus `env`."""
    saved = dict(os.environ)
    os.environ.pop(POLICY_ENV, None)
    os.environ.update(env or {})
    return saved


def _receive(payload, env=None, prelude="", path=()):
    code = textwrap.dedent(prelude) + textwrap.dedent(_RECEIVE)
    saved = _child_env(env)
    try:
        return support.child_report(code, pickle.dumps(payload).hex(), path=(HERE, *path))
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_receiver_imports_an_allowed_module_once_and_finds_the_names(ext):
    report = _receive((ext.FLOAT16, ext.TAGGED, ext.MXFLOAT16, DType.Float32),
                      env={POLICY_ENV: "_autoimport_ext"})
    assert report["before"] is False and report["after"] is True, report
    assert report["ok"] == ["SimpleDType('AI_Float16')", "TaggedFloat('AI_Tagged')",
                            "BlockScaledDType('AI_MXFloat16')",
                            "SimpleDType('Float32')"], report
    assert report["same"] is True


def test_by_default_an_undeclared_importable_module_is_not_imported(ext):
    # Importable by name, but neither declared by a distribution nor allowed
    # by the user: refused before any import machinery runs.
    report = _receive((ext.TAGGED,))
    assert report["error"] == "LookupError" and report["after"] is False, report
    assert report["message"].startswith(
        "cannot unpickle descriptor 'AI_Tagged': no descriptor is registered under "
        "that name in this process, and its module '_autoimport_ext' was not "
        "imported: it is not under the allowed module prefixes ("), report
    assert f"allow it with stride_weave.dtypes.set_unpickle_imports, the " \
        f"environment variable {POLICY_ENV} or the entry-point group " \
        f"'{GROUP}' of its distribution" in report["message"], report
    assert report["warnings"] == [], report


def test_the_pack_of_common_formats_is_declared_by_stride_weave_itself():
    from stride_weave import formats

    assert formats.BFloat16.__reduce__()[1][-1] == "stride_weave.formats"
    report = child_report(f"""
        import json, pickle, sys
        from stride_weave import _dtypes
        before = "stride_weave.formats" in sys.modules
        d = pickle.loads(bytes.fromhex({pickle.dumps(formats.BFloat16).hex()!r}))
        print(json.dumps({{"before": before, "policy": _dtypes.unpickle_imports(),
                           "same": d is sys.modules["stride_weave.formats"].BFloat16}}))
    """)
    assert report["before"] is False and report["same"] is True, report
    assert "stride_weave.formats" in report["policy"], report


def test_auto_import_turned_off_is_a_lookup_error_and_imports_nothing(ext):
    report = _receive((ext.TAGGED,), prelude="""
        from stride_weave.dtypes import set_unpickle_imports
        assert set_unpickle_imports(False) == ()
    """)
    assert report["error"] == "LookupError" and report["after"] is False, report
    assert "module '_autoimport_ext' was not imported: importing on unpickle " \
        "is turned off" in report["message"]
    assert report["policy"] is False


@pytest.mark.parametrize("value, imported", [
    (None, False), ("", False), ("  ", False), ("none", False), (" any ", True),
    ("_autoimport_ext", True), ("other, _autoimport_ext", True),
    ("other,mylib.sub", False), ("_autoimport", False), ("_autoimport_ext.sub", False),
])
def test_the_environment_variable_sets_the_initial_policy(ext, value, imported):
    report = _receive((ext.TAGGED,), env={} if value is None else {POLICY_ENV: value})
    assert report["after"] is imported, report
    if not imported:
        assert report["error"] == "LookupError", report
    if value and value.strip() == "any":
        assert report["policy"] is True
    elif value == "none":
        assert report["policy"] is False
    elif value and "," in value:
        assert report["policy"][:2] == [p.strip() for p in value.split(",")], report


_EXPECTED = ("expected 'any', 'none' or a comma-separated list of module name "
             "prefixes (such as 'mylib,otherlib.formats')")


@pytest.mark.parametrize("value, why", [
    ("1", "'1' is not a dotted name of identifiers"),
    ("0", "'0' is not a dotted name of identifiers"),
    ("ok, not-valid", "'not-valid' is not a dotted name of identifiers"),
    ("a b", "'a b' is not a dotted name of identifiers"),
    ("a,,b", "it has an empty item"),
    ("mylib,", "it has an empty item"),
    ("any,mylib", "'any' and 'none' stand alone"),
    ("unittest.__main__", "'unittest.__main__' has a __main__ component, and "
                          "__main__ is never imported"),
    ("*", "'*' is not a dotted name of identifiers"),
    *[(word, f"{word.strip()!r} is a yes/no word, not a module name prefix: write "
             "'any' to allow any importable module, 'none' to allow none")
      for word in ("true", "True", "YES", "on", " false ", "No", "OFF")],
    ("mylib, off", "'off' is a yes/no word, not a module name prefix: write 'any' "
                   "to allow any importable module, 'none' to allow none"),
    *[(word, f"{word!r} is not a module name prefix here: 'any' and 'none' are "
             "written in lower case (only set_unpickle_imports can allow a module "
             "of that name)")
      for word in ("ANY", "Any", "None", "NONE")],
])
def test_a_malformed_environment_variable_is_an_error_at_first_use(ext, value, why):
    # Importing stride_weave works; a load that needs no import works; the
    # first use of the policy is a ValueError naming the variable, what was
    # expected and what was given, never "allow all".
    report = _receive((DType.Float32, ext.TAGGED), env={POLICY_ENV: value})
    assert report["after"] is False, report
    assert report["error"] == "ValueError", report
    message = (f"environment variable {POLICY_ENV}: {_EXPECTED}, got {value!r}")
    assert report["message"].startswith(message), report
    if why is not None:
        assert report["message"] == f"{message}: {why}", report
    assert report["policy"] == f"ValueError: {report['message']}", report


_ISOLATED = """
    import json, os, pickle, sys
    sys.path[:0] = {path!r}
    from stride_weave import _dtypes
    result = {{"flags": [sys.flags.ignore_environment, sys.flags.isolated]}}
    try:
        pickle.loads(bytes.fromhex({data!r}))
        result["loaded"] = True
    except Exception as exc:
        result["error"] = f"{{type(exc).__name__}}: {{exc}}"
    try:
        result["policy"] = _dtypes.unpickle_imports()
    except Exception as exc:
        result["policy"] = type(exc).__name__
    result["imported"] = "_autoimport_ext" in sys.modules
    print(json.dumps(result))
"""


@pytest.mark.parametrize("flag", ["-E", "-I"])
@pytest.mark.parametrize("value, expected", [
    ("none", {"imported": False, "policy": False}),
    ("_autoimport_ext", {"imported": True, "policy": ["_autoimport_ext"]}),
    ("any", {"imported": True, "policy": True}),
    ("not-valid", {"imported": False, "policy": "ValueError"}),
])
def test_the_variable_is_read_under_isolated_and_ignore_environment_modes(
        ext, flag, value, expected):
    # -E and -I make Python ignore its own PYTHON* variables; the policy is
    # read from the real process environment all the same.
    code = textwrap.dedent(_ISOLATED).format(
        path=[support.PACKAGE_PARENT, support.TESTS_ROOT, HERE],
        data=pickle.dumps(ext.TAGGED).hex())
    env = support.child_env(HERE)
    env[POLICY_ENV] = value
    proc = support.run_python([flag, "-c", code], env=env)
    support.assert_exited(proc)
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["flags"] == ([1, 0] if flag == "-E" else [1, 1])
    assert report["imported"] is expected["imported"], report
    policy = report["policy"]
    if isinstance(policy, list):
        policy = [p for p in policy if p != "stride_weave.formats"]
    assert policy == expected["policy"], report
    if value == "not-valid":
        assert report["error"].startswith(
            f"ValueError: environment variable {POLICY_ENV}: expected"), report


def test_prefix_allow_list(policy, ext):
    assert _dtypes.set_unpickle_imports(("mylib", "_autoimport_ext")) == ()
    assert _dtypes.unpickle_imports()[:2] == ("mylib", "_autoimport_ext")
    assert _dtypes.set_unpickle_imports(["_autoimport"]) == ("mylib", "_autoimport_ext")
    # "_autoimport" allows "_autoimport" and "_autoimport.x", not "_autoimport_ext"
    with refused(LookupError, match=r"not under the allowed module prefixes "
                                    r"\('_autoimport'"):
        _dtypes._reconstruct(unique_name("Missing"), (), "_autoimport_ext")
    assert _dtypes.set_unpickle_imports(False) == ("_autoimport",)
    assert _dtypes.unpickle_imports() is False
    assert _dtypes.set_unpickle_imports(True) is False
    assert _dtypes.unpickle_imports() is True


def test_unpickle_imports_reports_the_user_prefixes_then_the_declared_ones(policy):
    _dtypes.set_unpickle_imports(())
    declared = _dtypes.unpickle_imports()
    assert isinstance(declared, tuple) and list(declared) == sorted(set(declared))
    assert "stride_weave.formats" in declared
    _dtypes.set_unpickle_imports(("zz_mine", "stride_weave.formats", "aa_mine"))
    assert _dtypes.unpickle_imports() == \
        ("zz_mine", "stride_weave.formats", "aa_mine") + tuple(
            d for d in declared if d != "stride_weave.formats")


@pytest.mark.parametrize("allow, exc, match", [
    ("mylib", TypeError, "got a single str"),
    (b"mylib", TypeError, "got a single bytes"),
    (5, TypeError, "got int"),
    ([1], TypeError, "must be a str, got int"),
    (["a..b"], ValueError, "'a..b' is not a dotted name"),
    ([".rel"], ValueError, "'.rel' is not a dotted name"),
    ([""], ValueError, "'' is not a dotted name"),
    (["ok", "a.__main__"], ValueError, r"'a.__main__' has a __main__ component, "
                                       r"and __main__ is never imported"),
    (["__mp_main__"], ValueError, "'__mp_main__' has a __main__ component"),
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
    ("os/path", "it is not a dotted name of identifiers"),
    ("__main__", "__main__ is never imported"),
    ("__main__.sub", "__main__ is never imported"),
    ("__mp_main__", "__main__ is never imported"),
    ("unittest.__main__", "__main__ is never imported"),
    ("json.__main__", "__main__ is never imported"),
    ("a.__main__.b", "__main__ is never imported"),
    ("a.__mp_main__", "__main__ is never imported"),
    ("no_such_module_sw13", "no top-level module 'no_such_module_sw13' is "
                            "importable in this process"),
])
def test_crafted_hints_are_lookup_errors_naming_the_module(policy, hint, reason):
    # Any importable module allowed: the shape checks still refuse.
    _dtypes.set_unpickle_imports(True)
    name = unique_name("Crafted")
    before = set(sys.modules)
    with refused(LookupError) as info:
        _dtypes._reconstruct(name, (), hint)
    message = str(info.value)
    assert message.startswith(f"cannot unpickle descriptor {name!r}: no descriptor")
    assert f"its module {hint!r} was not imported: {reason}" in message
    assert set(sys.modules) == before


_DOTTED = st.text(alphabet=st.sampled_from("ab_1. -é"), max_size=12) | st.sampled_from(
    ["__main__", "a.__main__", "__mp_main__.x", "a.b", "x.y.z", "class", "a.1"])


@hypothesis.given(hint=_DOTTED)
@hypothesis.settings(deadline=None)
def test_which_hints_can_ever_be_imported(hint):
    # The shape check, before any policy: a dotted name of identifiers
    # (keywords included, as importlib accepts them) with no __main__ part.
    parts = hint.split(".")
    if not all(p.isidentifier() for p in parts):
        reason = "it is not a dotted name of identifiers"
    elif {"__main__", "__mp_main__"} & set(parts):
        reason = "__main__ is never imported"
    else:
        reason = "importing on unpickle is turned off"
    previous = _dtypes.set_unpickle_imports(False)
    try:
        with pytest.raises(LookupError) as info:
            _dtypes._reconstruct("SW_Hypothesis_Never_Registered", (), hint)
    finally:
        _dtypes.set_unpickle_imports(previous)
    assert f"its module {hint!r} was not imported: {reason} (" in str(info.value)


def test_the_main_module_of_a_package_never_runs(tmp_path):
    # unittest.__main__ runs test discovery in the current directory (and
    # then raises SystemExit): with any module allowed, it is still refused
    # before anything is imported.
    marker = tmp_path / "discovered"
    (tmp_path / "test_discovery_marker.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n")
    code = textwrap.dedent("""
        import json, sys
        from stride_weave import _dtypes
        _dtypes.set_unpickle_imports(True)
        results = []
        for hint in ("unittest.__main__", "json.__main__", "pip.__main__"):
            try:
                _dtypes._reconstruct("SW_Main_Never_Registered", (), hint)
            except BaseException as exc:
                results.append([type(exc).__name__, str(exc)])
        results.append(sorted(m for m in sys.modules if m.endswith("__main__")))
        print(json.dumps(results))
    """)
    proc = support.run_python(["-c", code], env=support.child_env(), cwd=tmp_path)
    support.assert_exited(proc)
    *errors, mains = json.loads(proc.stdout.splitlines()[-1])
    assert not marker.exists()
    assert mains == ["__main__"]
    for (kind, message), hint in zip(errors, ("unittest.__main__", "json.__main__",
                                              "pip.__main__"), strict=True):
        assert kind == "LookupError"
        assert f"its module {hint!r} was not imported: __main__ is never imported" \
            in message


# --------------------------------------------------------------------------
# modules that distributions declare (entry points)
# --------------------------------------------------------------------------

def _distribution(root, name, entries):
    """A distribution's metadata in `root` (a sys.path entry) declaring
    `entries` ({entry point name: value}) in the policy's group."""
    info = root / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = [f"[{GROUP}]"] + [f"{k} = {v}" for k, v in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return root


def test_a_module_a_distribution_declares_is_imported_by_default(ext, tmp_path):
    root = _distribution(tmp_path, "sw_declaring", {"formats": "_autoimport_ext"})
    report = _receive((ext.FLOAT16, ext.TAGGED), path=(root,))
    assert report["before"] is False and report["after"] is True, report
    assert report["ok"] == ["SimpleDType('AI_Float16')", "TaggedFloat('AI_Tagged')"]
    assert "_autoimport_ext" in report["policy"], report
    assert report["warnings"] == [], report


def test_a_declared_prefix_covers_submodules_only_along_dots(ext, tmp_path):
    root = _distribution(tmp_path, "sw_declaring", {"p": "_autoimport"})
    report = _receive((ext.TAGGED,), path=(root,))
    assert report["after"] is False and report["error"] == "LookupError", report


@pytest.mark.parametrize("value", ["_autoimport_ext:attr", "a.__main__", "not valid",
                                   "_autoimport_ext [extra]"])
def test_a_malformed_declaration_is_reported_and_ignored(ext, tmp_path, value):
    root = _distribution(tmp_path, "sw_broken_decl", {"bad": value, "good": "other.pkg"})
    report = _receive((ext.TAGGED,), path=(root,))
    # nothing more is allowed than was well declared
    assert report["after"] is False and report["error"] == "LookupError", report
    assert "other.pkg" in report["policy"] and value not in report["policy"], report
    assert len(report["warnings"]) == 1, report
    warning = report["warnings"][0]
    assert warning.startswith(f"RuntimeWarning: the distribution 'sw_broken_decl' "
                              f"declares {value!r} (entry point 'bad' of the group "
                              f"'{GROUP}'), which is not a module name prefix that "
                              "can be imported on unpickle ("), warning
    assert warning.endswith("); it is ignored"), warning


def test_explicit_choices_do_not_read_the_declarations(ext, tmp_path):
    root = _distribution(tmp_path, "sw_broken_decl", {"bad": "x:y"})
    for value, policy in (("any", True), ("none", False)):
        report = _receive((ext.TAGGED,), env={POLICY_ENV: value}, path=(root,))
        assert report["policy"] is policy and report["warnings"] == [], report


def test_broken_metadata_machinery_is_an_error_not_allow_all(ext):
    # A load that needed the declarations is the load's LookupError, with
    # the machinery's error as its cause; the policy query raises that error
    # itself; nothing is allowed and nothing is kept.
    report = _receive((ext.TAGGED,), prelude="""
        import importlib.metadata
        def entry_points(**kwargs):
            raise OSError("the metadata cannot be read")
        importlib.metadata.entry_points = entry_points
    """)
    assert report["error"] == "LookupError" and report["after"] is False, report
    assert report["message"] == (
        "cannot unpickle descriptor 'AI_Tagged': no descriptor is registered "
        "under that name in this process, and reading which modules installed "
        "distributions declare, to decide on its module '_autoimport_ext' "
        "raised OSError: the metadata cannot be read (import or register its "
        "definition before loading)"), report
    assert report["cause"] == "OSError('the metadata cannot be read')", report
    assert report["policy"] == "OSError: the metadata cannot be read"


_STAND_IN_LOADS = """
    import json, sys
    from stride_weave import _dtypes
    touched = []

    class StandIn:
        def __getattribute__(self, name):
            touched.append(name)
            raise AttributeError(name)

    {before}
    results = []
    for stand_in in (StandIn(), None, 42):
        saved = sys.modules.get({key!r})
        sys.modules[{key!r}] = stand_in
        try:
            _dtypes._reconstruct("SW_Stand_In_Never_Registered", ("SimpleDType",),
                                 {hint!r})
        except Exception as exc:
            results.append([type(exc).__name__, str(exc),
                            type(exc.__cause__).__name__])
        else:
            results.append("loaded")
        finally:
            if saved is None:
                sys.modules.pop({key!r}, None)
            else:
                sys.modules[{key!r}] = saved
    print(json.dumps({{"results": results, "touched": touched}}))
"""


@pytest.mark.parametrize("before", [
    "",                                                 # the first use of the policy
    "_dtypes.unpickle_imports()",                       # the policy read before
    "import importlib.metadata, importlib.util",         # the machinery imported before
    "_dtypes.set_unpickle_imports(True)",               # any module: find_spec runs
])
@pytest.mark.parametrize("key", ["importlib", "importlib.metadata", "importlib.util"])
def test_a_load_is_a_lookup_error_whatever_sys_modules_holds_and_whatever_ran_before(
        before, key):
    # A stand-in (an object that is not a module, None) where the import
    # machinery lives: every load of an unregistered name is the documented
    # LookupError, in a fresh process, whether or not anything read the
    # policy or imported the machinery first; a stand-in for importlib
    # itself is never consulted.
    report = child_report(_STAND_IN_LOADS.format(before=before, key=key,
                                                 hint="sw_no_such_module_anywhere"))
    assert len(report["results"]) == 3, report
    for result in report["results"]:
        assert result != "loaded" and result[0] == "LookupError", report
        assert result[1].startswith("cannot unpickle descriptor "
                                    "'SW_Stand_In_Never_Registered'"), report
    if key == "importlib":
        assert report["touched"] == [], report


def test_a_stand_in_for_importlib_gives_the_reason_and_keeps_nothing():
    # The refusal says why; once sys.modules holds importlib again, the next
    # load reads the declarations and gives the policy's own refusal.
    report = child_report("""
        import json, sys
        from stride_weave import _dtypes
        messages = []

        def load():
            try:
                _dtypes._reconstruct("SW_Stand_In_Never_Registered",
                                     ("SimpleDType",), "sw_no_such_module")
            except LookupError as exc:
                messages.append([str(exc), type(exc.__cause__).__name__])

        saved = sys.modules.get("importlib")
        sys.modules["importlib"] = object()
        try:
            load()
        finally:
            if saved is None:
                sys.modules.pop("importlib", None)
            else:
                sys.modules["importlib"] = saved
        load()
        print(json.dumps(messages))
    """)
    (first, cause), (second, no_cause) = report
    prefix = ("cannot unpickle descriptor 'SW_Stand_In_Never_Registered': no "
              "descriptor is registered under that name in this process, and ")
    assert cause == "ImportError" and first == prefix + (
        "reading which modules installed distributions declare, to decide on "
        "its module 'sw_no_such_module' raised ImportError: sys.modules["
        "'importlib'] holds an object of type object, not the importlib "
        "package: importlib.metadata is not imported through it (import or "
        "register its definition before loading)"), report
    assert no_cause == "NoneType" and second.startswith(
        prefix + "its module 'sw_no_such_module' was not imported: it is not "
        "under the allowed module prefixes ('stride_weave.formats',)"), report


_RACE = """
    import json, sys, threading, warnings
    from stride_weave import _dtypes
    sys.setswitchinterval(1e-6)
    barrier = threading.Barrier(8)
    results = []

    def work(i):
        barrier.wait()
        try:
            if i % 2:
                results.append(repr(_dtypes.unpickle_imports()))
            else:
                _dtypes._reconstruct("SW_Race_Never_Registered", (), "other.pkg")
        except Exception as exc:
            results.append(f"{type(exc).__name__}: {exc}")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    try:
        policy = repr(_dtypes.unpickle_imports())
    except ValueError as exc:
        policy = f"ValueError: {exc}"
    print(json.dumps({"results": results, "policy": policy,
                      "warnings": [str(w.message) for w in caught]}))
"""


@pytest.mark.parametrize("value", [None, "mine.sub", "not-valid"])
def test_threads_racing_the_first_policy_read_agree(tmp_path, value):
    root = _distribution(tmp_path, "sw_raced", {"bad": "x:y", "good": "zz_declared"})
    saved = _child_env({} if value is None else {POLICY_ENV: value})
    try:
        report = support.child_report(_RACE, path=(root,))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    results = report["results"]
    assert len(results) == 8
    if value == "not-valid":
        assert set(results) == {report["policy"]}, results
        assert results[0].startswith(f"ValueError: environment variable {POLICY_ENV}: ")
        assert report["warnings"] == []
        return
    policy = report["policy"]
    assert "'zz_declared'" in policy and "x:y" not in policy
    assert policy.startswith("('mine.sub', " if value else "(")
    reads = [r for r in results if not r.startswith("LookupError")]
    assert len(reads) == 4 and set(reads) == {policy}, results
    assert len(results) - len(reads) == 4
    # the malformed declaration is reported once, by the read that published
    assert len(report["warnings"]) == 1, report["warnings"]


def test_threads_setting_and_reading_the_policy(policy, fast_switching):
    # Every read sees one of the settings, whole, with the declared modules
    # after the user's prefixes; nothing is freed under a reader.
    settings = [True, False, ("a",), ("a", "b.c"), ()]
    declared = _dtypes.unpickle_imports()
    valid = {s if isinstance(s, bool) else s + tuple(d for d in declared if d not in s)
             for s in settings}
    barrier = threading.Barrier(6)
    readers_done = threading.Event()
    seen, errors = [], []

    def setter(k):
        barrier.wait()
        for i in itertools.count(k):
            if readers_done.is_set():
                break
            _dtypes.set_unpickle_imports(settings[i % len(settings)])

    def reader():
        barrier.wait()
        deadline = time.monotonic() + 30
        # At least 300 reads, and on until the setters were seen to run
        # (under load the readers may otherwise finish before they do).
        for n in itertools.count():
            if n >= 300 and (len(set(seen)) > 1 or time.monotonic() > deadline):
                break
            try:
                seen.append(_dtypes.unpickle_imports())
                _dtypes._reconstruct("SW_Race_Never_Registered", (), "a.b")
            except LookupError:
                pass
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

    setters = [threading.Thread(target=setter, args=(k,)) for k in range(3)]
    readers = [threading.Thread(target=reader) for _ in range(3)]
    for t in setters + readers:
        t.start()
    for t in readers:
        t.join()
    readers_done.set()
    for t in setters:
        t.join()
    assert errors == []
    assert len(seen) >= 900 and set(seen) <= valid, set(seen) - valid
    assert len(set(seen)) > 1   # the readers did run while the setters did


# --------------------------------------------------------------------------
# what the imported module does
# --------------------------------------------------------------------------

def test_a_module_that_raises_on_import_is_a_lookup_error_with_the_cause(policy):
    _dtypes.set_unpickle_imports(("_autoimport_raises",))
    name = unique_name("Raises")
    with refused(LookupError) as info:
        _dtypes._reconstruct(name, (), "_autoimport_raises")
    assert "importing its module '_autoimport_raises' raised RuntimeError: " \
        "this module refuses to be imported" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)
    assert "_autoimport_raises" not in sys.modules


def _module(tmp_path, monkeypatch, prefix, source):
    modname = f"{prefix}_{os.getpid()}_{unique_name('m')}".lower()
    (tmp_path / f"{modname}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, modname, raising=False)
    return modname


@pytest.mark.parametrize("raised, kind", [
    ("SystemExit(3)", SystemExit), ("GeneratorExit()", GeneratorExit),
    ("BaseExceptionGroup('g', [SystemExit(1)])", BaseExceptionGroup),
])
def test_a_module_that_exits_on_import_is_a_lookup_error(
        tmp_path, monkeypatch, policy, raised, kind):
    # A module that calls sys.exit() at import (a script's argument parsing)
    # must not end the process that loads a pickle.
    modname = _module(tmp_path, monkeypatch, "sw_exits", f"raise {raised}\n")
    _dtypes.set_unpickle_imports((modname,))
    with refused(LookupError) as info:
        _dtypes._reconstruct(unique_name("Exits"), (), modname)
    assert f"importing its module {modname!r} raised {kind.__name__}" in str(info.value)
    assert type(info.value.__cause__) is kind


def test_keyboard_interrupt_while_importing_propagates(tmp_path, monkeypatch, policy):
    modname = _module(tmp_path, monkeypatch, "sw_interrupted",
                      "raise KeyboardInterrupt\n")
    _dtypes.set_unpickle_imports((modname,))
    with pytest.raises(KeyboardInterrupt):
        _dtypes._reconstruct(unique_name("Interrupted"), (), modname)


def test_a_finder_that_raises_is_a_lookup_error_with_the_cause(monkeypatch, policy):
    class Broken:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name == "sw_finder_target":
                raise SystemExit("a finder exits")
            return None

    monkeypatch.setattr(sys, "meta_path", [Broken, *sys.meta_path])
    _dtypes.set_unpickle_imports(True)
    with refused(LookupError) as info:
        _dtypes._reconstruct(unique_name("Finder"), (), "sw_finder_target")
    assert "finding its module 'sw_finder_target' raised SystemExit: a finder exits" \
        in str(info.value)
    assert isinstance(info.value.__cause__, SystemExit)


def test_an_imported_module_that_does_not_register_the_name(policy):
    _dtypes.set_unpickle_imports(("json",))
    name = unique_name("NotThere")
    with refused(LookupError, match=r"also after importing its module 'json'"):
        _dtypes._reconstruct(name, (), "json")


def test_a_missing_submodule_of_an_importable_package(policy):
    _dtypes.set_unpickle_imports(("json",))
    with refused(LookupError, match=r"importing its module 'json.no_such_sub' "
                                    r"raised ModuleNotFoundError"):
        _dtypes._reconstruct(unique_name("Sub"), (), "json.no_such_sub")


def test_the_hint_must_be_a_str_or_none():
    with refused(TypeError, match=r"module of 'X' must be a str or None, got bytes"):
        _dtypes._reconstruct("X", (), b"json")
    with refused(LookupError, match=r"no descriptor is registered under that "
                                    r"name in this process \(import"):
        _dtypes._reconstruct(unique_name("NoHint"), (), None)


def test_a_str_subclass_hint_runs_no_code(policy):
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

    for allow in (True, ("no_such_module_sw13",), ()):
        _dtypes.set_unpickle_imports(allow)
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
    # The workers allow the module in their initializer (docs/processes.md).
    ctx = multiprocessing.get_context(method)
    with ProcessPoolExecutor(1, mp_context=ctx, initializer=_dtypes.set_unpickle_imports,
                             initargs=(("_autoimport_ext",),)) as pool:
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

def test_a_module_that_registers_a_different_structure_on_import(
        tmp_path, monkeypatch, policy):
    name = unique_name("OtherDef")
    modname = _module(tmp_path, monkeypatch, "sw_other_def", f"""
        from stride_weave.dtypes import DType, SimpleDType
        SimpleDType({name!r}, bits=32, supertype=DType.Floating)
    """)
    _dtypes.set_unpickle_imports((modname,))
    pickled = SimpleDType(unique_name("Shape"), bits=16, supertype=DType.Floating)
    with pytest.raises(ValueError, match=r"at SimpleDType\.bits: registered 32 "
                                         r"\(int\), pickle has 16 \(int\)"):
        _dtypes._reconstruct(name, pickled.structure(), modname)
    assert DType.from_name(name).bits == 32


def test_a_module_that_turns_imports_off_and_unpickles_while_imported(
        tmp_path, monkeypatch, policy):
    modname = _module(tmp_path, monkeypatch, "sw_reenter", """
        from stride_weave import _dtypes
        _dtypes.set_unpickle_imports(False)
        try:
            _dtypes._reconstruct("SW_Never_Registered", (), __name__)
        except LookupError as exc:
            SEEN = str(exc)
    """)
    _dtypes.set_unpickle_imports((modname,))
    with refused(LookupError, match="also after importing its module"):
        _dtypes._reconstruct(unique_name("Reenter"), (), modname)
    assert "importing on unpickle is turned off" in sys.modules[modname].SEEN
    assert _dtypes.unpickle_imports() is False


_REENTERING_METADATA = """
    import importlib.metadata, json, sys
    from stride_weave import _dtypes
    real = importlib.metadata.entry_points
    calls = []

    def entry_points(**kwargs):
        # Re-enters the policy while it is being read: the nested read
        # publishes first, a setting changes under the outer read.
        calls.append(len(calls))
        if len(calls) == 1:
            inner = _dtypes.unpickle_imports()
            _dtypes.set_unpickle_imports(("set.inside",))
            try:
                _dtypes._reconstruct("SW_Never_Registered", (), "elsewhere")
            except LookupError as exc:
                inner = [inner, str(exc)]
            calls.append(inner)
        return real(**kwargs)

    importlib.metadata.entry_points = entry_points
    first = _dtypes.unpickle_imports()
    print(json.dumps({"first": first, "again": _dtypes.unpickle_imports(),
                      "calls": calls}))
"""


def test_the_declarations_read_re_entering_the_policy():
    report = child_report(_REENTERING_METADATA)
    (inner, inner_error) = report["calls"][2]
    assert report["calls"][:2] == [0, 1] and len(report["calls"]) == 3, report
    assert inner == ["stride_weave.formats"]
    assert "its module 'elsewhere' was not imported: it is not under the allowed " \
        "module prefixes ('set.inside', 'stride_weave.formats')" in inner_error
    # the outer read lost the race to the nested one, whose declarations it
    # reports, after the setting made meanwhile
    assert report["first"] == report["again"] == ["set.inside", "stride_weave.formats"]


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
