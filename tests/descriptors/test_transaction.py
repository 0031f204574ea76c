"""Construction is a transaction (design.md "Construction (a transaction)").

Subclass ``__init__`` may set its own fields; any failure (in user code, in
validation, or a missing ``super().__init__``) registers nothing, leaves the
name free and leaves the half-built instance unusable; references must be
finished canonical descriptors; ``structure_extension()`` runs exactly once;
re-initialising a finished descriptor is an AttributeError.
"""
import pytest

from support import assert_unregistered, refused, registry_unchanged, unique_name
from stride_weave.dtypes import CompoundDType, DType, DTypeCategory, SimpleDType


class Boom(Exception):
    """Raised by user code inside __init__."""


# --------------------------------------------------------------------------
# Subclass __init__ sets its own fields
# --------------------------------------------------------------------------

class FieldsNoSlots(SimpleDType, abstract=False):
    def __init__(self, name, *, label, scale=1):
        self.label = label
        super().__init__(name, bits=16, supertype=DType.Floating)
        self.scale = scale
        self.derived = f"{label}x{scale}"


class FieldsSlots(SimpleDType, abstract=False):
    __slots__ = ("label", "scale", "derived")

    def __init__(self, name, *, label, scale=1):
        self.label = label
        super().__init__(name, bits=16, supertype=DType.Floating)
        self.scale = scale
        self.derived = f"{label}x{scale}"


class FieldsCategory(DTypeCategory, abstract=False):
    def __init__(self, name, *, label):
        self.label = label
        super().__init__(name, supertype=DType.Any)
        self.after = label * 2


@pytest.mark.parametrize("cls", [FieldsNoSlots, FieldsSlots],
                         ids=["no-slots", "slots"])
def test_subclass_init_sets_its_own_fields(cls):
    """Fields set before and after super().__init__ are kept."""
    name = unique_name("Fields")
    d = cls(name, label="lbl", scale=3)
    assert DType.from_name(name) is d
    assert d.label == "lbl"
    assert d.scale == 3
    assert d.derived == "lblx3"
    assert d.bits == 16
    assert d.name == name


def test_category_subclass_init_sets_its_own_fields():
    d = FieldsCategory(unique_name("FieldsCat"), label="ab")
    assert d.label == "ab"
    assert d.after == "abab"
    assert d.supertype is DType.Any


def test_subclass_with_custom_init_signature():
    class Fixed(SimpleDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, bits=12, supertype=DType.Integer)

    d = Fixed(unique_name("Fixed"))
    assert d.bits == 12 and d.supertype is DType.Integer


@pytest.mark.parametrize("owned", ["name", "value", "bits", "supertype",
                                   "structure", "is_simple"])
@pytest.mark.parametrize("when", ["before", "after"])
def test_setting_an_owned_name_in_init_is_attribute_error(owned, when):
    """Model-owned names cannot be set on self even while building."""
    class Spoof(SimpleDType, abstract=False):
        def __init__(self, name):
            if when == "before":
                setattr(self, owned, "spoof")
            super().__init__(name, bits=8, supertype=DType.Floating)
            if when == "after":
                setattr(self, owned, "spoof")

    name = unique_name("Spoof")
    with registry_unchanged():
        with refused(AttributeError):
            Spoof(name)
    assert_unregistered(name)


# --------------------------------------------------------------------------
# User code failing inside __init__
# --------------------------------------------------------------------------

@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("kind", ["simple", "category", "compound"])
def test_exception_in_user_init_registers_nothing(kind, when):
    """An exception raised by user code before or after super().__init__
    propagates unchanged, registers nothing, and the same name can be
    registered right after."""
    if kind == "simple":
        base, kwargs = SimpleDType, {"bits": 8, "supertype": DType.Floating}
    elif kind == "category":
        base, kwargs = DTypeCategory, {"supertype": DType.Any}
    else:
        base, kwargs = CompoundDType, {"simple_types": [DType.Float32]}

    class Failing(base, abstract=False):
        def __init__(self, name):
            if when == "before":
                raise Boom("before")
            super().__init__(name, **kwargs)
            raise Boom("after")

    class Fine(base, abstract=False):
        pass

    name = unique_name("Boom")
    with registry_unchanged():
        with refused(Boom, match=when):
            Failing(name)
    assert_unregistered(name)
    ok = Fine(name, **kwargs)
    assert DType.from_name(name) is ok


