# Type stubs for the C extension stride_weave._dtypes.
#
# The runtime module is checked against this file by
# `python -m mypy.stubtest stride_weave._dtypes stride_weave.dtypes`.
# Private implementation bases of the C types (_DescriptorBase, _CategoryInit,
# _SimpleInit, _CompoundInit, _BlockScaledInit, _RuleBase, _LevelExtentImpl)
# are not part of the API and are not
# modelled: their members are declared on the public classes here.
#
# Note: `Any` is a built-in descriptor (`DType.Any`), so `typing.Any` is not
# imported under that name in this file.

from collections.abc import Callable, Iterable
from typing import ClassVar, Final, Literal, NoReturn, Self, SupportsIndex, final

from stride_weave._typing import (
    RepresentationValidationContext,
    Structure,
    StructureExtension,
)

# (reconstructor, (name, structure)) for built-ins, (reconstructor, (name,
# structure, module)) for extensions: module is where the receiving process
# may import the definition from (docs/pickling.md).
_Reduced = (
    tuple[Callable[[str, Structure], DType], tuple[str, Structure]]
    | tuple[Callable[[str, Structure, str | None], DType], tuple[str, Structure, str]]
)

@final
class DTypeMeta(type):
    """Metaclass of every descriptor class (cannot be subclassed).

    Accepts one class keyword, `abstract` (default True); `abstract=False`
    makes the class constructible.
    """

    def __new__(
        mcls,
        name: str,
        bases: tuple[type, ...],
        namespace: dict[str, object],
        /,
        *,
        abstract: bool = True,
    ) -> DTypeMeta: ...
    def __init__(
        self,
        name: str,
        bases: tuple[type, ...],
        namespace: dict[str, object],
        /,
        *,
        abstract: bool = True,
    ) -> None: ...

