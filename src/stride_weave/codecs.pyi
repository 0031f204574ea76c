# Type stubs for stride_weave.codecs (see codecs.py for the documentation).
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from stride_weave._dtypes import BlockScaledDType, SimpleDType

Rounding = Literal["nearest_even", "nearest_away", "toward_zero", "up", "down", "stochastic"]
Overflow = Literal["saturate", "special"]
ScaleRule = Literal["floor", "ceil", "rceil", "even", "amax"]
ScaleLayout = Literal["compact", "padded_k_major", "padded_mn_major", "swizzled_128x4"]

ROUNDINGS: tuple[str, ...]
OVERFLOWS: tuple[str, ...]
SCALE_RULES: tuple[str, ...]
SCALE_LAYOUTS: tuple[str, ...]

def set_threads(threads: int | None) -> int: ...
def get_threads() -> int: ...
def encode(
    values: Any, dtype: SimpleDType, *, rounding: Rounding | None = None,
    overflow: Overflow | None = None, nan: str | int | tuple[int, int] | None = None,
    sign: Literal["keep", "magnitude"] = "keep", seed: Any = None, out: Any = None,
    threads: int | None = None,
) -> npt.NDArray[np.unsignedinteger[Any]]: ...
def decode(
    codes: Any, dtype: SimpleDType, *, out_dtype: Any = "float32", out: Any = None,
    threads: int | None = None,
) -> npt.NDArray[Any]: ...
def pack(codes: Any, dtype: SimpleDType, *, threads: int | None = None) -> npt.NDArray[np.uint8]: ...
def unpack(
    data: Any, dtype: SimpleDType, count: int, *, threads: int | None = None
) -> npt.NDArray[np.unsignedinteger[Any]]: ...

class BlockLayout(tuple[Any, ...]):
    def __new__(
        cls, axes: Sequence[int] | None = None, *,
        order: Literal["blocked", "logical"] = "blocked", scales: ScaleLayout = "compact",
        align: int = 4, group: int = 1, batch_dims: int = 0, expand: bool = False,
    ) -> BlockLayout: ...
    @property
    def axes(self) -> tuple[int, ...] | None: ...
    @property
    def order(self) -> str: ...
    @property
    def scales(self) -> str: ...
    @property
    def align(self) -> int: ...
    @property
    def group(self) -> int: ...
    @property
    def batch_dims(self) -> int: ...
    @property
    def expand(self) -> bool: ...

class Quantized:
    dtype: BlockScaledDType
    shape: tuple[int, ...]
    layout: BlockLayout
    axis: int
    planes: tuple[npt.NDArray[np.unsignedinteger[Any]], ...]
    packed: bool
    scale_rule: str | None
    def __init__(
        self, dtype: BlockScaledDType, shape: Sequence[int], planes: Sequence[Any], *,
        axis: int | tuple[int, ...] = -1, layout: BlockLayout | None = None,
        packed: bool = True, scale_rule: str | None = None,
    ) -> None: ...
    @property
    def nbytes(self) -> tuple[int, ...]: ...
    @property
    def plane_dtypes(self) -> tuple[SimpleDType, ...]: ...
    def scale_values(self, level: int = 0) -> npt.NDArray[np.float64]: ...
    def to_arrays(self, prefix: str = "") -> tuple[dict[str, Any], dict[str, str]]: ...
    @classmethod
    def from_arrays(
        cls, arrays: Mapping[str, Any], metadata: Mapping[str, str], prefix: str = ""
    ) -> Quantized: ...

def quantize(
    values: Any, dtype: BlockScaledDType, *, axis: int | tuple[int, ...] = -1,
    layout: BlockLayout | None = None, scale_rule: ScaleRule | None = None,
    rounding: Rounding | None = None, seed: Any = None, packed: bool = True,
    amax_floor: float = 0.0, threads: int | None = None,
) -> Quantized: ...
def dequantize(
    q: Quantized, *, out_dtype: Any = "float32",
    nonfinite_scales: Literal["nan", "error"] = "nan", threads: int | None = None,
) -> npt.NDArray[Any]: ...
def relayout(q: Quantized, layout: BlockLayout) -> Quantized: ...
def plane_shapes(
    dtype: BlockScaledDType, shape: Sequence[int], *, axis: int | tuple[int, ...] = -1,
    layout: BlockLayout | None = None, packed: bool = True,
) -> tuple[tuple[int, ...], ...]: ...
def storage_nbytes(
    dtype: BlockScaledDType, shape: Sequence[int], *, axis: int | tuple[int, ...] = -1,
    layout: BlockLayout | None = None, packed: bool = True,
) -> int: ...
def is_block_aligned(
    dtype: BlockScaledDType, shape: Sequence[int], *, axis: int | tuple[int, ...] = -1,
    layout: BlockLayout | None = None,
) -> bool: ...
def scale_index(
    dtype: BlockScaledDType, shape: Sequence[int], index: Sequence[int], *,
    axis: int | tuple[int, ...] = -1, layout: BlockLayout | None = None,
) -> tuple[int, ...]: ...
def hadamard(
    values: Any, d: int = 16, *, signs: Sequence[float] | None = None, axis: int = -1
) -> npt.NDArray[np.floating[Any]]: ...