def test_failed_construction_leaves_name_free_for_same_class():
    class Flaky(SimpleDType, abstract=False):
        fail = True

        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Floating)
            if type(self).fail:
                raise Boom("flaky")

    name = unique_name("Flaky")
    with registry_unchanged():
        with refused(Boom):
            Flaky(name)
    Flaky.fail = False
    d = Flaky(name)
    assert DType.from_name(name) is d


def test_base_exception_in_init_registers_nothing():
    class Interrupted(SimpleDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Floating)
            raise KeyboardInterrupt

    name = unique_name("Interrupted")
    with registry_unchanged():
        with refused(KeyboardInterrupt):
            Interrupted(name)
    assert_unregistered(name)


def test_caught_validation_error_inside_init_still_fails():
    """A base __init__ that rejected its arguments cannot be papered over by
    catching the error: the instance never became initialised."""
    class Swallow(SimpleDType, abstract=False):
        def __init__(self, name):
            try:
                super().__init__(name, bits=0, supertype=DType.Floating)
            except ValueError:
                pass

    name = unique_name("Swallow")
    with registry_unchanged():
        with refused((TypeError, ValueError)):
            Swallow(name)
    assert_unregistered(name)


# --------------------------------------------------------------------------
# structure_extension is called exactly once
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["simple", "category"])
def test_structure_extension_called_exactly_once(kind):
    calls = []
    base = SimpleDType if kind == "simple" else DTypeCategory
    kwargs = ({"bits": 8, "supertype": DType.Floating} if kind == "simple"
              else {"supertype": DType.Any})

    class Counted(base, abstract=False):
        def structure_extension(self):
            calls.append(self)
            return ("count", len(calls))

    d = Counted(unique_name("Counted"), **kwargs)
    assert len(calls) == 1
    assert calls[0] is d
    s1 = d.structure()
    s2 = d.structure()
    repr(d)
    d.supertypes()
    d.is_subtype_of(DType.Any)
    Counted.registered()
    DType.registered()
    assert s1 is s2
    assert ("extension", ("str:count", "int:1")) in s1
    assert len(calls) == 1


def test_structure_extension_not_called_on_failed_validation():
    calls = []

    class Counted(SimpleDType, abstract=False):
        def structure_extension(self):
            calls.append(1)
            return ()

    name = unique_name("NoCall")
    with registry_unchanged():
        with refused(ValueError):
            Counted(name, bits=0, supertype=DType.Floating)
    # Validation happens in the base __init__ (step 3), before finalization
    # records the structure (step 4).
    assert calls == []
    assert_unregistered(name)


def test_structure_extension_exception_registers_nothing():
    class Raising(SimpleDType, abstract=False):
        def structure_extension(self):
            raise Boom("extension")

    class Fine(SimpleDType, abstract=False):
        pass

    name = unique_name("ExtBoom")
    with registry_unchanged():
        with refused(Boom, match="extension"):
            Raising(name, bits=8, supertype=DType.Floating)
    assert_unregistered(name)
    assert Fine(name, bits=8, supertype=DType.Floating).name == name



def test_structure_extension_may_register_another_descriptor():
    """User code running during finalization may itself register descriptors
    (no lock is held while Python code runs)."""
    inner = unique_name("Inner")

    class Nesting(SimpleDType, abstract=False):
        def structure_extension(self):
            SimpleDType(inner, bits=8, supertype=DType.Floating)
            return ()

    outer = Nesting(unique_name("Outer"), bits=8, supertype=DType.Floating)
    snap = DType.registered()
    assert snap[-2:] == (DType.from_name(inner), outer)


