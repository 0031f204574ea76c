"""The report: turns measured benchmarks into the printed tables and the
generated pages, docs/performance.md (what was measured) and
docs/contributing/benchmark-targets.md (the design targets, and which
were met).

Owns the number formats, the ratios against floors and Enum counterparts,
the targets each operation is compared with (reported, never asserted),
the description of the machine, and the text of the generated pages.
"""

import datetime
import os
import platform
import re

import cases
from cases import BLOCK_SCALED_NOTE, FLOORS
from harness import UNROLL

DOCS = os.path.join(cases.ROOT, "docs", "performance.md")
TARGETS_DOCS = os.path.join(cases.ROOT, "docs", "contributing", "benchmark-targets.md")


def machine_info():
    """The machine, interpreter and stride-weave version, as text."""
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        cpu = platform.processor() or "unknown"
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count()
    try:
        from importlib.metadata import version
        swv = version("stride-weave")
    except Exception:
        swv = "?"
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": "%s logical (%s usable by this process)" % (os.cpu_count(), usable),
        "python": "%s %s (%s)" % (platform.python_implementation(),
                                  platform.python_version(),
                                  " ".join(platform.python_build())),
        "compiler": platform.python_compiler(),
        "stride_weave": swv,
        "date": datetime.datetime.now(datetime.timezone.utc)
                .strftime("%Y-%m-%d %H:%M UTC"),
    }


def fmt_ns(v):
    """Nanoseconds for a table: '—' for None, fewer decimals when large."""
    if v is None:
        return "—"
    if v >= 100000:
        return "{:,.0f}".format(v)
    if v >= 100:
        return "%.0f" % v
    return "%.1f" % v


def fmt_ratio(v):
    """A ratio for a table, as '1.23x' ('—' for None)."""
    return "—" if v is None else "%.2fx" % v


def ratio(by, key, ref):
    """Benchmark `key` as a multiple of benchmark `ref` (`by` maps keys to
    measured benchmarks)."""
    return by[key].ns / by[ref].ns


def table_rows(benches):
    """One row per benchmark (Enum counterparts are folded into the row of
    what they model): (group, label, ns, floor key, ratio to the floor,
    Enum ns, ratio to the Enum)."""
    by = {b.key: b for b in benches}
    rows = []
    for b in benches:
        if b.group == "enum":
            continue
        floor = by.get(b.floor)
        enum_b = by.get(b.enum) if b.enum else None
        rows.append((
            b.group, b.label, b.ns,
            b.floor or "",
            b.ns / floor.ns if floor else None,
            enum_b.ns if enum_b else None,
            b.ns / enum_b.ns if enum_b else None,
        ))
    return rows


def under_2x_at_100k(T, largest, key, what):
    """Append the target "<what> under 2x the floor at 100k entries",
    measured in the largest scaling child."""
    ok_size = largest["size"] >= 100000
    ratio = largest[key] / largest["floor.call"]
    T.append(("%s under 2x the floor at 100k entries" % what,
              "%.2fx at %s entries (%s ns)%s"
              % (ratio, "{:,}".format(largest["size"]), fmt_ns(largest[key]),
                 "" if ok_size else "; 100k not measured in --quick"),
              (ratio < 2.0) if ok_size else None))


