"""Extension descriptors registered at import, for tests/reliability/test_workers.py.

Importing this module registers one extension of every kind under fixed
names (the same in every process), so a worker that imports it (spawn and
forkserver workers do, to unpickle the task functions below; fork workers
inherit it) has the same descriptors as the parent.

The environment variable ``SW_WORKER_VARIANT``, read once at import, selects
the definition:

=========  ================================================================
variant    definition
=========  ================================================================
base       (default) what the test process registers
wide       the simple dtype is 32 bits wide instead of 16; everything else
           is the same (so the compound, which references it, differs too)
=========  ================================================================

``driver_main()`` is the entry point of a child process used by the
mismatch tests: it imports this module as "base", then switches the
variable to "wide" so that the pool workers it starts register "wide".
"""
import json
import os
import pickle
import sys
import traceback

from stride_weave.dtypes import (
    DType,
    DTypeCategory,
    SimpleDType,
    Whole,
)

from support.defs import BUILTIN_NAMES, PlanePair, TagRule  # noqa: F401 (re-exported)

VARIANT_ENV = "SW_WORKER_VARIANT"
VARIANT = os.environ.get(VARIANT_ENV, "base")
if VARIANT not in ("base", "wide"):
    raise ValueError(f"unknown {VARIANT_ENV}={VARIANT!r}")

NAMES = {
    "category": "SwWorker_Category",
    "simple": "SwWorker_Simple",
    "compound": "SwWorker_Compound",
    "subclass": "SwWorker_TaggedSimple",
    "subcategory": "SwWorker_MarkedCategory",
}
KINDS = tuple(NAMES)
# kinds whose definition differs between "base" and "wide"
DIFFERS_WHEN_WIDE = frozenset({"simple", "compound"})

class TaggedSimple(SimpleDType, abstract=False):
    def structure_extension(self):
        return ("tag", 1.5, -0.0, True, None, Whole, (7, "nested"))


class MarkedCategory(DTypeCategory, abstract=False):
    def structure_extension(self):
        return ("marked",)


def _register():
    category = DTypeCategory(NAMES["category"], supertype=DType.Floating)
    simple = SimpleDType(NAMES["simple"], bits=32 if VARIANT == "wide" else 16,
                         supertype=category)
    compound = PlanePair(NAMES["compound"], planes=[simple, DType.Float32],
                         rules=[TagRule(32)])
    subclass = TaggedSimple(NAMES["subclass"], bits=8, supertype=DType.Floating)
    subcategory = MarkedCategory(NAMES["subcategory"], supertype=DType.Any)
    return {"category": category, "simple": simple, "compound": compound,
            "subclass": subclass, "subcategory": subcategory}


DEFS = _register()


# --------------------------------------------------------------------------
# tasks run by pool workers
# --------------------------------------------------------------------------

def init():
    """Pool initializer: the import of this module has registered DEFS."""
    assert all(DType.from_name(NAMES[k]) is DEFS[k] for k in KINDS)


def _descriptors(obj):
    if isinstance(obj, DType):
        yield obj
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from _descriptors(value)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            yield from _descriptors(value)


def echo(payload):
    """Return (pid, variant, checks, payload): checks says, per descriptor the
    worker received, whether it is the worker's own registered identity."""
    checks = []
    for d in _descriptors(payload):
        ok = DType.from_name(d.name) is d
        if d.name in NAMES.values():
            kind = next(k for k, n in NAMES.items() if n == d.name)
            ok = ok and DEFS[kind] is d
        if d.name in BUILTIN_NAMES:
            ok = ok and getattr(DType, d.name) is d
        checks.append((d.name, ok))
    return os.getpid(), VARIANT, checks, payload


def lookup(names):
    """Descriptors found in the worker, sent back to the caller."""
    return [DType.from_name(n) for n in names]


def load(blob):
    """Unpickle `blob` inside the task; return (pid, name, is-registered-identity)."""
    d = pickle.loads(blob)
    return os.getpid(), d.name, DType.from_name(d.name) is d


def worker_variant():
    return os.getpid(), VARIANT, DEFS["simple"].bits


# --------------------------------------------------------------------------
# the mismatch driver (a child process of the test)
# --------------------------------------------------------------------------

def _outcome(call):
    try:
        return {"ok": call()}
    except Exception as exc:
        return {"error": type(exc).__name__, "message": str(exc)}


def driver_main():
    """``python -c "import _worker_defs; _worker_defs.driver_main()" KIND METHOD``

    KIND is "pool" or "executor", METHOD a start method.  Prints one JSON
    object with the outcome of each step.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    kind, method = sys.argv[1], sys.argv[2]
    assert VARIANT == "base", "the driver itself must register the base definitions"
    os.environ[VARIANT_ENV] = "wide"      # inherited by the workers it starts
    ctx = multiprocessing.get_context(method)
    blob = {k: pickle.dumps(DEFS[k]) for k in KINDS}
    blob["Float32"] = pickle.dumps(DType.Float32)
    steps = [
        ("variant", worker_variant, ()),
        ("Float32", load, (blob["Float32"],)),
        ("simple", load, (blob["simple"],)),
        ("compound", load, (blob["compound"],)),
        ("category", load, (blob["category"],)),
        ("subclass", load, (blob["subclass"],)),
        ("simple-again", load, (blob["simple"],)),
        ("Float32-again", load, (blob["Float32"],)),
    ]
    report = {"steps": []}
    try:
        if kind == "pool":
            with ctx.Pool(1) as pool:
                for label, fn, args in steps:
                    result = pool.apply_async(fn, args)
                    report["steps"].append(
                        [label, _outcome(lambda: result.get(timeout=60))])
        else:
            with ProcessPoolExecutor(1, mp_context=ctx) as executor:
                for label, fn, args in steps:
                    future = executor.submit(fn, *args)
                    report["steps"].append(
                        [label, _outcome(lambda: future.result(timeout=60))])
    except BaseException:
        report["driver_error"] = traceback.format_exc()
    sys.stdout.write(json.dumps(report))
    sys.stdout.flush()
