"""The comparison table of docs/relations.md: what stride-weave, numpy (with
ml_dtypes), the Array API standard, JAX and torch answer to the same
questions.

    python docs/tables/compare_relations.py          # rewrite the table
    python docs/tables/compare_relations.py --check  # exit 1 if it is stale

Every column except the Array API's is what the library answers when this
script calls it (numpy, ml_dtypes, jax and torch must be importable; the
versions are written under the table). The Array API column is written out
from the standard (2024.12): its promotion tables, ``can_cast`` (true
exactly when promotion from one dtype to the other gives the other), and
its rules for Python scalars; a pair the standard does not define, a dtype
it does not have (float16, bfloat16, the 8-bit floats, int4) and a Python
int outside the dtype's range (whose behaviour it leaves unspecified) are
"undefined". The table sits between two markers in docs/relations.md;
tests/surfaces/test_relations_docs.py checks its stride-weave and numpy
columns against the libraries installed there, and its Array API column
against array-api-strict (``array_api_strict_answer``), which implements
the standard and raises where it leaves a case undefined.
"""

import argparse
import pathlib
import sys

DOC = pathlib.Path(__file__).resolve().parents[1] / "relations.md"
START = "<!-- comparison table: docs/tables/compare_relations.py -->"
END = "<!-- end of comparison table -->"

# (question, a, b): promote_types(a, b), can_cast(a, b) (safe), or
# result_type(a, b) with b a Python scalar.
ROWS = [
    ("promote_types", "int8", "uint8"),
    ("promote_types", "int64", "uint64"),
    ("promote_types", "bool", "int8"),
    ("promote_types", "int8", "float16"),
    ("promote_types", "int32", "float32"),
    ("promote_types", "int64", "float64"),
    ("promote_types", "bool", "float32"),
    ("promote_types", "float16", "bfloat16"),
    ("promote_types", "float64", "complex64"),
    ("promote_types", "float8_e4m3fn", "float16"),
    ("promote_types", "float8_e4m3fn", "float8_e5m2"),
    ("promote_types", "float8_e4m3fn", "float32"),
    ("promote_types", "int4", "int8"),
    ("can_cast", "float8_e4m3fn", "float16"),
    ("can_cast", "float8_e5m2", "float16"),
    ("can_cast", "int8", "float16"),
    ("can_cast", "int32", "float64"),
    ("can_cast", "int64", "float64"),
    ("can_cast", "uint8", "int8"),
    ("result_type", "int8", 1000),
    ("result_type", "uint8", -1),
    ("result_type", "int8", 1.0),
    ("result_type", "float16", 1e6),
    ("result_type", "float32", 1j),
]

UNDEFINED = "undefined"
ERROR = "error"

# The Array API standard (2024.12): its tables cover bool with bool, the
# integer dtypes among themselves, and the floating-point dtypes among
# themselves; it has no float16, bfloat16, 8-bit floats or int4. A Python
# int outside the array dtype's range is unspecified (array-api-strict
# raises OverflowError); a Python complex with a real floating-point array
# gives the complex dtype of the same precision (new in 2024.12).
ARRAY_API = {
    ("promote_types", "int8", "uint8"): "int16",
    ("promote_types", "int64", "uint64"): UNDEFINED,
    ("promote_types", "bool", "int8"): UNDEFINED,
    ("promote_types", "int8", "float16"): UNDEFINED,
    ("promote_types", "int32", "float32"): UNDEFINED,
    ("promote_types", "int64", "float64"): UNDEFINED,
    ("promote_types", "bool", "float32"): UNDEFINED,
    ("promote_types", "float16", "bfloat16"): UNDEFINED,
    ("promote_types", "float64", "complex64"): "complex128",
    ("promote_types", "float8_e4m3fn", "float16"): UNDEFINED,
    ("promote_types", "float8_e4m3fn", "float8_e5m2"): UNDEFINED,
    ("promote_types", "float8_e4m3fn", "float32"): UNDEFINED,
    ("promote_types", "int4", "int8"): UNDEFINED,
    ("can_cast", "float8_e4m3fn", "float16"): UNDEFINED,
    ("can_cast", "float8_e5m2", "float16"): UNDEFINED,
    ("can_cast", "int8", "float16"): UNDEFINED,
    ("can_cast", "int32", "float64"): "False",
    ("can_cast", "int64", "float64"): "False",
    ("can_cast", "uint8", "int8"): "False",
    ("result_type", "int8", 1000): UNDEFINED,
    ("result_type", "uint8", -1): UNDEFINED,
    ("result_type", "int8", 1.0): UNDEFINED,
    ("result_type", "float16", 1e6): UNDEFINED,
    ("result_type", "float32", 1j): "complex64",
}


def array_api_strict_answer(question, a, b):
    """What array-api-strict (the standard's reference implementation, at
    the standard's 2024.12 version) answers, "undefined" where it has no
    such dtype or raises; the caller imports array_api_strict and sets its
    flags."""
    import array_api_strict as xp

    da, db = getattr(xp, a, None), (getattr(xp, b, None) if isinstance(b, str) else b)
    if da is None or db is None:
        return UNDEFINED
    try:
        if question == "can_cast":
            return str(xp.can_cast(da, db))
        return str(xp.result_type(da, db)).removeprefix("array_api_strict.")
    except (TypeError, OverflowError):
        return UNDEFINED