def evaluate_targets(by, reg, scale, memory, quick):
    """The bounds, each a ratio against a reference measured in the same run:
    [(bound, measured text, met?)] — met is None when not measured."""
    T = []

    def within(bound, key, ref, limit):
        v = ratio(by, key, ref)
        T.append((bound, "%.2fx (%s ns vs %s ns)"
                  % (v, fmt_ns(by[key].ns), fmt_ns(by[ref].ns)), v <= limit))

    for key, what in [("from_name.hit", "from_name hit (pre-bound)"),
                      ("from_name.hit_user", "from_name hit (as written)"),
                      ("from_name.narrowed", "from_name hit, class-narrowed")]:
        within("%s within 2x of bound dict.get" % what, key, "floor.get", 2.0)
    for key, what in [("is_subtype_of.hit", "is_subtype_of (hit)"),
                      ("is_subtype_of.miss", "is_subtype_of (miss)"),
                      ("supertypes", "supertypes()"), ("name", "name"),
                      ("bits", "bits"), ("structure", "structure()")]:
        within("%s within 1.5x of a trivial C method call" % what, key,
               "floor.call", 1.5)
    # registered(): constant time when nothing was registered, < 2x floor at 100k
    main_r = {k: ratio(by, k, "floor.call")
              for k in ("registered", "registered.narrowed")}
    largest = scale[-1] if scale else None
    for key, what in [("registered", "registered()"),
                      ("registered.narrowed", "SimpleDType.registered()")]:
        if largest is None:
            T.append(("%s constant time when nothing was registered" % what,
                      "not measured", None))
            continue
        big = largest[key] / largest["floor.call"]
        v = big / main_r[key]
        T.append(("%s constant time when nothing was registered since the last "
                  "call (floor ratio with %s extensions registered within 1.3x "
                  "of the ratio with %d descriptors)"
                  % (what, "{:,}".format(largest["size"]), reg["main_entries"]),
                  "%.2fx (%.2fx floor at %s extensions vs %.2fx at %d; first "
                  "call after a registration: %s ns)"
                  % (v, big, "{:,}".format(largest["size"]), main_r[key],
                     reg["main_entries"],
                     fmt_ns(largest[key.replace(".", "_") + "_rebuild_ns"])),
                  v <= 1.3))
        if key == "registered":
            under_2x_at_100k(T, largest, "registered.bound",
                             "registered() (pre-bound)")
        under_2x_at_100k(T, largest, key, what)
    for key in ("name", "bits"):
        within("%s within 1.2x of a plain __slots__ attribute read" % key,
               key, "floor.slot", 1.2)
    # Class calls as written against their pre-bound forms; isinstance against
    # a model class (the metaclass's __instancecheck__) against a plain
    # class's non-exact match; a caught miss against a caught KeyError.
    within("DType.from_name(k) as written within 1.5x of its pre-bound form",
           "from_name.hit_user", "from_name.hit", 1.5)
    within("DType.registered() as written within 1.5x of its pre-bound form",
           "registered", "registered.bound", 1.5)
    for key, what in [("isinstance.abstract", "isinstance(Float32, DType)"),
                      ("isinstance.user", "isinstance(<user subclass "
                       "instance>, SimpleDType)"),
                      ("isinstance.rule", "isinstance(<user rule>, "
                       "RepresentationRule)")]:
        within("%s within 1.5x of isinstance against a plain class "
               "(non-exact match)" % what, key, "ref.isinstance_sub", 1.5)
    within("isinstance(1, DType) within 1.5x of isinstance against a plain "
           "class (a miss)", "isinstance.miss", "ref.isinstance_miss", 1.5)
    within("from_name miss (pre-bound, LookupError caught) within 1.5x of a "
           "caught KeyError on a small dict", "from_name.miss",
           "ref.keyerror_subscript", 1.5)
    within("pickle.loads of a built-in simple descriptor within 1.5x of "
           "pickle.loads of a builtin global", "loads", "floor.loads", 1.5)
    within("block-scaled round trip within 2x of a simple one (NVFP4)",
           "roundtrip.block", "roundtrip", 2.0)
    within("pickle.loads of NVFP4 within 1.5x of Float32's",
           "loads.block", "loads", 1.5)
    if "np.loads" in by:
        for key, what in [("dumps", "pickle.dumps"), ("loads", "pickle.loads"),
                          ("roundtrip", "the pickle round trip")]:
            within("%s of Float32 at or below numpy's np.dtype('float32')"
                   % what, key, "np." + key, 1.0)
    else:
        T.append(("Float32 pickle at or below numpy's", "numpy not installed",
                  None))
    within("repr of a registered descriptor within 2x of returning a cached "
           "string", "repr", "ref.cached_str", 2.0)
    relations_targets(T, by, reg, within)
    T.append(("registering a SimpleDType under 2 µs",
              "%s ns (best batch of 100), %s ns (mean)"
              % (fmt_ns(reg["best_ns"]), fmt_ns(reg["mean_ns"])),
              reg["best_ns"] < 2000))
    flat = "cost per registration flat from 1k to 100k (ratio at most 1.3)"
    if len(scale) >= 2:
        a, b = scale[0], scale[-1]
        v = b["reg_best_ns"] / a["reg_best_ns"]
        T.append((flat,
                  "%.2fx (%s ns at %s, %s ns at %s)"
                  % (v, fmt_ns(b["reg_best_ns"]), "{:,}".format(b["size"]),
                     fmt_ns(a["reg_best_ns"]), "{:,}".format(a["size"])),
                  v <= 1.3))
    else:
        T.append((flat, "not measured in --quick (1k only)", None))
    if memory:
        worst = max(memory, key=lambda m: m["bytes_per"])
        T.append(("memory per registered simple descriptor under 250 bytes "
                  "(name and registry slot included)",
                  "%.0f B at worst (%s entries); %s"
                  % (worst["bytes_per"], "{:,}".format(worst["size"]),
                     ", ".join("%.0f B at %s" % (m["bytes_per"],
                                                  "{:,}".format(m["size"]))
                               for m in memory)),
                  worst["bytes_per"] < 250))
    return T


