"""Judge valgrind memcheck logs for scripts/valgrind.

    python scripts/memcheck_report.py LOG...

Each log is split into records (the lines between blank ``==pid==`` lines).
A record is *ours* when any of its stacks (where it happened, where the
block was allocated or freed, where an uninitialised value came from) has a
frame of the extension: ``_dtypes*.so`` or ``stride_weave/_dtypes/*.c``.

Fails (exit 1) on:
  * any error record that is ours;
  * any "definitely lost" record that is ours;
  * any other error record, except the two known interpreter-only patterns
    below, which are counted and printed as ignored.

Known interpreter-only patterns (never ours, by construction of the check):
  * CPython 3.11 reads the unset digit of a zero-size int (``_PyLong_New``
    is the origin of the uninitialised value: ``maybe_small_long`` after
    ``int.from_bytes(b"")`` / ``int("0")``). Fixed in CPython 3.12, which
    always initialises the first digit.
    A value derived from such a digit (the small-int pointer it selects)
    can travel on into a tuple and be reported again where the tuple is
    freed, with the origin lost: an uninitialised-value record with no
    origin and no frame of the extension is ignored too, but only in a log
    that also has the int-digit records (that is, on CPython 3.11).
  * glibc's vectorised string routines (``*_avx2*``, ``*_evex*``, ``*_sse*``)
    read whole aligned words past the end of a string: valgrind's well-known
    false positive ("Invalid read of size 32" in ``__wmemcmp_avx2_movbe``).
Invalid reads and writes, invalid frees and anything with a frame of the
extension are never ignored.
"""
import re
import sys

OURS = re.compile(r"(_dtypes[^ ]*\.so|stride_weave/_dtypes/|\bsw_[a-z_]+ \()")
FRAME = re.compile(r"(?:at|by) 0x[0-9A-F]+: (\S+)")
PREFIX = re.compile(r"^==\d+== ?")
VECTOR_STRING = re.compile(r"_(avx2|avx512|evex|sse2|sse4|ssse3)")


def records(path):
    current = []
    with open(path, errors="replace") as f:
        for raw in f:
            line = PREFIX.sub("", raw.rstrip("\n"))
            if not line.strip():
                if current:
                    yield current
                current = []
            else:
                current.append(line)
    if current:
        yield current


def classify(rec):
    head = rec[0]
    text = "\n".join(rec)
    ours = bool(OURS.search(text))
    if "definitely lost in loss record" in head:
        return ("leak-ours" if ours else "leak-interpreter"), ours
    error = re.match(
        r"(Invalid (read|write|free)|Use of uninitialised|Conditional jump|"
        r"Syscall param|Mismatched free|Source and destination overlap|"
        r"Argument .* of function)", head)
    if not error:
        return None, ours
    if ours:
        return "error-ours", ours
    frames = [m.group(1) for m in map(FRAME.search, rec) if m]
    if "uninitialised" in head or "Conditional jump" in head:
        origin = text.split("Uninitialised value was created", 1)
        if len(origin) == 2 and "_PyLong_New" in origin[1]:
            return "ignored-cpython311-int-digit", ours
        if len(origin) == 1:
            return "uninitialised-origin-lost", ours
    if head.startswith("Invalid read") and frames and VECTOR_STRING.search(frames[0]):
        return "ignored-glibc-vector-overread", ours
    return "error-interpreter", ours


def main(paths):
    counts = {}
    failures = []
    summaries = []
    for path in paths:
        kinds = [classify(rec)[0] for rec in records(path)]
        quirk = "ignored-cpython311-int-digit" in kinds
        for rec in records(path):
            for line in rec:
                if line.strip().startswith(("ERROR SUMMARY", "definitely lost:")):
                    summaries.append(f"{path}: {line.strip()}")
            kind, _ = classify(rec)
            if kind is None:
                continue
            if kind == "uninitialised-origin-lost":
                kind = ("ignored-cpython311-int-digit-propagated" if quirk
                        else "error-interpreter")
            counts[kind] = counts.get(kind, 0) + 1
            if kind in ("error-ours", "leak-ours", "error-interpreter"):
                failures.append((kind, path, rec))
    for line in summaries:
        print(f"  {line}")
    for kind in sorted(counts):
        print(f"  {kind}: {counts[kind]} record(s)")
    for kind, path, rec in failures[:20]:
        print(f"----- {kind} ({path})")
        print("\n".join(rec[:60]))
    if failures:
        print(f"memcheck: FAIL ({len(failures)} record(s) above)")
        return 1
    print("memcheck: no error and no definitely lost block from the extension")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
