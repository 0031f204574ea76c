"""Throughput of stride_weave.codecs beside its anchors, in one run.

    python benchmarks/codecs.py            # 64 MiB of float32, 1 and 2 threads
    python benchmarks/codecs.py --quick    # 4 MiB, for CI: it runs, timings never fail
    python benchmarks/codecs.py --json     # the numbers as one JSON document

Every figure is GB/s of float32 input (the input's bytes over the best of
interleaved rounds; for dequantize and relayout, of the float32 input the
planes came from; for float64 and float16 sources, of the same values as
float32, so that rows compare elements per second). Each round runs every case on 1 thread and then at once
on 2, so a row's two figures are taken under the same conditions. Two
clocks:

- "1 thread, CPU": the calling thread's CPU time (``time.thread_time``):
  every codec call here runs on that thread (``threads=1``), and CPU time
  keeps most of the noise of other load on a shared machine out (a busy
  memory bus still shows). The targets are read from this column.
- wall time (``time.perf_counter``) on 1 and 2 threads: 2 threads either
  split the rows over two Python threads (each call ``threads=1``; the
  kernels release the GIL) or, in the "engine threads" rows, make one call
  with ``threads=2``; torch uses its own intra-op threads for torchao.

The anchors, measured in the same run:

- ``numpy.copyto`` of the same array: the memory-bandwidth floor, and
  copying into a fresh array (the page faults any call that returns a new
  array pays: dequantize's output);
- ml_dtypes' ``astype`` for the element codecs (E4M3, E2M1, E8M0, and
  back), numpy's ``astype`` for Int8;
- copying a quantized tensor's planes, for ``relayout``;
- torchao's CPU quantization (``to_mx``, ``NVFP4Tensor.to_nvfp4``) for
  MXFP4, MXFP8 and NVFP4, where torch and torchao are installed;
- microxcaling's MX quantization as its Python path writes it
  (``_quantize_mx``: floor(log2) shared exponents, divide, round the
  elements, multiply back), emulated in torch: microxcaling is not on PyPI.

The targets (the speeds the codecs and the block layouts are designed
for) are reported as met or not, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time

import numpy as np

from stride_weave import codecs, formats
from stride_weave.codecs import BlockLayout
from stride_weave.dtypes import DType

ROUNDINGS = ("nearest_even", "toward_zero", "up", "down", "nearest_away", "stochastic")

SWIZZLED = BlockLayout(scales="swizzled_128x4")

# (key, label, format, layout or None): every quantize and dequantize
# measured; the first five are the one-axis formats, the rest the block
# layouts' recipes.
BLOCK_CASES = (
    ("mxfp4", "MXFP4", DType.MXFP4, None),
    ("mxfp6", "MXFP6_E2M3", DType.MXFP6_E2M3, None),
    ("mxfp8", "MXFP8_E4M3", DType.MXFP8_E4M3, None),
    ("mxint8", "MXINT8", DType.MXINT8, None),
    ("nvfp4", "NVFP4", DType.NVFP4, None),
    ("nvfp4_16x16", "NVFP4_16x16", formats.NVFP4_16x16, None),
    ("nvfp4_16x16_sw", "NVFP4_16x16 swizzled", formats.NVFP4_16x16, SWIZZLED),
    ("mxfp8_rows_sw", "MXFP8 row-wise swizzled", DType.MXFP8_E4M3,
     BlockLayout((-1,), scales="swizzled_128x4")),
    ("mxfp8_cols_sw", "MXFP8 column-wise swizzled", DType.MXFP8_E4M3,
     BlockLayout((-2,), order="logical", scales="swizzled_128x4")),
    ("mxfp8_32x32", "MXFP8_E4M3_32x32", formats.MXFP8_E4M3_32x32, None),
    ("fp8_128x128", "FP8_E4M3_128x128", formats.FP8_E4M3_128x128, None),
    ("fp8_1x128_mn", "FP8_E4M3_1x128 padded_mn_major", formats.FP8_E4M3_1x128,
     BlockLayout(scales="padded_mn_major")),
)
CODEC_SPEC = ("mxfp4", "mxfp6", "mxfp8", "mxint8", "nvfp4")

# relayout compact -> swizzled_128x4
RELAYOUT_CASES = (
    ("mxfp8", "MXFP8_E4M3", DType.MXFP8_E4M3),
    ("nvfp4", "NVFP4", DType.NVFP4),
    ("nvfp4_16x16", "NVFP4_16x16", formats.NVFP4_16x16),
)

# one call with the engine's own threads
ENGINE_CASES = (
    ("mxfp4", "MXFP4", DType.MXFP4),
    ("mxfp8", "MXFP8_E4M3", DType.MXFP8_E4M3),
    ("nvfp4", "NVFP4", DType.NVFP4),
)


def _split(rows, threads):
    step = -(-rows // threads)
    return [(i, min(rows, i + step)) for i in range(0, rows, step)]


def _threaded(fn, rows, threads):
    """fn(lo, hi) over the rows, on `threads` Python threads."""
    if threads == 1:
        return lambda: fn(0, rows)

    def run():
        workers = [threading.Thread(target=fn, args=span) for span in _split(rows, threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    return run


def _per_span(fn, rows, threads):
    """fn(k) for the k-th span of the split: something made once per span
    (the quantized halves a threaded dequantize reads)."""
    return [fn(lo, hi) for lo, hi in _split(rows, threads)]


def cases(x, threads, torch_mods):
    """(key, label, callable) of every measurement on `threads` threads."""
    rows = x.shape[0]
    spans = _split(rows, threads)
    out = np.empty_like(x)
    codes8 = np.empty(x.shape, np.uint8)
    e4m3 = codecs.encode(x, DType.E4M3, threads=1)
    e2m1 = codecs.encode(x, DType.E2M1, threads=1)
    back = np.empty_like(x)
    result = [
        ("copyto", "numpy.copyto (memory floor)",
         _threaded(lambda lo, hi: np.copyto(out[lo:hi], x[lo:hi]), rows, threads)),
        ("copy_fresh", "numpy.copyto into a new array",
         _threaded(lambda lo, hi: np.copyto(np.empty_like(x[lo:hi]), x[lo:hi]), rows,
                   threads)),
    ]
    for rounding in ROUNDINGS:
        seed = 1 if rounding == "stochastic" else None
        result.append((f"encode_e4m3_{rounding}", f"encode -> E4M3 {rounding}", _threaded(
            lambda lo, hi, r=rounding, s=seed: codecs.encode(
                x[lo:hi], DType.E4M3, rounding=r, seed=s, out=codes8[lo:hi], threads=1),
            rows, threads)))
    result.append(("encode_e2m1", "encode -> E2M1", _threaded(
        lambda lo, hi: codecs.encode(x[lo:hi], DType.E2M1, out=codes8[lo:hi], threads=1),
        rows, threads)))
    result.append(("encode_e8m0", "encode -> E8M0", _threaded(
        lambda lo, hi: codecs.encode(x[lo:hi], DType.E8M0, out=codes8[lo:hi], threads=1),
        rows, threads)))
    result.append(("encode_int8", "encode -> Int8", _threaded(
        lambda lo, hi: codecs.encode(x[lo:hi], DType.Int8, out=codes8[lo:hi], threads=1),
        rows, threads)))
    result.append(("np_int8", "numpy astype int8", _threaded(
        lambda lo, hi: x[lo:hi].astype(np.int8), rows, threads)))
    # the same values from the other source types (64-bit and widened lanes)
    for sname, src in (("float64", x.astype(np.float64)), ("float16", x.astype(np.float16))):
        for rounding in (("nearest_even", "toward_zero", "up") if sname == "float64"
                         else ("nearest_even",)):
            result.append((f"encode_{sname}_e4m3_{rounding}",
                           f"encode {sname} -> E4M3 {rounding}", _threaded(
                lambda lo, hi, r=rounding, v=src: codecs.encode(
                    v[lo:hi], DType.E4M3, rounding=r, out=codes8[lo:hi], threads=1),
                rows, threads)))
    for name, dtype, codes in (("e4m3", DType.E4M3, e4m3), ("e2m1", DType.E2M1, e2m1)):
        result.append((f"decode_{name}", f"decode {dtype.name} -> float32", _threaded(
            lambda lo, hi, d=dtype, c=codes: codecs.decode(c[lo:hi], d, out=back[lo:hi],
                                                           threads=1),
            rows, threads)))
    try:
        import ml_dtypes
    except ImportError:
        ml_dtypes = None
    if ml_dtypes is not None:
        for name, t, codes in (("e4m3", ml_dtypes.float8_e4m3fn, e4m3),
                               ("e2m1", ml_dtypes.float4_e2m1fn, e2m1)):
            result.append((f"ml_encode_{name}", f"ml_dtypes astype -> {name}", _threaded(
                lambda lo, hi, t=t: x[lo:hi].astype(t), rows, threads)))
            view = codes.view(t)
            result.append((f"ml_decode_{name}", f"ml_dtypes astype {name} -> float32",
                           _threaded(lambda lo, hi, v=view: v[lo:hi].astype(np.float32),
                                     rows, threads)))
        if hasattr(ml_dtypes, "float8_e8m0fnu"):
            result.append(("ml_encode_e8m0", "ml_dtypes astype -> e8m0fnu", _threaded(
                lambda lo, hi: x[lo:hi].astype(ml_dtypes.float8_e8m0fnu), rows, threads)))
    for key, label, dtype, layout in BLOCK_CASES:
        kw = {} if layout is None else {"layout": layout}
        result.append((f"quantize_{key}", f"quantize {label}", _threaded(
            lambda lo, hi, d=dtype, kw=kw: codecs.quantize(x[lo:hi], d, threads=1, **kw),
            rows, threads)))
        parts = _per_span(lambda lo, hi, d=dtype, kw=kw: codecs.quantize(
            x[lo:hi], d, threads=1, **kw), rows, threads)
        result.append((f"dequantize_{key}", f"dequantize {label}", _threaded(
            lambda lo, hi, p=parts: codecs.dequantize(p[spans.index((lo, hi))], threads=1),
            rows, threads)))
    for key, label, dtype in RELAYOUT_CASES:
        parts = _per_span(lambda lo, hi, d=dtype: codecs.quantize(x[lo:hi], d, threads=1),
                          rows, threads)
        result.append((f"copy_planes_{key}", f"copy the planes of {label}", _threaded(
            lambda lo, hi, p=parts: [a.copy() for a in p[spans.index((lo, hi))].planes],
            rows, threads)))
        result.append((f"relayout_{key}", f"relayout {label} -> swizzled_128x4", _threaded(
            lambda lo, hi, p=parts: codecs.relayout(p[spans.index((lo, hi))], SWIZZLED),
            rows, threads)))
    for key, label, dtype in ENGINE_CASES:
        q = codecs.quantize(x, dtype, threads=1)
        result.append((f"engine_quantize_{key}", f"quantize {label}, engine threads", (
            lambda d=dtype: codecs.quantize(x, d, threads=threads))))
        result.append((f"engine_dequantize_{key}", f"dequantize {label}, engine threads", (
            lambda q=q: codecs.dequantize(q, threads=threads))))
    if torch_mods is not None:
        torch, mx, nvfp4 = torch_mods
        t = torch.from_numpy(x)

        def torch_threads(fn):
            def run():
                torch.set_num_threads(threads)
                fn()
            return run

        result.append(("torchao_mxfp4", "torchao to_mx MXFP4 (CPU)", torch_threads(
            lambda: mx.to_mx(t, torch.float4_e2m1fn_x2, 32))))
        result.append(("torchao_mxfp8", "torchao to_mx MXFP8 E4M3 (CPU)", torch_threads(
            lambda: mx.to_mx(t, torch.float8_e4m3fn, 32))))
        result.append(("torchao_nvfp4", "torchao NVFP4Tensor.to_nvfp4 (CPU)", torch_threads(
            lambda: nvfp4.NVFP4Tensor.to_nvfp4(
                t, per_tensor_scale=nvfp4.per_tensor_amax_to_scale(t.abs().max())))))
        result.append(("microxcaling_mxfp4", "microxcaling _quantize_mx MXFP4 (emulated)",
                       torch_threads(lambda: _microxcaling_mxfp4(torch, t))))
    return result


def _microxcaling_mxfp4(torch, a):
    """microxcaling's Python quantization path as written (mx/mx_ops.py
    _quantize_mx with _shared_exponents and the element rounding of
    mx/elemwise_ops.py), for E2M1 elements: what its CPU users run."""
    blocks = a.reshape(a.shape[0], -1, 32)
    amax = torch.max(torch.abs(blocks), dim=-1, keepdim=True).values
    shared = torch.floor(torch.log2(amax + 2.0**-126 * (amax == 0).type(amax.dtype)))
    shared = shared - 2
    shared[shared > 127] = float("nan")
    shared[shared < -127] = -127
    scaled = blocks / (2 ** shared)
    private = torch.floor(torch.log2(torch.abs(scaled) + (scaled == 0).type(scaled.dtype)))
    private = private.clip(min=0)
    step = 2.0 ** (private - 1)
    rounded = torch.sign(scaled) * torch.floor(torch.abs(scaled) / step + 0.5) * step
    rounded = torch.clamp(rounded, min=-6.0, max=6.0)
    return (rounded * (2 ** shared)).reshape(a.shape)


def measure(sets, rounds):
    """The best wall time and the best calling-thread CPU time of each
    case of each set (the same cases on 1 and on 2 threads).  Every round
    runs each case on 1 thread and at once on 2, so that the two figures
    of a row see the same machine: on a shared machine, load that comes
    and goes between a 1-thread pass and a later 2-thread pass would
    otherwise be read as (poor or super-linear) scaling.  A call's result
    is dropped after its clock stops: freeing a large array is the
    caller's cost, not the call's."""
    wall = [{key: float("inf") for key, _, _ in benches} for benches in sets]
    cpu = [dict(w) for w in wall]
    for r in range(rounds + 1):
        for row in zip(*sets):
            for i, (key, _, fn) in enumerate(row):
                c0 = time.thread_time()
                t0 = time.perf_counter()
                result = fn()
                dt = time.perf_counter() - t0
                dc = time.thread_time() - c0
                del result
                if r > 0:       # the first round warms up
                    wall[i][key] = min(wall[i][key], dt)
                    cpu[i][key] = min(cpu[i][key], dc)
    return wall, cpu


def _torch():
    try:
        import torch
        from torchao.prototype.mx_formats import mx_tensor, nvfp4_tensor
    except Exception:           # not installed, or not importable here
        return None
    return torch, mx_tensor, nvfp4_tensor


def targets(cpu, wall1, wall2):
    """(description, met) of each target: ratios of the 1-thread CPU
    figures, thread scaling from the wall figures."""
    result = []

    def ratio(a, b, gbs=cpu):
        return gbs[a] / gbs[b] if a in gbs and b in gbs and gbs[b] > 0 else None

    def add(text, value, bound):
        if value is not None:
            result.append((f"{text}: {value:.3f}x (target {bound:.3g}x)", value >= bound))

    for name in ("e4m3", "e2m1"):
        add(f"encode {name} vs ml_dtypes", ratio(f"encode_{name}" if name == "e2m1"
                                                 else "encode_e4m3_nearest_even",
                                                 f"ml_encode_{name}"), 1)
        add(f"decode {name} vs ml_dtypes", ratio(f"decode_{name}", f"ml_decode_{name}"), 1)
    add("encode e8m0 vs ml_dtypes", ratio("encode_e8m0", "ml_encode_e8m0"), 1)
    add("encode Int8 vs numpy astype", ratio("encode_int8", "np_int8"), 1)
    add("encode E4M3 nearest_even vs copyto", ratio("encode_e4m3_nearest_even", "copyto"),
        0.5)
    for rounding in ROUNDINGS[1:]:
        add(f"encode E4M3 {rounding} vs nearest_even",
            ratio(f"encode_e4m3_{rounding}", "encode_e4m3_nearest_even"),
            0.33 if rounding == "stochastic" else 0.5)
    for key, label, _, _ in BLOCK_CASES:
        for op in ("quantize", "dequantize"):
            add(f"{op} {label} vs copyto (within 4x)", ratio(f"{op}_{key}", "copyto"), 0.25)
    for key in CODEC_SPEC:
        label = dict((k, v) for k, v, _, _ in BLOCK_CASES)[key]
        for op in ("quantize", "dequantize"):
            add(f"{op} {label} vs copyto (within 3x)", ratio(f"{op}_{key}", "copyto"), 1 / 3)
    for key, label, _ in RELAYOUT_CASES:
        add(f"relayout {label} vs copying its planes (within 4x)",
            ratio(f"relayout_{key}", f"copy_planes_{key}"), 0.25)
    add("MXFP4 quantize vs torchao", ratio("quantize_mxfp4", "torchao_mxfp4"), 5)
    add("NVFP4 quantize vs torchao", ratio("quantize_nvfp4", "torchao_nvfp4"), 5)
    add("MXFP8 quantize vs torchao", ratio("quantize_mxfp8", "torchao_mxfp8"), 1)
    add("MXFP4 quantize vs microxcaling (emulated)",
        ratio("quantize_mxfp4", "microxcaling_mxfp4"), 10)
    for key, label, _ in ENGINE_CASES:
        for op in ("quantize", "dequantize"):
            k = f"engine_{op}_{key}"
            if k in wall1 and k in wall2:
                add(f"{op} {label}: engine threads=2 vs threads=1 (wall)",
                    wall2[k] / wall1[k], 1.7)
    return result


def _load():
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def write_docs(report, with_torch):
    """Put the run's figures into the codecs' section of
    docs/performance.md (between its markers; the rest of the page is
    benchmarks/run.py's), and return the page's path."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import report as pages      # benchmarks/report.py: the page and the machine

    info = pages.machine_info()
    one, two = report["threads"][1], report["threads"][2]
    floor = one["copyto"]["gb_per_s_cpu"]
    loads = [f"{v:.1f}" for v in report["load"] if v is not None]
    lines = [
        pages.CODEC_BEGIN,
        "",
        "## Codecs",
        "",
        f"One run of `python benchmarks/codecs.py --write-docs` ({info['date']}): "
        f"{report['mib']} MiB of normally distributed float32 values, shape "
        "(rows, 4096), best of "
        f"{report['rounds']} interleaved rounds after one warm-up round (each "
        "round runs every case on 1 thread, then at once on 2). Machine: "
        f"{info['cpu']}, {info['cores']}, {info['platform']}, {info['python']}, built "
        f"with {info['compiler']}. The machine is shared with other work (load "
        f"average {' then '.join(loads) or 'unknown'} over the run, on 2 cores), so "
        "the 1-thread figures are the calling thread's CPU time "
        "(`time.thread_time`), which leaves the other load's time out (not its use "
        "of the memory bus and caches), and every ratio is against `numpy.copyto` "
        "measured in the same run. The 2-thread figures are wall time and suffer "
        "the other load in full.",
        "",
        "GB/s of float32 input (for dequantize and relayout, of the input the "
        "planes were made from; for float64 and float16 sources, of the same values "
        "as float32); `x copyto` is the 1-thread CPU figure over "
        "`numpy.copyto`'s.",
        "",
        "| operation | 1 thread, CPU | x copyto | 1 thread, wall | 2 threads, wall |",
        "|---|---:|---:|---:|---:|",
    ]
    for key, entry in one.items():
        c = entry.get("gb_per_s_cpu")
        w2 = two.get(key, {}).get("gb_per_s")
        lines.append(f"| {entry['label']} | {c:.2f} | {c / floor:.2f} | "
                     f"{entry['gb_per_s']:.2f} | {w2:.2f} |" if c and w2 else
                     f"| {entry['label']} | — | — | {entry['gb_per_s']:.2f} | — |")
    lines += [
        "",
        "2 threads: the rows split over two Python threads (each call "
        "`threads=1`), but for the rows marked \"engine threads\": one call with "
        "`threads=2`." + ("" if with_torch else " torch and torchao were not "
                          "installed: their rows and targets are left out."),
        "",
        "Targets (met or not in this run; ratios of the 1-thread CPU figures, "
        "thread scaling of the wall figures):",
        "",
    ]
    for t in report["targets"]:
        lines.append(f"- {'met' if t['met'] else '**not met**'}: {t['target']}")
    missed = [t["target"] for t in report["targets"] if not t["met"]]
    lines += ["", f"{len(missed)} of {len(report['targets'])} targets missed in this run."]
    lines += ["", pages.CODEC_END, ""]
    section = "\n".join(lines)
    try:
        with open(pages.DOCS, encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        text = ""
    start, end = text.find(pages.CODEC_BEGIN), text.find(pages.CODEC_END)
    if start >= 0 and end > start:
        text = text[:start] + section.rstrip("\n") + text[end + len(pages.CODEC_END):]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(pages.DOCS, "w", encoding="utf-8") as fh:
        fh.write(text)
    return os.path.relpath(pages.DOCS)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="4 MiB, 2 rounds (CI)")
    ap.add_argument("--mib", type=int, default=None, help="input size (default 64)")
    ap.add_argument("--rounds", type=int, default=None, help="counted rounds (default 5)")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    ap.add_argument("--write-docs", action="store_true",
                    help="write the codecs' section of docs/performance.md")
    args = ap.parse_args(argv)
    mib = args.mib or (4 if args.quick else 64)
    rounds = args.rounds or (2 if args.quick else 5)
    n = mib * (1 << 20) // 4
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32).reshape(-1, 4096)
    torch_mods = _torch()
    report = {"mib": mib, "rounds": rounds, "threads": {}, "load": [_load()]}
    gb = x.nbytes / 1e9
    sets = [cases(x, threads, torch_mods) for threads in (1, 2)]
    walls, cpus = measure(sets, rounds)
    for threads, benches, wall, cpu in zip((1, 2), sets, walls, cpus):
        report["threads"][threads] = {
            key: {"label": label, "gb_per_s": gb / wall[key],
                  **({"gb_per_s_cpu": gb / cpu[key]} if threads == 1 and cpu[key] > 0
                     else {})}
            for key, label, _ in benches}
    report["load"].append(_load())
    one, two = report["threads"][1], report["threads"][2]
    cpu = {k: v["gb_per_s_cpu"] for k, v in one.items() if "gb_per_s_cpu" in v}
    wall1 = {k: v["gb_per_s"] for k, v in one.items()}
    wall2 = {k: v["gb_per_s"] for k, v in two.items()}
    report["targets"] = [{"target": t, "met": met} for t, met in targets(cpu, wall1, wall2)]
    if args.json:
        print(json.dumps(report))
        return 0
    if args.write_docs:
        print("wrote %s" % write_docs(report, torch_mods is not None))
    print(f"stride_weave.codecs: {mib} MiB of float32, best of {rounds} rounds, GB/s of input")
    print(f"{'':52} {'1 thread':>9} {'1 thread':>9} {'2 threads':>9}")
    print(f"{'':52} {'CPU':>9} {'wall':>9} {'wall':>9}")
    for key, entry in one.items():
        c = entry.get("gb_per_s_cpu", float("nan"))
        w2 = two.get(key, {}).get("gb_per_s", float("nan"))
        print(f"{entry['label']:52} {c:9.3f} {entry['gb_per_s']:9.3f} {w2:9.3f}")
    if torch_mods is None:
        print("(torch/torchao not importable: their rows are left out)")
    print("targets (ratios of the 1-thread CPU column; thread scaling of the wall columns):")
    for t in report["targets"]:
        print(f"  {'met    ' if t['met'] else 'not met'} {t['target']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