def relations_targets(T, by, reg, within):
    """The bounds of kinds, casting and promotion (docs/relations.md)."""
    if "rel.promote_types" not in by:
        return
    within("promote_types of two registered descriptors within 1.5x of a "
           "dict.get hit", "rel.promote_types", "floor.get", 1.5)
    for key, what in [("rel.can_cast", "can_cast"),
                      ("rel.isdtype", "isdtype with a kind name")]:
        within("%s within 2x of a trivial C method call" % what, key,
               "floor.call", 2.0)
    for mine, theirs, what in [
            ("rel.promote_types", "np.promote_types", "numpy.promote_types"),
            ("rel.promote_types", "torch.promote_types", "torch.promote_types"),
            ("rel.can_cast", "np.can_cast", "numpy.can_cast"),
            ("rel.isdtype", "np.isdtype", "numpy.isdtype"),
            ("rel.result_type4", "np.result_type4", "numpy.result_type (4 dtypes)")]:
        bound = "%s faster than %s" % (mine.replace("rel.", ""), what)
        if theirs in by:
            within(bound, mine, theirs, 1.0)
        else:
            T.append((bound, "%s not installed" % what.split(".")[0], None))
    for n in (4, 8):
        key = "rel.result_type%d" % n
        v = by[key].ns / by["rel.promote_types"].ns
        T.append(("result_type of %d descriptors within %d promote_types" % (n, n - 1),
                  "%.2fx promote_types (%s ns vs %s ns)"
                  % (v, fmt_ns(by[key].ns), fmt_ns(by["rel.promote_types"].ns)),
                  v <= n - 1))
    if "declare_edge_ms" in reg:
        T.append(("declaring one edge into a lattice of %d dtypes under 10 ms"
                  % reg["lattice_dtypes"],
                  "%.3f ms (best of 20; %.3f ms to extend a lattice of one's own)"
                  % (reg["declare_edge_ms"], reg["extend_edge_ms"]),
                  reg["declare_edge_ms"] < 10))


def status(met):
    """Whether a bound holds, in words."""
    return {True: "yes", False: "no", None: "not measured"}[met]


def render_text(info, mode, rows, reg, scale, memory, targets):
    """The tables as printed on stdout."""
    out = []
    out.append("stride-weave benchmarks (%s)" % mode)
    for k in ("python", "platform", "cpu", "cores", "stride_weave"):
        out.append("  %-12s %s" % (k, info[k]))
    out.append("  " + BLOCK_SCALED_NOTE)
    out.append("")
    hdr = ("%-13s %-58s %10s  %-17s %8s %10s %8s"
           % ("group", "operation", "ns/op", "floor", "x floor", "Enum ns",
              "x Enum"))
    out.append(hdr)
    out.append("-" * len(hdr))
    for g, label, ns_, floor, rf, ens, re in rows:
        out.append("%-13s %-58s %10s  %-17s %8s %10s %8s"
                   % (g[:13], label[:58], fmt_ns(ns_), floor, fmt_ratio(rf),
                      fmt_ns(ens), fmt_ratio(re)))
    out.append("%-13s %-58s %10s  %-17s %8s %10s %8s"
               % ("stride-weave", "registering a new SimpleDType (best of %d "
                  "batches of 100)" % reg["batches"], fmt_ns(reg["best_ns"]),
                  "", "—", "—", "—"))
    out.append("")
    out.append(info["c_api"])
    out.append("")
    out.append("Scaling (fresh child processes per size; gc off while timing)")
    out.extend(scale_lines(scale, memory, md=False))
    out.append("")
    out.append("Targets (ratios from this run; is each met?)")
    for t, measured, met in targets:
        out.append("  [%s] %s: %s" % (status(met), t, measured))
    return "\n".join(out)


# The Markdown tables of the scaling section: (the line before the table,
# the columns of scale_lines' rows it shows, their headers).
_SCALE_TABLES = (
    ("Registering, and memory:",
     (0, 1, 2, 10),
     ("extensions registered", "ns/registration (best batch)",
      "ns/registration (mean, last 1000)", "bytes/descriptor")),
    ("Lookups with that many registered (`registered()` ns: a call with "
     "nothing registered since the last one, which returns the cached tuple; "
     "first call: the first call after a registration, which rebuilds it):",
     (0, 3, 4, 5, 6, 7, 8, 9),
     ("extensions registered", "registered() ns", "x floor",
      "SimpleDType.registered() ns", "x floor", "registered() first call ns",
      "from_name(ext) ns", "x dict.get")),
)


