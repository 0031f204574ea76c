"""Sphinx extension: typed signatures for the API reference, from the stubs.

The descriptor classes are C types. Their ``__text_signature__`` (what
``inspect.signature`` and ``help()`` show) carries parameter names but no
types, so autodoc alone renders ``is_subtype_of(other, /)``. The package
ships type stubs (``stride_weave/_dtypes.pyi``, checked against the
extension by ``mypy.stubtest`` in the test suite); this extension reads them
from the *installed* package with :mod:`ast` and gives autodoc

- the signature and return type of every method and class documented from
  the extension (``is_subtype_of(other: DType, /) -> bool``), looked up
  through the stub's base classes so that inherited members are typed too;
- the type of every attribute (``bits``: ``int``), as a "Type:" line at the
  top of its description.

Names in the types become cross-references, so ``DTypeCategory | None``
links to the class.
"""

import ast
import os
import re

import stride_weave

_STUB_FILES = ("_dtypes.pyi",)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_PY_OBJECTS = {"None", "True", "False", "Ellipsis"}


class Stubs:
    """The classes of one or more stub files: name -> (bases, members)."""

    def __init__(self, paths):
        self.classes = {}
        for path in paths:
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), filename=path)
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    members = {}
                    for item in node.body:
                        if isinstance(item, ast.FunctionDef):
                            members.setdefault(item.name, item)
                        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                            members.setdefault(item.target.id, item)
                    bases = [ast.unparse(b) for b in node.bases]
                    self.classes[node.name] = (bases, members)

    def find(self, cls, member):
        """The stub node of ``cls.member``, searched through the stub's bases
        (breadth first), or None."""
        todo, seen = [cls], set()
        while todo:
            name = todo.pop(0)
            if name in seen or name not in self.classes:
                continue
            seen.add(name)
            bases, members = self.classes[name]
            if member in members:
                return members[member]
            todo.extend(bases)
        return None


def _decorators(node):
    return {ast.unparse(d) for d in node.decorator_list}


def _signature(node):
    """``(params)`` and the return annotation of a stub function, without
    its first parameter (self, cls or mcls) unless it is a staticmethod."""
    args = ast.arguments(
        posonlyargs=list(node.args.posonlyargs),
        args=list(node.args.args),
        vararg=node.args.vararg,
        kwonlyargs=list(node.args.kwonlyargs),
        kw_defaults=list(node.args.kw_defaults),
        kwarg=node.args.kwarg,
        defaults=list(node.args.defaults),
    )
    if "staticmethod" not in _decorators(node):
        if args.posonlyargs:
            args.posonlyargs.pop(0)
        elif args.args:
            args.args.pop(0)
            # defaults align with the end of posonlyargs + args: unchanged.
    returns = ast.unparse(node.returns) if node.returns is not None else None
    return "(" + ast.unparse(args) + ")", returns


def _owner_and_member(what, name):
    parts = name.split(".")
    if what in ("class", "exception"):
        return parts[-1], None
    if len(parts) >= 2:
        return parts[-2], parts[-1]
    return None, None


def type_as_rest(text):
    """A type expression as reST, its names as cross-references."""
    out, pos = [], 0
    for m in _IDENTIFIER.finditer(text):
        out.append(text[pos:m.start()].replace("[", "\\ [").replace("|", "\\|"))
        role = "py:obj" if m.group() in _PY_OBJECTS else "py:class"
        out.append(f":{role}:`{m.group()}`")
        pos = m.end()
    out.append(text[pos:].replace("[", "\\ [").replace("|", "\\|"))
    return "".join(out)


def _attribute_type(node):
    if isinstance(node, ast.AnnAssign):
        annotation = node.annotation
        if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) in (
            "ClassVar", "Final"
        ):
            annotation = annotation.slice
        return ast.unparse(annotation)
    if isinstance(node, ast.FunctionDef) and "property" in _decorators(node):
        return ast.unparse(node.returns) if node.returns is not None else None
    return None


def setup(app):
    package = os.path.dirname(os.path.abspath(stride_weave.__file__))
    stubs = Stubs([os.path.join(package, f) for f in _STUB_FILES])

    def process_signature(app, what, name, obj, options, signature, return_annotation):
        if not name.startswith("stride_weave."):
            return None
        owner, member = _owner_and_member(what, name)
        if owner is None or owner not in stubs.classes:
            return None
        if what in ("class", "exception"):
            if isinstance(obj, type) and issubclass(obj, type):
                return None   # metaclasses: their C signature is kept
            node = stubs.find(owner, "__init__") or stubs.find(owner, "__new__")
            if not isinstance(node, ast.FunctionDef):
                return None
            params, _ = _signature(node)
            return params, None
        if what in ("method", "classmethod", "staticmethod", "function"):
            node = stubs.find(owner, member)
            if isinstance(node, ast.FunctionDef) and "property" not in _decorators(node):
                return _signature(node)
        return None

    def process_docstring(app, what, name, obj, options, lines):
        if what not in ("attribute", "property") or not name.startswith("stride_weave."):
            return
        owner, member = _owner_and_member(what, name)
        node = stubs.find(owner, member) if owner else None
        annotation = _attribute_type(node) if node is not None else None
        if annotation:
            lines[:0] = [f"*Type:* {type_as_rest(annotation)}", ""]

    app.connect("autodoc-process-signature", process_signature)
    # After conf.py's own docstring handler, which escapes plain-text markup.
    app.connect("autodoc-process-docstring", process_docstring, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
