"""Identity across re-import (docs/design.md "Identity across imports and
interpreters").

Each scenario runs in a fresh child process: the child imports the package,
keeps references, removes the modules from sys.modules, imports again and
reports one named boolean per check as JSON.
"""
import json
import textwrap

import pytest

from support import assert_exited, run_python

_CHILD = textwrap.dedent(r"""
    import importlib, json, pickle, sys

    DROP = sys.argv[1]   # "all": stride_weave, .dtypes, ._dtypes ; "ext": ._dtypes only
    ROUNDS = int(sys.argv[2])

    import stride_weave.dtypes as m1
    import stride_weave._dtypes as c1
    DType = m1.DType
    f32 = DType.Float32
    classes = {n: getattr(m1, n) for n in (
        "DType", "DTypeCategory", "SimpleDType", "CompoundDType",
        "RepresentationRule", "WholeExtent")}
    whole = m1.Whole

    class Rule(m1.RepresentationRule):
        def validate(self, context):
            return None

    class Pair(m1.CompoundDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, simple_types=[DType.Float32], representation_rules=[Rule()])

    cat = m1.DTypeCategory("ReCat", supertype=DType.Floating)
    ext = m1.SimpleDType("ReExt", bits=16, supertype=cat)
    comp = Pair("RePair")
    before = DType.registered()
    blobs = {p: pickle.dumps([f32, ext, comp, cat], protocol=p) for p in range(6)}

    checks = {}

    def check(key, fn):
        try:
            ok = bool(fn())
        except BaseException as e:
            ok = False
            checks.setdefault("_errors", {})[key] = f"{type(e).__name__}: {e}"
        checks[key] = checks.get(key, True) and ok

    for round_ in range(ROUNDS):
        if DROP == "all":
            for k in [k for k in sys.modules if k == "stride_weave" or k.startswith("stride_weave.")]:
                del sys.modules[k]
            m2 = importlib.import_module("stride_weave.dtypes")
            c2 = sys.modules["stride_weave._dtypes"]
        else:
            del sys.modules["stride_weave._dtypes"]
            c2 = importlib.import_module("stride_weave._dtypes")
            m2 = m1
        D2 = c2.DType

        check("float32_same_object", lambda: D2.Float32 is f32)
        check("float32_same_object_public", lambda: m2.DType.Float32 is f32)
        check("from_name_same_object", lambda: D2.from_name("Float32") is f32)
        check("builtins_same_objects", lambda: all(
            getattr(D2, n) is getattr(DType, n) for n in
            ("Any", "Floating", "Integer", "Bool", "Int32", "Int8", "Float32",
             "Float64", "E8M0", "E5M2", "E4M3", "E3M2", "E2M3", "E2M1")))
        check("registry_unchanged", lambda: D2.registered() == before)
        check("extension_still_found", lambda: D2.from_name("ReExt") is ext
              and D2.from_name("ReCat") is cat and D2.from_name("RePair") is comp)
        check("extension_still_found_by_kind",
              lambda: c2.SimpleDType.from_name("ReExt") is ext
              and c2.CompoundDType.from_name("RePair") is comp)
        check("instances_of_new_classes", lambda: isinstance(f32, c2.SimpleDType)
              and isinstance(ext, c2.SimpleDType) and isinstance(cat, c2.DTypeCategory)
              and isinstance(comp, c2.CompoundDType) and isinstance(f32, m2.DType))
        check("classes_same_objects", lambda: all(
            getattr(m2, n) is cls and getattr(c2, n) is cls for n, cls in classes.items()))
        check("whole_same_object", lambda: m2.Whole is whole and c2.WholeExtent() is whole)
        check("old_pickles_load", lambda: all(
            pickle.loads(b) == [f32, ext, comp, cat]
            and all(x is y for x, y in zip(pickle.loads(b), [f32, ext, comp, cat]))
            for b in blobs.values()))
        check("new_pickles_round_trip", lambda: all(
            all(x is y for x, y in zip(pickle.loads(pickle.dumps([f32, ext, comp, cat], protocol=p)),
                                       [f32, ext, comp, cat]))
            for p in range(6)))
        check("reconstruct_on_new_module",
              lambda: c2._reconstruct("ReExt", ext.structure()) is ext)
        check("reduce_uses_current_reconstructor",
              lambda: ext.__reduce__()[0] is c2._reconstruct)

        def duplicate_refused():
            try:
                c2.SimpleDType("ReExt", bits=16, supertype=cat)
            except ValueError:
                return D2.from_name("ReExt") is ext
            return False
        check("duplicate_still_refused", duplicate_refused)

        def shared_registry():
            new = c2.SimpleDType(f"After{round_}", bits=8, supertype=D2.Integer)
            return (DType.from_name(f"After{round_}") is new
                    and c1.DType.from_name(f"After{round_}") is new
                    and pickle.loads(pickle.dumps(new)) is new)
        check("new_registration_visible_through_old_module", shared_registry)
        before = D2.registered()

    sys.stdout.write(json.dumps(checks))
""")

CHECKS = [
    "float32_same_object", "float32_same_object_public", "from_name_same_object",
    "builtins_same_objects", "registry_unchanged", "extension_still_found",
    "extension_still_found_by_kind", "instances_of_new_classes",
    "classes_same_objects", "whole_same_object", "old_pickles_load",
    "new_pickles_round_trip", "reconstruct_on_new_module",
    "reduce_uses_current_reconstructor", "duplicate_still_refused",
    "new_registration_visible_through_old_module",
]

_cache = {}


def _run(drop, rounds=3):
    key = (drop, rounds)
    if key not in _cache:
        _cache[key] = run_python(["-c", _CHILD, drop, rounds])
    proc = _cache[key]
    assert_exited(proc)
    return json.loads(proc.stdout)


@pytest.mark.parametrize("check", CHECKS)
def test_reimport_whole_package_keeps_identity(check):
    checks = _run("all")
    assert checks.get(check) is True, checks.get("_errors", {}).get(check, checks.get(check))


@pytest.mark.parametrize("check", CHECKS)
def test_reimport_extension_module_only_keeps_identity(check):
    checks = _run("ext")
    assert checks.get(check) is True, checks.get("_errors", {}).get(check, checks.get(check))


def test_reimport_child_runs_every_check():
    checks = _run("all")
    assert set(CHECKS) <= set(checks)