def _row_label(question, a, b):
    if question == "result_type":
        return f"`result_type({a}, {b!r})`"
    return f"`{question}({a}, {b})`"


# --- stride-weave ------------------------------------------------------------

def stride_weave(question, a, b):
    import stride_weave.formats as F
    from stride_weave import dtypes as sw

    names = {
        "bool": sw.DType.Bool, "int8": sw.DType.Int8, "int16": F.Int16,
        "int32": sw.DType.Int32, "int64": F.Int64, "uint8": F.UInt8,
        "uint16": F.UInt16, "uint32": F.UInt32, "uint64": F.UInt64,
        "int4": F.Int4, "float16": F.Float16, "bfloat16": F.BFloat16,
        "float32": sw.DType.Float32, "float64": sw.DType.Float64,
        "complex64": F.Complex64, "complex128": F.Complex128,
        "float8_e4m3fn": sw.DType.E4M3, "float8_e5m2": sw.DType.E5M2,
    }
    back = {d: name for name, d in names.items()}
    try:
        if question == "promote_types":
            return back[sw.promote_types(names[a], names[b])]
        if question == "can_cast":
            return str(sw.can_cast(names[a], names[b]))
        return back[sw.result_type(names[a], b)]
    except TypeError:
        return ERROR


# --- the other libraries -------------------------------------------------------

def _ask_numpy_like(np_like, dt, question, a, b):
    """The answer of numpy or jax.numpy (the same three functions), with
    `dt` making their dtype of a name."""
    try:
        if question == "promote_types":
            return np_like.promote_types(dt(a), dt(b)).name
        if question == "can_cast":
            return str(bool(np_like.can_cast(dt(a), dt(b), "safe")))
        return np_like.result_type(dt(a), b).name
    except (TypeError, ValueError, OverflowError):
        return ERROR


def numpy(question, a, b):
    import ml_dtypes  # noqa: F401  (registers its types with numpy)
    import numpy as np

    return _ask_numpy_like(
        np, lambda name: np.dtype(getattr(ml_dtypes, name, None) or name),
        question, a, b)


def jax(question, a, b):
    import jax.numpy as jnp

    return _ask_numpy_like(jnp, jnp.dtype, question, a, b)


def torch(question, a, b):
    import torch as t

    names = {"bool": t.bool, "float8_e4m3fn": t.float8_e4m3fn,
             "float8_e5m2": t.float8_e5m2, "int4": getattr(t, "int4", None)}

    def dt(name):
        return names[name] if name in names else getattr(t, name)

    try:
        if question == "promote_types":
            return str(t.promote_types(dt(a), dt(b))).removeprefix("torch.")
        if question == "can_cast":
            # torch.can_cast answers "same kind or wider", not "every value"
            return str(t.can_cast(dt(a), dt(b)))
        return str(t.result_type(t.zeros(1, dtype=dt(a)), b)).removeprefix("torch.")
    except (TypeError, RuntimeError, ValueError, AttributeError):
        return ERROR


COLUMNS = [("stride-weave", stride_weave), ("numpy + ml_dtypes", numpy),
           ("Array API", lambda *row: ARRAY_API[row]), ("JAX", jax), ("torch", torch)]


def versions():
    import jax as j
    import ml_dtypes
    import numpy as np
    import torch as t

    import stride_weave

    return (f"stride-weave {stride_weave.__version__}, numpy {np.__version__}, "
            f"ml_dtypes {ml_dtypes.__version__}, JAX {j.__version__}, "
            f"torch {t.__version__.split('+')[0]}, the Array API standard 2024.12")


def table():
    lines = ["| question | " + " | ".join(name for name, _ in COLUMNS) + " |",
             "| --- |" + " --- |" * len(COLUMNS)]
    for row in ROWS:
        cells = [f"`{answer}`" if answer not in (UNDEFINED, ERROR) else answer
                 for answer in (column(*row) for _, column in COLUMNS)]
        lines.append(f"| {_row_label(*row)} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Generated by `docs/tables/compare_relations.py` with {versions()}. "
                 "`error`: the library raises; `undefined`: the standard leaves "
                 "the case undefined (a pair it does not define, a dtype it does "
                 "not have, an int scalar outside the dtype's range, where "
                 "array-api-strict raises `OverflowError`); `can_cast` is asked at "
                 "`'safe'` (torch's `can_cast` takes no level).")
    return "\n".join(lines)


def replaced(text, new_table):
    start = text.index(START) + len(START)
    end = text.index(END)
    return text[:start] + "\n\n" + new_table + "\n\n" + text[end:]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = DOC.read_text(encoding="utf-8")
    new = replaced(text, table())
    if args.check:
        if new != text:
            print(f"the comparison table of {DOC} is stale", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