def test_structure_extension_taking_its_own_name_fails_the_outer():
    """If user code registers the outer name first, the outer construction is
    a duplicate (ValueError) and the inner descriptor stays the identity."""
    name = unique_name("Race")
    made = []

    class Racing(SimpleDType, abstract=False):
        def structure_extension(self):
            made.append(SimpleDType(name, bits=8, supertype=DType.Floating))
            return ()

    # The registry does change here: the inner descriptor is registered.
    with pytest.raises(ValueError, match=name):
        Racing(name, bits=8, supertype=DType.Floating)
    assert DType.from_name(name) is made[0]
    assert type(made[0]) is SimpleDType


def test_init_may_register_other_descriptors():
    child = unique_name("InitChild")

    class Spawning(DTypeCategory, abstract=False):
        def __init__(self, name):
            SimpleDType(child, bits=8, supertype=DType.Floating)
            super().__init__(name, supertype=DType.Any)

    parent = Spawning(unique_name("InitParent"))
    assert DType.registered()[-2:] == (DType.from_name(child), parent)


# --------------------------------------------------------------------------
# __init__ must call super().__init__ exactly once
# --------------------------------------------------------------------------

@pytest.mark.parametrize("base", [SimpleDType, DTypeCategory, CompoundDType],
                         ids=lambda c: c.__name__)
def test_init_that_never_calls_super_init_is_type_error(base):
    seen = []

    class Lazy(base, abstract=False):
        def __init__(self, name):
            seen.append(name)

    name = unique_name("Lazy")
    with registry_unchanged():
        with refused(TypeError):
            Lazy(name)
    assert seen == [name]
    assert_unregistered(name)


def test_init_calling_super_init_twice_is_type_error():
    class Twice(SimpleDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Floating)
            super().__init__(name, bits=8, supertype=DType.Floating)

    name = unique_name("Twice")
    with registry_unchanged():
        with refused(TypeError):
            Twice(name)
    assert_unregistered(name)


def test_model_init_runs_once_even_after_it_failed():
    """The model's __init__ claims the object when it starts: after it
    raised (here for a zero width), calling it again with good arguments is
    a TypeError, so a rejected argument cannot be retried into a
    registration (and two threads can never run it on one object)."""
    class Retry(SimpleDType, abstract=False):
        def __init__(self, name):
            try:
                super().__init__(name, bits=0, supertype=DType.Floating)
            except ValueError:
                super().__init__(name, bits=8, supertype=DType.Floating)

    name = unique_name("Retry")
    with refused(TypeError, match="already called"):
        Retry(name)
    assert_unregistered(name)


def test_init_calling_wrong_kind_init_is_type_error():
    class Confused(SimpleDType, abstract=False):
        def __init__(self, name):
            DTypeCategory.__init__(self, name, supertype=DType.Any)

    name = unique_name("Confused")
    with registry_unchanged():
        with refused(TypeError):
            Confused(name)
    assert_unregistered(name)


# --------------------------------------------------------------------------
# No route around the constructor
# --------------------------------------------------------------------------

@pytest.mark.parametrize("route", ["cls.__new__", "object.__new__"])
def test_new_cannot_publish_a_usable_descriptor(route):
    """Allocating through __new__ (skipping the transaction) never yields a
    registered or usable descriptor."""
    name = unique_name("NewRoute")
    with registry_unchanged():
        try:
            if route == "cls.__new__":
                obj = SimpleDType.__new__(SimpleDType, name, bits=8,
                                          supertype=DType.Floating)
            else:
                obj = object.__new__(SimpleDType)
        except TypeError:
            obj = None
        if obj is not None:
            with pytest.raises((ValueError, TypeError, AttributeError)):
                SimpleDType.__init__(obj, name, bits=8, supertype=DType.Floating)
            with pytest.raises(ValueError):
                obj.name
    assert_unregistered(name)


