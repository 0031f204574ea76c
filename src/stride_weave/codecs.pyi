# Type stubs for stride_weave.codecs (see codecs.py for the documentation).
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from stride_weave._dtypes import BlockScaledDType, SimpleDType

Rounding = Literal["nearest_even", "nearest_away", "toward_zero", "up", "down", "stochastic"]
Overflow = Literal["saturate", "special"]
ScaleRule = Literal["floor", "ceil", "rceil", "even", "amax"]

ROUNDINGS: tuple[str, ...]
OVERFLOWS: tuple[str, ...]
SCALE_RULES: tuple[str, ...]

def encode(
    values: Any, dtype: SimpleDType, *, rounding: Rounding | None = None,
    overflow: Overflow | None = None, nan: str | int | None = None, seed: Any = None,
    out: Any = None,
) -> npt.NDArray[np.unsignedinteger[Any]]: ...
def decode(
    codes: Any, dtype: SimpleDType, *, out_dtype: Any = "float32", out: Any = None
) -> npt.NDArray[np.floating[Any]]: ...
def pack(codes: Any, dtype: SimpleDType) -> npt.NDArray[np.uint8]: ...
def unpack(data: Any, dtype: SimpleDType, count: int) -> npt.NDArray[np.unsignedinteger[Any]]: ...

class Quantized:
    dtype: BlockScaledDType
    shape: tuple[int, ...]
    axis: int
    planes: tuple[npt.NDArray[np.unsignedinteger[Any]], ...]
    packed: bool
    scale_rule: str | None
    def __init__(
        self, dtype: BlockScaledDType, shape: Sequence[int], planes: Sequence[Any], *,
        axis: int = -1, packed: bool = True, scale_rule: str | None = None,
    ) -> None: ...
    @property
    def nbytes(self) -> tuple[int, ...]: ...

def quantize(
    values: Any, dtype: BlockScaledDType, *, axis: int = -1,
    scale_rule: ScaleRule | None = None, rounding: Rounding | None = None, seed: Any = None,
    packed: bool = True,
) -> Quantized: ...
def dequantize(
    q: Quantized, *, out_dtype: Any = "float32",
    nonfinite_scales: Literal["nan", "error"] = "nan",
) -> npt.NDArray[np.floating[Any]]: ...
def plane_shapes(
    dtype: BlockScaledDType, shape: Sequence[int], *, axis: int = -1, packed: bool = True
) -> tuple[tuple[int, ...], ...]: ...
def storage_nbytes(
    dtype: BlockScaledDType, shape: Sequence[int], *, axis: int = -1, packed: bool = True
) -> int: ...
def is_block_aligned(dtype: BlockScaledDType, shape: Sequence[int], *, axis: int = -1) -> bool: ...
