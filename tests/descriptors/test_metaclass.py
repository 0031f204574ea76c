"""Class creation and introspection of the descriptor model (design.md
"Classes"): kinds cannot be mixed, the metaclass is final, user
``__init_subclass__`` hooks keep working, and the public surface is
introspectable (signatures, help(), docstrings).
"""
import contextlib
import inspect
import io
import pydoc

import pytest

import stride_weave.dtypes as public
from support import new_class, refused, registry_unchanged, unique_name
from stride_weave import _dtypes
from stride_weave.dtypes import CompoundDType, DType, DTypeCategory, SimpleDType


MODEL_CLASSES = [DType, DTypeCategory, SimpleDType, CompoundDType]


# --------------------------------------------------------------------------
# Metaclass
# --------------------------------------------------------------------------

def test_metaclass_is_dtypemeta():
    for cls in MODEL_CLASSES:
        assert type(cls) is _dtypes.DTypeMeta
    Sub = new_class("Sub", (SimpleDType,))
    assert type(Sub) is _dtypes.DTypeMeta


def test_dtypemeta_cannot_be_subclassed():
    with refused(TypeError):
        class Meta(_dtypes.DTypeMeta):  # noqa: F841
            pass


def test_model_classes_relationships():
    assert issubclass(DTypeCategory, DType)
    assert issubclass(SimpleDType, DType)
    assert issubclass(CompoundDType, DType)
    assert not issubclass(SimpleDType, DTypeCategory)
    assert isinstance(DType.Float32, DType)
    assert isinstance(DType.Any, DType)
    assert public.DType is _dtypes.DType
    assert public.SimpleDType is _dtypes.SimpleDType


def test_public_module_exports():
    for name in ["DType", "DTypeCategory", "SimpleDType", "CompoundDType",
                 "RepresentationRule", "Whole", "WholeExtent"]:
        assert hasattr(public, name), name


# --------------------------------------------------------------------------
# Subclassing two kinds
# --------------------------------------------------------------------------

KIND_PAIRS = [
    (SimpleDType, DTypeCategory),
    (DTypeCategory, SimpleDType),
    (SimpleDType, CompoundDType),
    (CompoundDType, DTypeCategory),
]


@pytest.mark.parametrize("a, b", KIND_PAIRS,
                         ids=[f"{a.__name__}+{b.__name__}" for a, b in KIND_PAIRS])
@pytest.mark.parametrize("abstract", [True, False])
def test_subclass_of_two_kinds_is_type_error(a, b, abstract):
    with registry_unchanged():
        with refused(TypeError):
            new_class("TwoKinds", (a, b), {"abstract": abstract})


def test_subclass_of_two_user_subclasses_of_different_kinds_is_type_error():
    A = new_class("A", (SimpleDType,), {"abstract": False})
    B = new_class("B", (DTypeCategory,), {"abstract": False})
    with refused(TypeError):
        new_class("AB", (A, B), {"abstract": False})
    with refused(TypeError):
        new_class("AB", (A, B))


def test_subclass_of_two_user_subclasses_of_same_kind_is_allowed():
    A = new_class("A", (SimpleDType,))
    B = new_class("B", (SimpleDType,))
    AB = new_class("AB", (A, B), {"abstract": False})
    d = AB(unique_name("SameKind"), bits=8, supertype=DType.Floating)
    assert isinstance(d, A) and isinstance(d, B)
    assert d.is_simple()


def test_plain_mixin_without_owned_members_is_allowed():
    class Mixin:
        __slots__ = ()

        def describe(self):
            return f"<{self.name}>"

    Cls = new_class("WithMixin", (Mixin, SimpleDType), {"abstract": False})
    d = Cls(unique_name("Mixin"), bits=8, supertype=DType.Floating)
    assert d.describe() == f"<{d.name}>"


def test_mixin_that_brings_an_instance_dict_is_refused():
    # Instances of a descriptor class keep their attributes themselves and
    # seal them; a mixin's CPython instance dict would stay writable.
    class DictMixin:
        def describe(self):
            return "x"

    with refused(TypeError, match=r"gives instances a __dict__.*__slots__ = \(\)"):
        new_class("WithDictMixin", (DictMixin, SimpleDType), {"abstract": False})


# --------------------------------------------------------------------------
# __init_subclass__
# --------------------------------------------------------------------------

def test_init_subclass_hook_receives_its_own_keywords():
    seen = []

    class Base(SimpleDType):
        def __init_subclass__(cls, *, tag=None, **kwargs):
            super().__init_subclass__(**kwargs)
            seen.append((cls.__name__, tag))

    class Child(Base, tag="t1", abstract=False):
        pass

    class Abstract(Base, tag="t2"):
        pass

    assert seen == [("Child", "t1"), ("Abstract", "t2")]
    d = Child(unique_name("Hooked"), bits=8, supertype=DType.Floating)
    assert d.is_simple()
    with refused(TypeError):
        Abstract(unique_name("HookedAbs"), bits=8, supertype=DType.Floating)


def test_init_subclass_hook_runs_without_keywords():
    seen = []

    class Base(DTypeCategory):
        def __init_subclass__(cls, **kwargs):
            super().__init_subclass__(**kwargs)
            seen.append(cls.__name__)

    class Child(Base, abstract=False):
        pass

    assert seen == ["Child"]
    assert Child(unique_name("HookCat")).is_category()