def scale_lines(scale, memory, md):
    """The scaling section, one line per size: a Markdown table when `md`,
    else plain text."""
    mem = {m["size"]: m for m in memory}
    cols = ["extensions registered", "ns/registration (best batch)",
            "ns/registration (mean, last 1000)", "registered() cached ns",
            "x floor", "SimpleDType.registered() cached ns", "x floor",
            "registered() first call after registering ns",
            "from_name(ext) ns", "x dict.get", "bytes/descriptor"]
    rows = []
    for s in scale:
        m = mem.get(s["size"])
        rows.append([
            "{:,}".format(s["size"]),
            fmt_ns(s["reg_best_ns"]), fmt_ns(s["reg_mean_ns"]),
            fmt_ns(s["registered"]),
            fmt_ratio(s["registered"] / s["floor.call"]),
            fmt_ns(s["registered.narrowed"]),
            fmt_ratio(s["registered.narrowed"] / s["floor.call"]),
            fmt_ns(s["registered_rebuild_ns"]),
            fmt_ns(s["from_name"]),
            fmt_ratio(s["from_name"] / s["floor.get"]),
            "%.0f" % m["bytes_per"] if m else "—",
        ])
    if md:
        # Two tables, so that each fits the page: the cost of registering
        # and its memory, then the lookups with that many registered.
        out = []
        for title, picked, names in _SCALE_TABLES:
            out += [title, "",
                    "| " + " | ".join(names) + " |",
                    "|" + "|".join(["---"] + ["---:"] * (len(names) - 1)) + "|"]
            out += ["| " + " | ".join(r[i] for i in picked) + " |" for r in rows]
            out.append("")
        return out[:-1]
    out = []
    for r in rows:
        out.append("  " + "; ".join("%s: %s" % (c, v) for c, v in zip(cols, r)))
    return out


_DUNDER = re.compile(r"(?<![\w`])(__[A-Za-z][A-Za-z0-9_]*__)(?![\w`])")


def escape_markup(line):
    """`line` ready for Markdown: outside code spans, < and > are written as
    entities (labels such as pickle.loads(<pickle of int>) would otherwise
    be read as HTML tags and vanish from the rendered page), and a dunder
    name (__slots__, __instancecheck__) becomes a code span (its
    underscores would otherwise make it bold)."""
    parts = line.split("`")
    for i in range(0, len(parts), 2):       # the even parts are outside code
        text = parts[i].replace("<", "&lt;").replace(">", "&gt;")
        parts[i] = _DUNDER.sub(r"`\1`", text)
    return "`".join(parts)


def _generated(L):
    """The comment that opens a generated page."""
    L.append("<!-- Generated by `python benchmarks/run.py --write-docs`; "
             "do not edit by hand. -->")
    L.append("")


def _finish(L, comment_lines=3):
    """The page's text: every line after the title and the generated-file
    comment (the one line of markup) escaped."""
    return "\n".join(L[:comment_lines]
                     + [escape_markup(line) for line in L[comment_lines:]])


def render_markdown(info, mode, argv, rows, reg, scale, memory, targets, by):
    """The generated pages, {path: text}: docs/performance.md (what was
    measured, and why some operations cost what they cost) and
    docs/contributing/benchmark-targets.md (the design targets these
    figures are held to, and which were met); `argv` are the runner's
    flags."""
    return {DOCS: performance_page(info, mode, argv, rows, reg, scale, memory, by),
            TARGETS_DOCS: targets_page(info, mode, targets, memory)}


