"""Typing helpers for stride-weave (type aliases and protocols).

Nothing in this module is used by the descriptor model at run time; it exists
so that code using stride-weave can be type-checked precisely. It is an
ordinary module, so its names can be imported at run time as well as under
``typing.TYPE_CHECKING``::

    from stride_weave._typing import RepresentationValidationContext

- ``Structure`` / ``StructureNode``: what ``structure()`` returns, a nested
  tuple whose leaves are all exact ``str`` (format version 1, see
  ``docs/structure.md``).
- ``StructureExtension`` / ``ExtensionValue``: what ``structure_extension()``
  may return, a tuple of exact ``str``, ``int``, ``float``, ``bool``,
  ``None``, ``Whole`` and nested tuples of those.
- ``RepresentationValidationContext``: the read-only context that
  ``RepresentationRule.validate(context)`` receives. The tensor side builds
  it; this package only defines the protocol.
"""

from typing import Protocol, TypeAlias, Union

from stride_weave._dtypes import CompoundDType, SimpleDType, WholeExtent

__all__ = [
    "StructureNode",
    "Structure",
    "ExtensionValue",
    "StructureExtension",
    "LevelShape",
    "AdjacentLayout",
    "RepresentationValidationContext",
]

#: One node of a structure: a tagged or label string, or a nested tuple.
StructureNode: TypeAlias = Union[str, tuple["StructureNode", ...]]

#: The value of ``structure()``: a nested tuple of exact ``str`` leaves.
Structure: TypeAlias = tuple[StructureNode, ...]

#: A value permitted inside a ``structure_extension()`` tuple. (``bool`` is
#: permitted too; it is a subtype of ``int`` and is encoded distinctly.)
ExtensionValue: TypeAlias = Union[
    str, int, float, bool, None, WholeExtent, tuple["ExtensionValue", ...]
]

#: The value of ``structure_extension()``.
StructureExtension: TypeAlias = tuple[ExtensionValue, ...]


class LevelShape(Protocol):
    """The shape of one scale level as seen by a representation rule."""

    @property
    def logical_size(self) -> int:
        """Number of logical coordinates at this level."""
        ...


class AdjacentLayout(Protocol):
    """The layout that maps one level's coordinates onto the next level's."""

    def uniform_preimage_extent(self, shape: LevelShape, /) -> int | None:
        """How many source coordinates map to each target coordinate of
        ``shape``, if that number is the same for all of them, else ``None``."""
        ...


class RepresentationValidationContext(Protocol):
    """The read-only context passed to ``RepresentationRule.validate``.

    Every attribute except ``logical_dtype`` is an immutable tuple.
    """

    @property
    def logical_dtype(self) -> CompoundDType:
        """The compound dtype whose representation is being validated."""
        ...

    @property
    def storage_dtypes(self) -> tuple[SimpleDType, ...]:
        """The storage dtype of each plane's carrier, in plane order."""
        ...

    @property
    def placement_layouts(self) -> tuple[object, ...]:
        """The placement layout of each plane (defined by the tensor side)."""
        ...

    @property
    def adjacent_layouts(self) -> tuple[AdjacentLayout, ...]:
        """Layout ``i`` maps level ``i`` onto level ``i + 1``."""
        ...

    @property
    def level_shapes(self) -> tuple[LevelShape, ...]:
        """The shape of each level, innermost (the elements) first."""
        ...