def test_unconsumed_keyword_is_still_type_error_naming_it():
    class Base(SimpleDType):
        def __init_subclass__(cls, *, tag=None, **kwargs):
            super().__init_subclass__(**kwargs)

    with refused(TypeError, match="colour"):
        new_class("Child", (Base,), {"tag": 1, "colour": "red"})


def test_init_subclass_exception_aborts_class_creation():
    class Base(SimpleDType):
        def __init_subclass__(cls, **kwargs):
            super().__init_subclass__(**kwargs)
            raise RuntimeError("refused")

    with refused(RuntimeError, match="refused"):
        new_class("Child", (Base,), {"abstract": False})


# --------------------------------------------------------------------------
# Signatures
# --------------------------------------------------------------------------

def test_simple_dtype_signature():
    sig = inspect.signature(SimpleDType)
    # The specified (name, *, bits, supertype), plus the optional
    # keyword-only numeric record attached before registration.
    assert str(sig) == "(name, *, bits, supertype, numeric_info=None)"
    params = sig.parameters
    assert params["numeric_info"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["name"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert params["bits"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["supertype"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["bits"].default is inspect.Parameter.empty
    assert params["supertype"].default is inspect.Parameter.empty


def test_dtype_category_signature():
    sig = inspect.signature(DTypeCategory)
    assert str(sig) == "(name, *, supertype=None)"
    assert sig.parameters["supertype"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig.parameters["supertype"].default is None


def test_signature_binds_like_the_constructor():
    sig = inspect.signature(SimpleDType)
    sig.bind("x", bits=8, supertype=DType.Floating)
    with refused(TypeError):
        sig.bind("x", 8, DType.Floating)
    with refused(TypeError):
        inspect.signature(DTypeCategory).bind("x", DType.Any)


@pytest.mark.parametrize("method, expected", [
    ("is_subtype_of", ["other"]),
    ("from_name", ["name"]),
    ("registered", []),
    ("supertypes", []),
    ("structure", []),
    ("is_category", []),
    ("is_simple", []),
    ("is_compound", []),
    ("structure_extension", []),
])
def test_method_signatures(method, expected):
    bound_owner = DType if method in ("from_name", "registered") else DType.Float32
    sig = inspect.signature(getattr(bound_owner, method))
    assert list(sig.parameters) == expected


# --------------------------------------------------------------------------
# help() and docstrings
# --------------------------------------------------------------------------

def _help_text(obj):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        help(obj)
    return buf.getvalue()


@pytest.mark.parametrize("cls", MODEL_CLASSES, ids=lambda c: c.__name__)
def test_help_on_model_classes(cls):
    text = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    assert cls.__name__ in text
    assert "from_name" in text
    assert "registered" in text
    assert cls.__doc__.strip().splitlines()[0] in text


def test_help_shows_constructor_signature():
    text = pydoc.render_doc(SimpleDType, renderer=pydoc.plaintext)
    assert "bits" in text and "supertype" in text
    text = pydoc.render_doc(DTypeCategory, renderer=pydoc.plaintext)
    assert "supertype=None" in text


def test_help_builtin_function_output():
    text = _help_text(SimpleDType)
    assert "SimpleDType" in text
    assert "bits" in text


def test_help_on_descriptor_instance_and_module():
    assert "SimpleDType" in pydoc.render_doc(DType.Float32, renderer=pydoc.plaintext)
    text = pydoc.render_doc(public, renderer=pydoc.plaintext)
    assert "DType" in text


def test_help_on_user_subclass():
    class Documented(SimpleDType, abstract=False):
        """My documented dtype."""

    text = pydoc.render_doc(Documented, renderer=pydoc.plaintext)
    assert "My documented dtype." in text


@pytest.mark.parametrize("cls", MODEL_CLASSES, ids=lambda c: c.__name__)
def test_model_classes_have_docstrings(cls):
    assert isinstance(cls.__doc__, str) and cls.__doc__.strip()


def _public_members(cls):
    for name in dir(cls):
        if name.startswith("_"):
            continue
        obj = inspect.getattr_static(cls, name)
        if isinstance(obj, DType):
            continue  # DType.<builtin> bindings are descriptors, not methods
        yield name, obj


@pytest.mark.parametrize("cls", MODEL_CLASSES, ids=lambda c: c.__name__)
def test_every_public_method_has_a_docstring(cls):
    missing = []
    for name, obj in _public_members(cls):
        doc = getattr(obj, "__doc__", None)
        if isinstance(obj, (classmethod, staticmethod)):
            doc = obj.__func__.__doc__
        if not (isinstance(doc, str) and doc.strip()):
            missing.append(name)
    assert missing == []


def test_public_members_cover_the_descriptor_api():
    names = {n for n, _ in _public_members(DType)}
    for required in ["name", "value", "supertype", "supertypes", "is_subtype_of",
                     "is_category", "is_simple", "is_compound", "structure",
                     "structure_extension", "from_name", "registered"]:
        assert required in names
    assert "bits" in {n for n, _ in _public_members(SimpleDType)}
    assert "is_opaque_storage" not in names


@pytest.mark.parametrize("name", ["RepresentationRule", "Whole", "WholeExtent"])
def test_other_public_names_are_documented(name):
    obj = getattr(public, name)
    cls = obj if isinstance(obj, type) else type(obj)
    assert isinstance(cls.__doc__, str) and cls.__doc__.strip()


def test_public_module_has_a_docstring():
    assert isinstance(public.__doc__, str) and public.__doc__.strip()