def performance_page(info, mode, argv, rows, reg, scale, memory, by):
    """The text of docs/performance.md."""
    L = []
    L.append("# Performance")
    L.append("")
    _generated(L)
    L.append("Every number on this page comes from one run of "
             "`python %s` on the machine below. Figures are "
             "nanoseconds per operation; each is also given as a ratio to a "
             "floor measured in the same run (and to a stdlib `enum.Enum` "
             "model of the same graph where one exists), so the ratios "
             "survive a noisy machine better than the absolute numbers. "
             "The design targets these figures are compared with, for those "
             "working on the package, are in "
             "[Benchmark targets](contributing/benchmark-targets.md)."
             % " ".join(["benchmarks/run.py"] + argv))
    L.append("")
    L.append("## Machine and interpreter")
    L.append("")
    for k, label in [("date", "Measured"), ("python", "Interpreter"),
                     ("compiler", "Built with"), ("platform", "Platform"),
                     ("cpu", "CPU"), ("cores", "Cores"),
                     ("stride_weave", "stride-weave")]:
        L.append("- %s: %s" % (label, info[k]))
    L.append("- Mode: %s" % mode)
    L.append("")
    L.append("## Method")
    L.append("")
    L.append(
        "The harness (`benchmarks/harness.py`) uses `timeit` only. Operands "
        "are local names of the timing function; each statement is unrolled "
        "%d times per loop iteration; the garbage collector is off while "
        "timing (as in `timeit`). Each benchmark is calibrated (which warms "
        "it up) so a sample takes about %s ms, then all benchmarks are "
        "sampled in "
        "interleaved rounds (%d counted rounds after one warm-up round) and "
        "the best sample is reported. Registration is timed in batches of "
        "100 new names, best batch reported. The scaling section runs each "
        "size in fresh child processes: one times registrations (in batches "
        "of 100; the figure is over the last 1,000, i.e. while the registry "
        "grows to the stated size) and then the lookups, with floors "
        "re-measured in that process; the other counts memory with "
        "`tracemalloc` while registering that many descriptors from an "
        "empty registry (name strings created inside the traced region)."
        % (UNROLL, info["target_ms"], info["rounds"]))
    L.append("")
    L.append("Floors (the interpreter's own cost for the same shape of "
             "operation):")
    L.append("")
    for k, v in FLOORS.items():
        L.append("- `%s`: %s (%s ns)" % (k, v, fmt_ns(by[k].ns)))
    L.append("")
    L.append("The Enum model (`EnumDType` in `benchmarks/cases.py`) is what "
             "a user might write instead: the 14 built-in categories and simple "
             "dtypes as members, a "
             "precomputed hierarchy table for `supertypes()` and "
             "`is_subtype_of`, a precomputed `structure()`, `from_name` via "
             "`_member_map_`, `registered()` as `tuple(cls)`, and pickling by "
             "name (`enum.pickle_by_enum_name`).")
    L.append("")
    L.append(BLOCK_SCALED_NOTE)
    L.append("")
    L.append("## Operations")
    L.append("")
    L.append("| group | operation | ns/op | floor | × floor | Enum ns/op | × Enum |")
    L.append("|---|---|---:|---|---:|---:|---:|")
    for g, label, ns_, floor, rf, ens, re_ in rows:
        L.append("| %s | %s | %s | %s | %s | %s | %s |"
                 % (g, label.replace("|", "\\|"), fmt_ns(ns_),
                    "`%s`" % floor if floor else "", fmt_ratio(rf),
                    fmt_ns(ens), fmt_ratio(re_)))
    L.append("| stride-weave | registering a new SimpleDType (best of %d "
             "batches of 100; mean %s ns) | %s | | — | — | — |"
             % (reg["batches"], fmt_ns(reg["mean_ns"]), fmt_ns(reg["best_ns"])))
    L.append("")
    L.append("Rows in the `reference` group are not floors: they show what "
             "the interpreter itself spends on parts of an operation (raising "
             "and catching a `KeyError`; unpickling the record "
             "payload a descriptor pickle carries; calling the reconstructor "
             "directly).")
    L.append("")
    L.append(info["c_api"] + " The C API rows build the documented example "
             "(`examples/c_api`) with setuptools; \"per item\" rows divide "
             "one pass over a list of 1,000 descriptors (the registered ones, "
             "repeated) by 1,000.")
    L.append("")
    L.append("## Scaling with the number of registered descriptors")
    L.append("")
    L.extend(scale_lines(scale, memory, md=True))
    L.append("")
    L.append("`x floor` is against a trivial C method call and `x dict.get` "
             "against a bound `dict.get` on a dict of the same size, both "
             "measured in the same child process.")
    if memory:
        m = memory[-1]
        L.append("")
        L.append("Memory at %s: %.0f bytes per descriptor (tracemalloc). Of "
                 "these, %d bytes are objects owned by one descriptor and "
                 "shared with no other (found by walking `gc.get_referents` "
                 "from two extensions with the same supertype): the "
                 "descriptor object (%d B), its name (%d B), and %d more "
                 "strings and %d tuples (%d B): the structure tuples with "
                 "their tag strings, and the `supertypes()` tuple. The rest "
                 "(about %.0f B) is the registry dict entry, the order-array "
                 "slot and allocator rounding."
                 % ("{:,}".format(m["size"]), m["bytes_per"], m["owned_bytes"],
                    m["sizeof_descriptor"], m["sizeof_name"],
                    dict(m["owned_types"]).get("str", 1) - 1,
                    dict(m["owned_types"]).get("tuple", 0),
                    m["owned_bytes"] - m["sizeof_descriptor"] - m["sizeof_name"],
                    m["bytes_per"] - m["owned_bytes"]))
    L.append("")
    L.extend(cost_notes(by))
    L.append("")
    L.append("### Lookup misses")
    L.append("")
    L.append("A hit costs %s ns (%.2fx `dict.get`): the lookup alone, because "
             "suggestions are built only after a miss. A caught miss costs "
             "%s ns (`'NoSuchDType'`) and %s ns (`'float32'`): the exception "
             "records the name, and its message, with the closest registered "
             "names, is made when it is first read. A miss and `str()` of it "
             "cost %s ns when a name equal ignoring case is found "
             "(`'float32'`, which suggests `'Float32'`) and %s ns when the "
             "names are ranked by similarity (`'Flaot32'`: difflib's ratio, "
             "computed in C against every candidate, at most %s of them on a "
             "large registry). For comparison, a caught `KeyError` from a "
             "plain dict costs %s ns (%.2fx `dict.get`)."
             % (fmt_ns(by["from_name.hit"].ns),
                ratio(by, "from_name.hit", "floor.get"),
                fmt_ns(by["from_name.miss"].ns),
                fmt_ns(by["from_name.miss_close"].ns),
                fmt_ns(by["from_name.miss_read_case"].ns),
                fmt_ns(by["from_name.miss_read_close"].ns),
                "{:,}".format(256 + 4096),
                fmt_ns(by["ref.keyerror"].ns),
                ratio(by, "ref.keyerror", "floor.get")))
    L.append("")
    return _finish(L)


