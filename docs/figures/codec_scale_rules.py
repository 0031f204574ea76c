"""Plot the quantization error of each MXFP4 scale rule (docs/codecs.md).

    python docs/figures/codec_scale_rules.py    # rewrite codec-scale-rules.svg

Needs matplotlib (pip install matplotlib) and numpy. For blocks of 32
normal values scaled so that the block's largest magnitude sits at a given
place in its binade (amax / 2**floor(log2(amax)), from 1 to 2), the figure
shows the root-mean-square error of dequantize(quantize(x)) relative to the
block's largest magnitude, for each scale rule, averaged over many blocks.
Drawn with stride_weave.codecs itself.
"""

import pathlib

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from stride_weave import codecs  # noqa: E402
from stride_weave.dtypes import DType  # noqa: E402

OUT = pathlib.Path(__file__).resolve().with_name("codec-scale-rules.svg")
RULES = ["floor", "ceil", "rceil", "even"]


def errors(rule, positions, blocks=400, seed=0):
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((blocks, 32))
    base /= np.abs(base).max(axis=1, keepdims=True)     # amax 1 in every block
    result = []
    for p in positions:
        x = (base * p).astype(np.float32)
        y = codecs.dequantize(codecs.quantize(x, DType.MXFP4, scale_rule=rule),
                              out_dtype="float64")
        result.append(np.sqrt(np.mean(((y - x) / p) ** 2)))
    return np.array(result)


def main():
    plt.rcParams["svg.hashsalt"] = "stride-weave"
    positions = np.linspace(1.0, 1.999, 120)
    fig, ax = plt.subplots(figsize=(7, 3.6), dpi=100)
    for rule, style in zip(RULES, ["-", "--", "-.", ":"]):
        ax.plot(positions, errors(rule, positions), style, label=rule, linewidth=1.6)
    ax.set_xlabel("block's largest magnitude / 2**floor(log2(it))")
    ax.set_ylabel("RMS error / largest magnitude")
    ax.set_title("MXFP4: quantization error per scale rule (blocks of 32 normal values)")
    ax.legend(title="scale_rule")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(OUT, metadata={"Date": None, "Creator": None})


if __name__ == "__main__":
    main()
