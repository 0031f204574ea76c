"""Throughput of stride_weave.codecs beside its anchors, in one run.

    python benchmarks/codecs.py            # 64 MiB of float32, 1 and 2 threads
    python benchmarks/codecs.py --quick    # 4 MiB, for CI: it runs, timings never fail
    python benchmarks/codecs.py --json     # the numbers as one JSON document

Every figure is GB/s of float32 input (the input's bytes over the best
wall time of interleaved rounds), on 1 and 2 threads (2 threads: each half
of the rows in its own Python thread; the kernels release the GIL;
torch's own intra-op threads for torchao). The anchors, measured in the same run:

- ``numpy.copyto`` of the same array: the memory-bandwidth floor;
- ml_dtypes' ``astype`` for the element codecs (E4M3, E2M1, and back);
- torchao's CPU quantization (``to_mx``, ``NVFP4Tensor.to_nvfp4``) for
  MXFP4, MXFP8 and NVFP4, where torch and torchao are installed;
- microxcaling's MX quantization as its Python path writes it
  (``_quantize_mx``: floor(log2) shared exponents, divide, round the
  elements, multiply back), emulated in torch: microxcaling is not on PyPI.

The targets (encode and decode at least as fast as ml_dtypes; MXFP4 and
NVFP4 quantize 10x microxcaling and 5x torchao; MXFP8 at least torchao;
every quantize within 4x of copyto) are reported as met or not, never
asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time

import numpy as np

from stride_weave import codecs
from stride_weave.dtypes import DType


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


def cases(x, threads, torch_mods):
    """(key, label, callable) of every measurement on `threads` threads."""
    rows = x.shape[0]
    out = np.empty_like(x)
    codes8 = np.empty(x.shape, np.uint8)
    e4m3 = codecs.encode(x, DType.E4M3)
    e2m1 = codecs.encode(x, DType.E2M1)
    back = np.empty_like(x)
    result = [
        ("copyto", "numpy.copyto (memory floor)",
         _threaded(lambda lo, hi: np.copyto(out[lo:hi], x[lo:hi]), rows, threads)),
    ]
    for name, dtype, codes in (("e4m3", DType.E4M3, e4m3), ("e2m1", DType.E2M1, e2m1)):
        result.append((f"encode_{name}", f"encode -> {dtype.name}", _threaded(
            lambda lo, hi, d=dtype: codecs.encode(x[lo:hi], d, out=codes8[lo:hi]),
            rows, threads)))
        result.append((f"decode_{name}", f"decode {dtype.name} -> float32", _threaded(
            lambda lo, hi, d=dtype, c=codes: codecs.decode(c[lo:hi], d, out=back[lo:hi]),
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
    for key, dtype in (("mxfp4", DType.MXFP4), ("mxfp8", DType.MXFP8_E4M3),
                       ("nvfp4", DType.NVFP4)):
        result.append((f"quantize_{key}", f"quantize -> {dtype.name}", _threaded(
            lambda lo, hi, d=dtype: codecs.quantize(x[lo:hi], d), rows, threads)))
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


def measure(benches, rounds):
    best = {key: float("inf") for key, _, _ in benches}
    for r in range(rounds + 1):
        for key, _, fn in benches:
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
            if r > 0:           # the first round warms up
                best[key] = min(best[key], dt)
    return best


def _torch():
    try:
        import torch
        from torchao.prototype.mx_formats import mx_tensor, nvfp4_tensor
    except Exception:           # not installed, or not importable here
        return None
    return torch, mx_tensor, nvfp4_tensor


def targets(gbs):
    """(description, met) of each target, from the 1-thread figures."""
    result = []

    def ratio(a, b):
        return gbs[a] / gbs[b] if a in gbs and b in gbs else None

    def add(text, value, bound):
        if value is not None:
            result.append((f"{text}: {value:.2f}x (target {bound}x)", value >= bound))

    for name in ("e4m3", "e2m1"):
        add(f"encode {name} vs ml_dtypes", ratio(f"encode_{name}", f"ml_encode_{name}"), 1)
        add(f"decode {name} vs ml_dtypes", ratio(f"decode_{name}", f"ml_decode_{name}"), 1)
    add("MXFP4 quantize vs torchao", ratio("quantize_mxfp4", "torchao_mxfp4"), 5)
    add("NVFP4 quantize vs torchao", ratio("quantize_nvfp4", "torchao_nvfp4"), 5)
    add("MXFP8 quantize vs torchao", ratio("quantize_mxfp8", "torchao_mxfp8"), 1)
    add("MXFP4 quantize vs microxcaling (emulated)",
        ratio("quantize_mxfp4", "microxcaling_mxfp4"), 10)
    for key in ("mxfp4", "mxfp8", "nvfp4"):
        add(f"{key.upper()} quantize vs copyto", ratio(f"quantize_{key}", "copyto"), 0.25)
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="4 MiB, 2 rounds (CI)")
    ap.add_argument("--mib", type=int, default=None, help="input size (default 64)")
    ap.add_argument("--rounds", type=int, default=None, help="counted rounds (default 5)")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    args = ap.parse_args(argv)
    mib = args.mib or (4 if args.quick else 64)
    rounds = args.rounds or (2 if args.quick else 5)
    n = mib * (1 << 20) // 4
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32).reshape(-1, 4096)
    torch_mods = _torch()
    report = {"mib": mib, "rounds": rounds, "threads": {}}
    for threads in (1, 2):
        benches = cases(x, threads, torch_mods)
        best = measure(benches, rounds)
        report["threads"][threads] = {
            key: {"label": label, "gb_per_s": x.nbytes / best[key] / 1e9}
            for key, label, _ in benches}
    gbs = {k: v["gb_per_s"] for k, v in report["threads"][1].items()}
    report["targets"] = [{"target": t, "met": met} for t, met in targets(gbs)]
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"stride_weave.codecs: {mib} MiB of float32, best of {rounds} rounds, GB/s of input")
    print(f"{'':48} {'1 thread':>10} {'2 threads':>10}")
    for key, entry in report["threads"][1].items():
        two = report["threads"][2].get(key, {}).get("gb_per_s", float("nan"))
        print(f"{entry['label']:48} {entry['gb_per_s']:10.3f} {two:10.3f}")
    if torch_mods is None:
        print("(torch/torchao not importable: their rows are left out)")
    print("targets (1 thread):")
    for t in report["targets"]:
        print(f"  {'met   ' if t['met'] else 'not met'} {t['target']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