def cost_notes(by):
    """The section on operations that cost more than their floor, and why:
    what the interpreter itself charges for the same shape of operation,
    measured in the same run (Markdown lines)."""
    L = ["## Why some operations cost more than their floor", "",
         "Where an operation costs more than its floor, the interpreter "
         "charges the difference for any object of the same shape; the "
         "`reference` rows measure that in the same run:", ""]
    L.append("- `is_subtype_of(other)` takes an argument, which the C "
             "call floor (`x.bit_length()`) does not: against a C call "
             "with one argument, the bound `dict.get` hit (%s ns), the "
             "hit costs %.2fx and the miss %.2fx."
             % (fmt_ns(by["floor.get"].ns),
                ratio(by, "is_subtype_of.hit", "floor.get"),
                ratio(by, "is_subtype_of.miss", "floor.get")))
    L.extend(attribute_notes(by))
    L.append("- `DType.from_name(k)` as written costs %s ns against %s ns "
             "pre-bound: the difference is the load of a class attribute "
             "(`C.x` costs %s ns), which the pre-bound `dict.get` floor does "
             "not pay."
             % (fmt_ns(by["from_name.hit_user"].ns),
                fmt_ns(by["from_name.hit"].ns),
                fmt_ns(by["floor.classattr"].ns)))
    L.append("- `DType.registered()` as written costs %s ns against %s ns "
             "pre-bound (%.2fx the C call floor): the difference is the "
             "method load from the class, which CPython 3.11 to 3.13 "
             "specialize only for classes whose metaclass is exactly "
             "`type`: a C function called from a class as written, "
             "`K.m(())` with `m = len`, costs %s ns under a metaclass and "
             "%s ns under `type`. What the call itself does is return the "
             "cached tuple after one version check, whatever the number "
             "of registered descriptors (see the scaling section)."
             % (fmt_ns(by["registered"].ns),
                fmt_ns(by["registered.bound"].ns),
                ratio(by, "registered.bound", "floor.call"),
                fmt_ns(by["ref.meta_classcall"].ns),
                fmt_ns(by["ref.type_classcall"].ns)))
    L.append("- `isinstance` against a model class: CPython answers "
             "`isinstance(x, C)` inline only when `type(C)` is exactly "
             "`type`; for any other metaclass it looks up "
             "`__instancecheck__` and calls it. The cheapest such "
             "check, a metaclass exposing `type`'s own C "
             "`__instancecheck__`, costs %s ns (%.2fx the plain "
             "non-exact match, %s ns), and an `abc.ABC` %s ns; "
             "`isinstance(Float32, DType)` costs %s ns (%.2fx of that "
             "cheapest check): the lookup and the call are what is "
             "left. A miss, `isinstance(1, DType)`, costs %s ns "
             "against %s ns for a plain class: both then read "
             "`__class__`, as `type`'s check does."
             % (fmt_ns(by["ref.isinstance_meta"].ns),
                ratio(by, "ref.isinstance_meta", "ref.isinstance_sub"),
                fmt_ns(by["ref.isinstance_sub"].ns),
                fmt_ns(by["ref.isinstance_abc"].ns),
                fmt_ns(by["isinstance.abstract"].ns),
                ratio(by, "isinstance.abstract", "ref.isinstance_meta"),
                fmt_ns(by["isinstance.miss"].ns),
                fmt_ns(by["ref.isinstance_miss"].ns)))
    L.append("- `pickle.loads` of a descriptor: unpickling the record alone "
             "costs %s ns (%.2fx `pickle.loads` of `int`), because a "
             "descriptor pickle carries its structure by design (see "
             "[the structure format](structure.md), version 2; the receiving "
             "process compares it); the rest of `pickle.loads` is the "
             "unpickler finding `_reconstruct` (an import lookup every load "
             "pays, numpy's included); `_reconstruct` itself costs %s ns."
             % (fmt_ns(by["ref.payload"].ns),
                ratio(by, "ref.payload", "floor.loads"),
                fmt_ns(by["ref.reconstruct"].ns)
                if "ref.reconstruct" in by else "—"))
    return L