class DType(metaclass=DTypeMeta):
    """Abstract base of every dtype descriptor."""

    # The built-in graph (plain class attributes of DType).
    Any: ClassVar[DTypeCategory]
    Floating: ClassVar[DTypeCategory]
    Integer: ClassVar[DTypeCategory]
    Bool: ClassVar[SimpleDType]
    Int32: ClassVar[SimpleDType]
    Int8: ClassVar[SimpleDType]
    Float32: ClassVar[SimpleDType]
    Float64: ClassVar[SimpleDType]
    E8M0: ClassVar[SimpleDType]
    E5M2: ClassVar[SimpleDType]
    E4M3: ClassVar[SimpleDType]
    E3M2: ClassVar[SimpleDType]
    E2M3: ClassVar[SimpleDType]
    E2M1: ClassVar[SimpleDType]
    MXFP8_E4M3: ClassVar[BlockScaledDType]
    MXFP8_E5M2: ClassVar[BlockScaledDType]
    MXFP6_E3M2: ClassVar[BlockScaledDType]
    MXFP6_E2M3: ClassVar[BlockScaledDType]
    MXFP4: ClassVar[BlockScaledDType]
    MXINT8: ClassVar[BlockScaledDType]
    NVFP4: ClassVar[BlockScaledDType]

    @property
    def name(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def supertype(self) -> DTypeCategory | None: ...
    def supertypes(self) -> tuple[DTypeCategory, ...]: ...
    def is_subtype_of(self, other: DType, /) -> bool: ...
    def is_category(self) -> bool: ...
    def is_simple(self) -> bool: ...
    def is_compound(self) -> bool: ...
    def structure(self) -> Structure: ...
    def structure_extension(self) -> StructureExtension: ...
    @classmethod
    def from_name(cls, name: str, /) -> Self: ...
    @classmethod
    def registered(cls) -> tuple[Self, ...]: ...
    # str() is the registered name; format() formats it like a str.
    def __format__(self, format_spec: str, /) -> str: ...
    # The constructor's arguments (they differ per class, and a subclass's
    # __init__ defines its own), hence `object`.
    @classmethod
    def ensure(cls, *args: object, **kwargs: object) -> Self: ...
    def __reduce__(self) -> _Reduced: ...
    def __reduce_ex__(self, protocol: SupportsIndex, /) -> _Reduced: ...
    def __copy__(self) -> Self: ...
    def __deepcopy__(self, memo: object, /) -> Self: ...

class DTypeCategory(DType):
    """A category: a relationship identity in the supertype hierarchy."""

    def __init__(self, name: str, *, supertype: DTypeCategory | None = None) -> None: ...

class SimpleDType(DType):
    """A simple dtype: one fixed-width scalar encoding beneath a category.

    Give what its bits mean at construction: ``numeric_info=record``."""

    def __init__(self, name: str, *, bits: int, supertype: DTypeCategory,
                 numeric_info: NumericInfo | None = None) -> None: ...
    @property
    def bits(self) -> int: ...
    # A simple dtype always has a category as its supertype.
    @property
    def supertype(self) -> DTypeCategory: ...

class CompoundDType(DType):
    """Abstract base of compound dtypes stored in several simple-dtype planes."""

    def __init__(
        self,
        name: str,
        *,
        supertype: DTypeCategory | None = None,
        simple_types: Iterable[SimpleDType],
        representation_rules: Iterable[RepresentationRule] = (),
    ) -> None: ...
    @property
    def simple_types(self) -> tuple[SimpleDType, ...]: ...
    @property
    def num_carriers(self) -> int: ...
    @property
    def representation_rules(self) -> tuple[RepresentationRule, ...]: ...

class BlockScaledDType(CompoundDType):
    """A compound dtype: an encoded element times one scale per level.

    Concrete; planes `(element, *scales)`, rules one LevelExtent per level,
    supertype `DType.Any`; unique by structure. Only level 0 may have an N-D
    (tuple) block, and every later level is then Whole.
    """

    def __init__(
        self, name: str, *, element: SimpleDType, levels: Iterable[Level]
    ) -> None: ...
    @property
    def element(self) -> SimpleDType: ...
    @property
    def levels(self) -> tuple[Level, ...]: ...
    @property
    def num_axes(self) -> int: ...
    @property
    def block_shape(self) -> tuple[int, ...] | None: ...
    @property
    def bits_per_element(self) -> float | SymbolicBits: ...
    # A block-scaled dtype's supertype is always DType.Any.
    @property
    def supertype(self) -> DTypeCategory: ...

@final
class RuleMeta(type):
    """Metaclass of RepresentationRule and its subclasses (cannot be subclassed).

    Accepts no class keywords.
    """

    def __new__(
        mcls, name: str, bases: tuple[type, ...], namespace: dict[str, object], /
    ) -> RuleMeta: ...

class RepresentationRule(metaclass=RuleMeta):
    """Base class of declarative, immutable representation rules.

    Subclasses implement validate(context). Rules are not picklable on their
    own; they travel inside their compound dtype's structure.
    """

    def structure(self) -> Structure: ...
    def structure_extension(self) -> StructureExtension: ...
    def validate(self, context: RepresentationValidationContext, /) -> None: ...
    def __copy__(self) -> Self: ...
    def __deepcopy__(self, memo: object, /) -> Self: ...
    def __reduce__(self) -> NoReturn: ...
    def __reduce_ex__(self, protocol: SupportsIndex, /) -> NoReturn: ...

class LevelExtent(RepresentationRule):
    """The rule of one scale level: on adjacent edge `level`, every `extent`
    coordinates of level `level` (the product of a tuple extent) map onto one
    coordinate of level `level + 1` (Whole: all of them onto one)."""

    def __init__(self, level: int, extent: int | tuple[int, ...] | WholeExtent) -> None: ...
    @property
    def level(self) -> int: ...
    @property
    def extent(self) -> int | tuple[int, ...] | WholeExtent: ...

@final
class WholeExtent:
    """The type of Whole; calling it returns the one instance, Whole."""

    def __new__(cls) -> WholeExtent: ...
    def __reduce__(self) -> str: ...
    def __copy__(self) -> WholeExtent: ...
    def __deepcopy__(self, memo: object, /) -> WholeExtent: ...

Whole: Final[WholeExtent]

@final
class Level:
    """One scale level of a block-scaled format (immutable, hashable).

    The coordinates of the level below in one block share one `scale`
    value; `block` is a positive int (a 1-D block), a tuple of at least two
    ints, each at least 2 (an N-D block such as (16, 16)), or Whole for one
    scale over the entire level below.
    """

    def __new__(cls, scale: SimpleDType, block: int | tuple[int, ...] | WholeExtent) -> Level: ...
    @property
    def scale(self) -> SimpleDType: ...
    @property
    def block(self) -> int | tuple[int, ...] | WholeExtent: ...
    @property
    def block_shape(self) -> tuple[int, ...] | None: ...
    @property
    def block_size(self) -> int | WholeExtent: ...
    def is_whole(self) -> bool: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(
        self,
    ) -> tuple[type[Level], tuple[SimpleDType, int | tuple[int, ...] | WholeExtent]]: ...
    def __copy__(self) -> Level: ...
    def __deepcopy__(self, memo: object, /) -> Level: ...

@final
class SymbolicBits:
    """Storage cost `constant + whole_scale_bits / n` bits per element (immutable)."""

    def __new__(cls, constant: float, whole_scale_bits: int) -> SymbolicBits: ...
    @property
    def constant(self) -> float: ...
    @property
    def whole_scale_bits(self) -> int: ...
    def evaluate(self, element_count: int, /) -> float: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[type[SymbolicBits], tuple[float, int]]: ...

_NumericKind = Literal["float", "complex", "int", "bool"]
_NanEncoding = Literal["ieee", "all_ones", "negative_zero", "none"]

@final
class NumericInfo:
    """What a simple dtype's bits mean: an immutable record, compared by value."""

    def __new__(
        cls,
        *,
        kind: _NumericKind,
        encoding: str,
        bits: int,
        signed: bool,
        min: float | int,
        max: float | int,
        exponent_bits: int | None = None,
        mantissa_bits: int | None = None,
        bias: int | None = None,
        smallest_normal: float | None = None,
        smallest_subnormal: float | None = None,
        eps: float | None = None,
        has_inf: bool = False,
        has_nan: bool = False,
        nan_encoding: _NanEncoding = "none",
    ) -> NumericInfo: ...
    @classmethod
    def floating(
        cls,
        encoding: str,
        *,
        exponent_bits: int,
        mantissa_bits: int,
        bias: int,
        nan_encoding: _NanEncoding,
        signed: bool = True,
        complex: bool = False,
    ) -> NumericInfo: ...
    @classmethod
    def integer(cls, bits: int, *, signed: bool) -> NumericInfo: ...
    @classmethod
    def boolean(cls, bits: int = 8) -> NumericInfo: ...
    @classmethod
    def _from_params(
        cls,
        kind: _NumericKind,
        encoding: str,
        bits: int,
        signed: bool,
        exponent_bits: int | None,
        mantissa_bits: int | None,
        bias: int | None,
        nan_encoding: _NanEncoding,
        /,
    ) -> NumericInfo: ...
    @property
    def kind(self) -> _NumericKind: ...
    @property
    def encoding(self) -> str: ...
    @property
    def bits(self) -> int: ...
    @property
    def signed(self) -> bool: ...
    @property
    def min(self) -> float | int: ...
    @property
    def max(self) -> float | int: ...
    @property
    def exponent_bits(self) -> int | None: ...
    @property
    def mantissa_bits(self) -> int | None: ...
    @property
    def bias(self) -> int | None: ...
    @property
    def smallest_normal(self) -> float | None: ...
    @property
    def smallest_subnormal(self) -> float | None: ...
    @property
    def eps(self) -> float | None: ...
    @property
    def has_inf(self) -> bool: ...
    @property
    def has_nan(self) -> bool: ...
    @property
    def nan_encoding(self) -> _NanEncoding: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[Callable[..., NumericInfo], tuple[object, ...]]: ...

def numeric_info(dtype: SimpleDType, /) -> NumericInfo: ...
def finfo(dtype: SimpleDType, /) -> NumericInfo: ...
def iinfo(dtype: SimpleDType, /) -> NumericInfo: ...
def register_numeric_info(dtype: SimpleDType, record: NumericInfo, /) -> None: ...

# The codec kernels behind stride_weave.codecs (options as exact ints; see
# codecs.py for their meaning). Buffers: any object exporting the buffer
# protocol. A grid is a tuple of axes, each (extent, block, compact, batch,
# row, col, expanded), with a layout (scales, R, C, align, group).
_GridAxis = tuple[int, int, int, int, int, int, int]
_GridLayout = tuple[int, int, int, int, int]

def _codec_encode(
    values: object, out: object, dtype: SimpleDType, source: int, rounding: int,
    overflow: int, nan: int, nan_code: int, nan_code_negative: int, seed: int, sign: int,
    threads: int, path: int = 0, /,
) -> None: ...
def _codec_decode(
    codes: object, out: object, dtype: SimpleDType, out_type: int, threads: int, /
) -> None: ...
def _codec_pack(codes: object, out: object, dtype: SimpleDType, threads: int, /) -> None: ...
def _codec_unpack(
    data: object, out: object, dtype: SimpleDType, count: int, threads: int, /
) -> None: ...
def _codec_quantize(
    values: object, elements: object, scales: tuple[object, ...], dtype: BlockScaledDType,
    axes: tuple[_GridAxis, ...], layout: _GridLayout, scale_rule: int, rounding: int,
    seed: int, packed: int, amax_floor: float, threads: int, path: int = 0, /,
) -> None: ...
def _codec_dequantize(
    elements: object, scales: tuple[object, ...], out: object, dtype: BlockScaledDType,
    axes: tuple[_GridAxis, ...], layout: _GridLayout, packed: int, nonfinite_error: int,
    out_type: int, threads: int, /,
) -> None: ...
def _codec_relayout(
    scales: object, out: object, dtype: BlockScaledDType, axes: tuple[_GridAxis, ...],
    layout: _GridLayout, to_axes: tuple[_GridAxis, ...], to_layout: _GridLayout, /,
) -> int | None: ...
def _codec_scale_offset(
    axes: tuple[_GridAxis, ...], layout: _GridLayout, coords: tuple[int, ...], /
) -> int: ...

# ---- kinds, casting and promotion (docs/relations.md) ----------------------

_KindName = Literal[
    "bool",
    "signed integer",
    "unsigned integer",
    "integral",
    "real floating",
    "complex floating",
    "numeric",
]
_Kind = _KindName | DType | tuple[_KindName | DType, ...]
_Casting = Literal["no", "equiv", "safe", "same_kind", "unsafe"]
_ScalarKind = Literal["bool", "int", "float", "complex"]
_Operand = DType | bool | int | float | complex

class PromotionError(TypeError):
    """Two dtypes have no promotion; a TypeError."""

@final
class PromotionLattice:
    """An immutable promotion lattice."""

    @property
    def dtypes(self) -> tuple[DType, ...]: ...
    @property
    def edges(self) -> tuple[tuple[DType, DType], ...]: ...
    @property
    def scalar_defaults(self) -> dict[_ScalarKind, DType]: ...
    @property
    def undefined(self) -> tuple[tuple[DType, DType], ...]: ...
    @property
    def is_default(self) -> bool: ...
    @property
    def lossy(self) -> bool: ...
    @property
    def mixed_scalars(self) -> bool: ...
    def promote_types(self, a: DType, b: DType, /) -> DType: ...
    def result_type(self, *operands: _Operand) -> DType: ...
    def extend(
        self,
        edges: Iterable[tuple[DType, DType]] = (),
        /,
        *,
        lossy: bool = False,
        scalar_defaults: dict[_ScalarKind, DType] | None = None,
        mixed_scalars: bool | None = None,
        undefined: Iterable[tuple[DType, DType]] = (),
    ) -> PromotionLattice: ...
    def __copy__(self) -> Self: ...
    def __deepcopy__(self, memo: object, /) -> Self: ...
    def __reduce__(self) -> tuple[object, tuple[object, ...]]: ...

def isdtype(dtype: DType, kind: _Kind, /) -> bool: ...
def can_cast(from_: DType, to: DType, /, casting: _Casting = "safe") -> bool: ...
def promote_types(a: DType, b: DType, /) -> DType: ...
def result_type(*operands: _Operand) -> DType: ...
def declare_promotion(lower: DType, upper: DType, /) -> None: ...
def declare_promotions(edges: Iterable[tuple[DType, DType]], /) -> None: ...
def default_lattice() -> PromotionLattice: ...
def _promotion_exclusion(dtype: DType, /) -> str | None: ...

# The (code, bits, lanes) of a DLPack capsule's DLDataType, for
# stride_weave.interop.dtype_of(); not for other code.
def _dlpack_dtype(capsule: object, /) -> tuple[int, int, int]: ...
def _dlpack_buffer(capsule: object, /) -> object: ...

# The C API capsule "stride_weave._dtypes._C_API", for C extensions through
# <stride_weave/dtypes.h> (docs/c-api.md); not for Python code.
@final
class UnknownNameError(LookupError):
    """No descriptor is registered under the name looked up.

    Exported as stride_weave.dtypes.UnknownNameError, a LookupError.  The
    message (args[0], str()) is formatted when first read, from the names
    registered when the lookup failed.
    """

# The C API capsule "stride_weave._dtypes._C_API", for C extensions through
# <stride_weave/dtypes.h> (docs/c-api.md); not for Python code.
_C_API: object

def _reconstruct(
    name: str,
    structure: Structure,
    module: str | None = None,
    numeric: tuple[object, ...] | None = None,
    /,
) -> DType: ...
def _reconstruct_lattice(
    version: int,
    dtypes: tuple[DType, ...],
    edges: tuple[tuple[DType, DType], ...],
    lossy: bool,
    is_default: bool,
    scalar_defaults: tuple[DType | None, DType | None, DType | None, DType | None],
    mixed_scalars: bool,
    undefined: tuple[tuple[DType, DType], ...],
    /,
) -> PromotionLattice: ...
def unpickle_imports() -> bool | tuple[str, ...]:
    """Which modules unpickling a descriptor may import to find a name that
    is not registered: True (any importable module), False (none) or the
    module name prefixes allowed by set_unpickle_imports() or the
    environment variable STRIDE_WEAVE_UNPICKLE_IMPORTS, followed by those
    installed distributions declare in the entry-point group
    'stride_weave.unpickle_imports'.  A malformed variable is a ValueError
    at the policy's first use."""

def _unpickle_imports_environment() -> bool | tuple[str, ...]: ...
def set_unpickle_imports(allow: bool | Iterable[str], /) -> bool | tuple[str, ...]:
    """Set which modules unpickling may import and return the previous
    setting: an iterable of module name prefixes (added to the declared
    modules; () is the default), True (any importable module) or False
    (none)."""