# --------------------------------------------------------------------------
# Leaked self from a failing __init__
# --------------------------------------------------------------------------

def _leak_category(failure):
    """Construct a category subclass whose __init__ leaks self and then fails
    in the requested way; return (leaked, name)."""
    leaked = []

    class Leaky(DTypeCategory, abstract=False):
        def __init__(self, name):
            leaked.append(self)
            if failure == "no-super":
                return
            if failure == "bad-supertype":
                super().__init__(name, supertype=DType.Float32)
                return
            super().__init__(name, supertype=DType.Any)
            if failure == "raise":
                raise Boom("leak")

    name = unique_name("Leaky")
    if failure == "duplicate":
        name = DTypeCategory(unique_name("Taken")).name
    with registry_unchanged():
        expected = {"raise": Boom, "no-super": TypeError,
                    "bad-supertype": TypeError, "duplicate": ValueError}[failure]
        with refused(expected):
            Leaky(name)
    assert len(leaked) == 1
    if failure != "duplicate":
        assert_unregistered(name)
    return leaked[0], name


def _leak_simple():
    leaked = []

    class LeakySimple(SimpleDType, abstract=False):
        def __init__(self, name):
            super().__init__(name, bits=8, supertype=DType.Floating)
            leaked.append(self)
            raise Boom("leak")

    name = unique_name("LeakySimple")
    with refused(Boom):
        LeakySimple(name)
    return leaked[0]


FAILURES = ["raise", "no-super", "bad-supertype", "duplicate"]

ACCESSORS = {
    "name": lambda d: d.name,
    "value": lambda d: d.value,
    "supertype": lambda d: d.supertype,
    "supertypes": lambda d: d.supertypes(),
    "is_subtype_of": lambda d: d.is_subtype_of(DType.Any),
    "is_category": lambda d: d.is_category(),
    "is_simple": lambda d: d.is_simple(),
    "is_compound": lambda d: d.is_compound(),
    "structure": lambda d: d.structure(),
}


@pytest.mark.parametrize("accessor", sorted(ACCESSORS))
@pytest.mark.parametrize("failure", FAILURES)
def test_leaked_self_accessors_raise_value_error(failure, accessor):
    """A self leaked from a failing __init__ is unusable: every accessor
    raises ValueError."""
    leaked, _ = _leak_category(failure)
    with refused(ValueError):
        ACCESSORS[accessor](leaked)


@pytest.mark.parametrize("accessor", sorted(ACCESSORS) + ["bits"])
def test_leaked_simple_accessors_raise_value_error(accessor):
    leaked = _leak_simple()
    get = ACCESSORS.get(accessor, lambda d: d.bits)
    with refused(ValueError):
        get(leaked)


@pytest.mark.parametrize("failure", FAILURES)
def test_leaked_self_supports_repr_hash_and_eq(failure):
    leaked, _ = _leak_category(failure)
    assert isinstance(repr(leaked), str)
    assert "Leaky" in repr(leaked)
    assert hash(leaked) == hash(leaked)
    assert leaked == leaked
    assert leaked != DType.Any
    assert leaked not in DType.registered()


@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("user", ["simple", "category", "compound"])
def test_leaked_self_cannot_be_used_as_supertype(failure, user):
    """A rejected (or non-canonical) category is not a usable supertype:
    ValueError, nothing registered."""
    leaked, _ = _leak_category(failure)
    name = unique_name("UsesLeaked")

    class Comp(CompoundDType, abstract=False):
        pass

    with registry_unchanged():
        with refused(ValueError):
            if user == "simple":
                SimpleDType(name, bits=8, supertype=leaked)
            elif user == "category":
                DTypeCategory(name, supertype=leaked)
            else:
                Comp(name, supertype=leaked, simple_types=[DType.Float32])
    assert_unregistered(name)


