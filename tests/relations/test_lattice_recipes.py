"""The recipes of docs/relations.md give JAX's and torch's promotion tables.

The recipe block of the page (the one that defines ``torch_like`` and
``jax_like``) is run as it is written; then every pair of the dtypes the
libraries share, and each of those dtypes with a Python bool, int, float
and complex, is asked of the lattice and of the library, and the answers
must agree except where the page lists a difference, which is checked to
be exactly that difference (and, for the pairs, to be where the library's
own table is not associative).  torch is imported here; JAX runs in child
processes, since ``jax_enable_x64`` is a process-wide setting.  Each
library's tests skip, saying so, when it is not installed.
"""
import doctest
import importlib.util
import json
import pathlib
import textwrap
import warnings

import pytest

import stride_weave.formats as F
from support import child_report
from stride_weave.dtypes import DType, PromotionError, default_lattice

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "relations.md"

# The shared dtypes: the libraries' names and stride-weave's.
SHARED = {
    "bool": "Bool", "int8": "Int8", "int16": "Int16", "int32": "Int32",
    "int64": "Int64", "uint8": "UInt8", "uint16": "UInt16", "uint32": "UInt32",
    "uint64": "UInt64", "float16": "Float16", "bfloat16": "BFloat16",
    "float32": "Float32", "float64": "Float64", "complex64": "Complex64",
    "complex128": "Complex128",
}
OURS = {v: k for k, v in SHARED.items()}
SCALARS = {"True": True, "1": 1, "2.5": 2.5, "1j": 1j}


def recipes():
    """{"torch_like": lattice, "jax_like": lattice}, made by running the
    page's recipe block."""
    text = DOCS.read_text(encoding="utf-8")
    blocks = [b for b in text.split("```{doctest}")[1:] if "torch_like = " in b]
    assert len(blocks) == 1
    block = blocks[0].split("```")[0]
    namespace = {"DType": DType, "F": F, "default_lattice": default_lattice}
    test = doctest.DocTestParser().get_doctest(block, namespace, "recipes", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test, clear_globs=False)
    assert runner.failures == 0
    return {name: test.globs[name] for name in ("torch_like", "jax_like")}


def our_join(lattice, a, b):
    try:
        return OURS[lattice.promote_types(DType.from_name(SHARED[a]),
                                          DType.from_name(SHARED[b])).name]
    except PromotionError:
        return None


def our_scalar(lattice, a, scalar):
    try:
        return OURS.get(lattice.result_type(DType.from_name(SHARED[a]),
                                            SCALARS[scalar]).name, "other")
    except PromotionError:
        return None


def differences(ours, theirs):
    return {key: (ours[key], value) for key, value in theirs.items()
            if ours[key] != value}


# ---- torch ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="torch is not installed")


def _torch_answer(call):
    try:
        with warnings.catch_warnings():
            # float16 + 1j is torch's experimental complex32, and says so
            warnings.simplefilter("ignore", UserWarning)
            return str(call()).replace("torch.", "")
    except (RuntimeError, TypeError):
        return None


def test_torch_like_gives_torchs_table(torch):
    lattice = recipes()["torch_like"]
    theirs = {(a, b): _torch_answer(lambda: torch.promote_types(getattr(torch, a),
                                                                  getattr(torch, b)))
              for a in SHARED for b in SHARED}
    ours = {(a, b): our_join(lattice, a, b) for a in SHARED for b in SHARED}
    limited = {"uint16", "uint32", "uint64"}
    # Everything without torch's partly supported unsigned types is torch's.
    assert {k: v for k, v in differences(ours, theirs).items()
            if not set(k) & limited} == {}
    # Where torch answers for those, the lattice agrees, but for uint64
    # with the floating-point dtypes: uint64 has no edge to them, as it
    # would then share an upper bound with int64, a pair kept undefined.
    answered = {k for k, (_ours, t) in differences(ours, theirs).items()
                if set(k) & limited and t is not None}
    floats = ("float16", "bfloat16", "float32", "float64")
    assert answered == ({("uint64", f) for f in floats}
                        | {(f, "uint64") for f in floats})
    # Where torch raises for them, its table is not associative:
    # uint16 + float16 + complex64.
    assert theirs["uint16", "float16"] == "float16"
    assert theirs["float16", "complex64"] == "complex64"
    assert theirs["uint16", "complex64"] is None


def test_torch_like_gives_torchs_weak_scalars(torch):
    lattice = recipes()["torch_like"]
    names = [n for n in SHARED if n not in ("uint16", "uint32", "uint64")]
    theirs = {(a, s): _torch_answer(lambda: (torch.zeros(1, dtype=getattr(torch, a))
                                             + SCALARS[s]).dtype)
              for a in names for s in SCALARS}
    ours = {(a, s): our_scalar(lattice, a, s) for a in names for s in SCALARS}
    # float16 + 1j is complex32 in torch, a dtype the others do not have.
    assert differences(ours, theirs) == {("float16", "1j"): ("complex64", "complex32")}


# ---- JAX ----------------------------------------------------------------------------

def _jax_tables(x64):
    if importlib.util.find_spec("jax") is None:
        pytest.skip("JAX is not installed")
    return child_report(textwrap.dedent("""
        import json, sys, warnings
        warnings.simplefilter("ignore")
        import jax
        jax.config.update("jax_enable_x64", sys.argv[1] == "x64")
        import jax.numpy as jnp
        names = json.loads(sys.argv[2])
        scalars = {"True": True, "1": 1, "2.5": 2.5, "1j": 1j}
        def dt(n):
            return jnp.bfloat16 if n == "bfloat16" else jnp.dtype(n)
        pairs = {f"{a} {b}": str(jnp.dtype(jnp.promote_types(dt(a), dt(b))))
                 for a in names for b in names}
        weak = {f"{a} {s}": str(jnp.result_type(dt(a), v))
                for a in names for s, v in scalars.items()}
        print(json.dumps({"pairs": pairs, "weak": weak}))
    """), "x64" if x64 else "x32", json.dumps(list(SHARED)), timeout=300)


def test_jax_like_gives_jaxs_table_but_where_jax_is_not_associative():
    lattice = recipes()["jax_like"]
    theirs = {tuple(k.split()): v for k, v in _jax_tables(x64=True)["pairs"].items()}
    ours = {(a, b): our_join(lattice, a, b) for a in SHARED for b in SHARED}
    expected = {}
    for low, ours_low in (("float16", "float64"), ("bfloat16", "float64"),
                          ("float32", "float64"), ("complex64", "complex128")):
        expected["uint64", low] = (ours_low, low)
        expected[low, "uint64"] = (ours_low, low)
    assert differences(ours, theirs) == expected
    # Each difference is where JAX's table is not associative.
    assert theirs["uint64", "int8"] == "float64"
    assert theirs["int8", "float16"] == "float16" == theirs["uint64", "float16"]


def test_jax_like_gives_jaxs_weak_scalars_in_its_default_configuration():
    lattice = recipes()["jax_like"]
    # Without jax_enable_x64, JAX has no 64-bit dtypes.
    names = [n for n in SHARED if n not in ("int64", "uint64", "float64", "complex128")]
    weak = _jax_tables(x64=False)["weak"]
    theirs = {(a, s): weak[f"{a} {s}"] for a in names for s in SCALARS}
    ours = {(a, s): our_scalar(lattice, a, s) for a in names for s in SCALARS}
    assert differences(ours, theirs) == {}