def attribute_notes(by):
    """What the descriptor's attributes cost, and why (Markdown lines)."""
    import types
    from stride_weave.dtypes import DType

    getset = ("any C getset costs about what `x.real` on an int costs (%s "
              "ns, %.2fx the C call floor)"
              % (fmt_ns(by["ref.getset"].ns),
                 ratio(by, "ref.getset", "floor.call")))
    if type(DType.__dict__["name"]) is types.MemberDescriptorType:
        L = ["- `name` (with its alias `value`) and `bits` are member slots "
             "of the descriptor's layout, whose loads CPython 3.12 and later "
             "turn into a read of the slot, as for any `__slots__` "
             "attribute: `name` costs %.2fx and `bits` %.2fx a `__slots__` "
             "read. A slot is empty until the descriptor is usable and once "
             "it is rejected, and CPython then calls the model's "
             "`__getattr__`, which raises the same `ValueError` as every "
             "other accessor (see [the design notes](design.md)). That "
             "fallback has a price, which CPython charges any class with "
             "`__getattr__`. A lookup that misses calls it, and it answers "
             "by raising `AttributeError`, which `hasattr` and "
             "`getattr(..., default)` then catch: `hasattr(Float32, "
             "'nope')` costs %s ns against %s ns on a plain `__slots__` "
             "object, and %s ns on a class whose `__getattr__` is a Python "
             "function. A load CPython does not specialize (a getset, "
             "`getattr(d, name)` from C or Python) first looks "
             "`__getattr__` and `__getattribute__` up: `x.real` costs %s ns "
             "on an int and %s ns on an int subclass with `__getattr__`."
             % (ratio(by, "name", "floor.slot"),
                ratio(by, "bits", "floor.slot"),
                fmt_ns(by["attr.miss"].ns), fmt_ns(by["floor.miss"].ns),
                fmt_ns(by["ref.getattr_miss"].ns),
                fmt_ns(by["ref.getset"].ns),
                fmt_ns(by["ref.getset_hook"].ns))]
    else:
        L = ["- `name` (with its alias `value`) and `bits` are C getsets on "
             "this interpreter, and %s; `name` is %.2fx and `bits` %.2fx of "
             "`x.real`, %.2fx and %.2fx a `__slots__` read. CPython 3.12 and "
             "later read them as member slots, at the speed of a "
             "`__slots__` attribute; that needs the model's `__getattr__` "
             "(an unusable descriptor's empty slot must raise its "
             "`ValueError`), and CPython 3.11 (like free-threaded 3.13, which "
             "specializes nothing) specializes no attribute load at all on "
             "a class with `__getattr__`, its methods' included."
             % (getset, ratio(by, "name", "ref.getset"),
                ratio(by, "bits", "ref.getset"),
                ratio(by, "name", "floor.slot"),
                ratio(by, "bits", "floor.slot"))]
    if type(DType.__dict__["name"]) is types.MemberDescriptorType:
        getset += (", %s ns on a class with `__getattr__`"
                   % fmt_ns(by["ref.getset_hook"].ns))
    L.append("- `supertype` and the compound and block-scaled accessors "
             "(`simple_types`, `num_carriers`, `representation_rules`, "
             "`element`, `levels`, `num_axes`, `bits_per_element`) stay C "
             "getsets, and %s: `supertype` costs %s ns and `element` %s ns. "
             "None of them has a field of its own in the descriptor's "
             "layout to make a slot of: `supertype` is the first entry of "
             "the `supertypes()` tuple, shared by every descriptor under "
             "the same category (a slot of its own would add 8 bytes to "
             "every descriptor); the planes, rules, element, levels and "
             "storage cost live in a block only compound dtypes allocate, "
             "so categories and simple dtypes do not pay for them; and "
             "`num_carriers` and `num_axes` are counted when read."
             % (getset, fmt_ns(by["supertype"].ns), fmt_ns(by["element"].ns)))
    return L