def test_leaked_self_is_not_copied_into_identity():
    leaked, name = _leak_category("raise")
    with refused(LookupError):
        DType.from_name(name)
    assert all(d is not leaked for d in DType.registered())


# --------------------------------------------------------------------------
# Unfinished self used as a reference from inside __init__
# --------------------------------------------------------------------------

@pytest.mark.parametrize("user", ["simple", "category"])
@pytest.mark.parametrize("when", ["before-super", "after-super"])
def test_unfinished_self_as_supertype_is_value_error(user, when):
    """An unfinished self passed as supertype from inside __init__ is a
    ValueError; neither name is registered."""
    child = unique_name("Child")

    class Parent(DTypeCategory, abstract=False):
        def __init__(self, name):
            if when == "after-super":
                super().__init__(name, supertype=DType.Any)
            if user == "simple":
                SimpleDType(child, bits=8, supertype=self)
            else:
                DTypeCategory(child, supertype=self)
            if when == "before-super":
                super().__init__(name, supertype=DType.Any)

    name = unique_name("Parent")
    with registry_unchanged():
        with refused(ValueError):
            Parent(name)
    assert_unregistered(name, child)


def test_unfinished_self_rejection_can_be_caught_and_retried_later():
    """The child failed because the parent was unfinished; once the parent is
    finished the same child name registers under it."""
    child = unique_name("LaterChild")
    errors = []

    class Parent(DTypeCategory, abstract=False):
        def __init__(self, name):
            super().__init__(name, supertype=DType.Any)
            try:
                SimpleDType(child, bits=8, supertype=self)
            except ValueError as exc:
                errors.append(exc)

    parent = Parent(unique_name("LaterParent"))
    assert len(errors) == 1
    assert_unregistered(child)
    c = SimpleDType(child, bits=8, supertype=parent)
    assert c.supertype is parent


def test_self_as_own_supertype_is_value_error():
    class Ouroboros(DTypeCategory, abstract=False):
        def __init__(self, name):
            super().__init__(name, supertype=self)

    name = unique_name("Ouroboros")
    with registry_unchanged():
        with refused(ValueError):
            Ouroboros(name)
    assert_unregistered(name)


# --------------------------------------------------------------------------
# Calling __init__ again on a finished descriptor
# --------------------------------------------------------------------------

def test_reinit_builtin_simple_is_attribute_error():
    name = unique_name("Reinit")
    before = DType.Float32.structure()
    with registry_unchanged():
        with refused(AttributeError):
            DType.Float32.__init__(name, bits=8, supertype=DType.Integer)
        with refused(AttributeError):
            SimpleDType.__init__(DType.Float32, name, bits=8, supertype=DType.Integer)
    assert_unregistered(name)
    assert DType.Float32.name == "Float32"
    assert DType.Float32.bits == 32
    assert DType.Float32.supertype is DType.Floating
    assert DType.Float32.structure() is before


def test_reinit_builtin_category_is_attribute_error():
    name = unique_name("ReinitCat")
    with registry_unchanged():
        with refused(AttributeError):
            DTypeCategory.__init__(DType.Floating, name, supertype=None)
    assert_unregistered(name)
    assert DType.Floating.name == "Floating"
    assert DType.Floating.supertype is DType.Any


def test_reinit_with_same_arguments_is_attribute_error():
    d = SimpleDType(unique_name("Same"), bits=8, supertype=DType.Floating)
    with registry_unchanged():
        with refused(AttributeError):
            d.__init__(d.name, bits=8, supertype=DType.Floating)
    assert DType.from_name(d.name) is d


def test_reinit_user_subclass_is_attribute_error():
    d = FieldsSlots(unique_name("ReinitSub"), label="a")
    name = unique_name("ReinitSub2")
    with registry_unchanged():
        with refused(AttributeError):
            SimpleDType.__init__(d, name, bits=8, supertype=DType.Floating)
        with refused(AttributeError):
            d.__init__(name, label="b")
    assert d.label == "a"
    assert_unregistered(name)