def targets_page(info, mode, targets, memory):
    """The text of docs/contributing/benchmark-targets.md: each design
    target, what this run measured, and whether it was met."""
    L = []
    L.append("# Benchmark targets")
    L.append("")
    _generated(L)
    L.append("The descriptor model is held to the design targets below, each "
             "a ratio against a reference measured in the same run "
             "(%s, %s, %s mode; the figures, the machine and the method are "
             "on [Performance](../performance.md)). The benchmarks report "
             "them and never fail on them: a target that is not met is a "
             "place to look, and where the interpreter itself charges the "
             "difference for any object of the same shape, "
             "[Why some operations cost more than their floor]"
             "(../performance.md#why-some-operations-cost-more-than-their-floor) "
             "says so." % (info["date"], info["python"].split(" (")[0], mode))
    L.append("")
    L.append("| target | measured | met |")
    L.append("|---|---|---|")
    for t, measured, met in targets:
        L.append("| %s | %s | %s |" % (t, measured, status(met)))
    L.append("")
    missed = [t for t in targets if t[2] is False]
    L.append("%d of %d targets met, %d not met, %d not measured in this mode."
             % (sum(1 for t in targets if t[2]), len(targets), len(missed),
                sum(1 for t in targets if t[2] is None)))
    L.append("")
    if memory and max(m["bytes_per"] for m in memory) >= 250:
        m = memory[-1]
        L.append("Memory: %d of the %.0f bytes per descriptor are objects no "
                 "other descriptor shares (see the scaling section of "
                 "[Performance](../performance.md)); the descriptor object "
                 "and its name alone are %d B. The object (%d B with its "
                 "garbage-collector header) holds one pointer per field it "
                 "must answer for, including the module its pickle names so "
                 "that a receiving process can import the definition; the "
                 "rest is the registry's own entry (a dict slot and an "
                 "order-array slot)."
                 % (m["owned_bytes"], m["bytes_per"],
                    m["sizeof_descriptor"] + m["sizeof_name"],
                    m["sizeof_descriptor"]))
        L.append("")
    return _finish(L)


def c_api_summary(by):
    """One sentence on the C API rows, or why they are missing."""
    if "capi.check" not in by:
        return "C API rows skipped: %s." % cases.C_API_SKIPPED
    c, p = by["capi.check"].ns, by["capi.check.py"].ns
    lc, lp = by["capi.loop"].ns, by["capi.loop.py"].ns
    return ("C API (docs/c-api.md): the kind/bits check costs %s ns per "
            "descriptor in a C loop against %s ns in Python (%.1fx faster); "
            "one call from Python costs %s ns against %s ns for the Python "
            "expression (%.1fx)." % (fmt_ns(lc), fmt_ns(lp), lp / lc,
                                     fmt_ns(c), fmt_ns(p), p / c))



# The codecs' section of docs/performance.md: written by
# `benchmarks/codecs.py --write-docs` between these markers, kept as it is
# when this report rewrites the page.
CODEC_BEGIN = "<!-- codecs: generated by `python benchmarks/codecs.py --write-docs` -->"
CODEC_END = "<!-- codecs: end -->"


def keep_codec_section(text):
    """`text` with the codec section of the current page appended."""
    try:
        with open(DOCS, encoding="utf-8") as fh:
            old = fh.read()
    except OSError:
        return text
    start, end = old.find(CODEC_BEGIN), old.find(CODEC_END)
    if start < 0 or end < start:
        return text
    return text.rstrip("\n") + "\n\n" + old[start:end + len(CODEC_END)] + "\n"


def write_docs(pages):
    """Write the generated pages ({path: text}, as `render_markdown` makes
    them); return the path of docs/performance.md, and say where the others
    went."""
    for path, text in pages.items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if path == DOCS:
            text = keep_codec_section(text)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        if path != DOCS:
            print("wrote %s" % os.path.relpath(path))
    return DOCS
