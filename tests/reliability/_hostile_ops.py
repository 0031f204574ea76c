"""Hostile operations shared by the hypothesis state machine
(tests/reliability/test_fuzz.py) and the atheris harness (fuzz/fuzz_reconstruct.py).

Each operation tries one attack a user's Python code can make and checks
its own outcome: the attack is refused with the documented exception and
the registry is left as it was, or it has no effect on what any registered
descriptor reports.  A wrong outcome raises AssertionError (a finding); a
crash of the interpreter is a finding too.
"""
import gc
import io
import pickle

from stride_weave import _dtypes
from stride_weave.dtypes import (
    BlockScaledDType,
    DType,
    DTypeCategory,
    Level,
    RepresentationRule,
    SimpleDType,
    SymbolicBits,
    Whole,
)

#: Model-owned member names a subclass tries to take.
OWNED = ("name", "bits", "supertype", "structure", "is_simple",
         "is_subtype_of", "simple_types", "bits_per_element",
         "is_opaque_storage", "__eq__", "__hash__", "__reduce_ex__",
         "__getattribute__", "__class__")

#: Ways of defining a class that would shadow an owned member.
CLASS_ROUTES = ("namespace", "str-subclass-key", "slots", "str-subclass-slot",
                "dict-slot", "dict-mixin", "non-str-key", "mixin-member")

#: Ways of writing an owned name into an instance dict while building.
DICT_ROUTES = ("vars", "__dict__ assignment", "gc.get_referents",
               "str-subclass-key")

#: What the finalizer of an attribute name tries on the object it named,
#: when the object's building dict is released at the seal.
FINALIZER_ACTIONS = ("replace __dict__", "set attribute", "delete attribute")

#: What a gc callback defines while other classes are being created.
CALLBACK_CLASSES = ("descriptor", "rule", "both")


class _S(str):
    """A str subclass whose hash and equality lie."""

    def __hash__(self):
        return hash("zzz")

    def __eq__(self, other):
        return True


def _refused(exc, call, registry_before=None):
    before = DType.registered() if registry_before is None else registry_before
    try:
        call()
    except exc:
        pass
    else:
        raise AssertionError(f"{call} was not refused with {exc.__name__}")
    assert DType.registered() == before, "a refused attack changed the registry"


def hostile_class(route, owned):
    """Define a descriptor class that shadows `owned` by `route`: a
    TypeError, no class, the registry unchanged."""
    meta = type(SimpleDType)

    def define():
        if route == "namespace":
            meta("Hostile", (SimpleDType,), {owned: None})
        elif route == "str-subclass-key":
            meta("Hostile", (SimpleDType,), {str.__new__(_S, owned): None})
        elif route == "slots":
            meta("Hostile", (SimpleDType,), {"__slots__": (owned,)})
        elif route == "str-subclass-slot":
            meta("Hostile", (SimpleDType,), {"__slots__": (str.__new__(_S, owned),)})
        elif route == "dict-slot":
            meta("Hostile", (SimpleDType,), {"__slots__": ("__dict__",)})
        elif route == "dict-mixin":
            meta("Hostile", (type("DictMixin", (), {}), SimpleDType), {})
        elif route == "non-str-key":
            meta("Hostile", (SimpleDType,), {len(owned): None})
        else:
            mixin = type("Mixin", (), {"__slots__": (), owned: None})
            meta("Hostile", (mixin, SimpleDType), {})

    _refused(TypeError, define)


def shadowing_instance_dict(route, owned, name):
    """A descriptor whose __init__ writes `owned` into its instance dict by
    `route`: a TypeError and `name` stays free."""
    key = str.__new__(_S, owned) if route == "str-subclass-key" else owned

    class Writer(SimpleDType, abstract=False):
        def __init__(self, n):
            super().__init__(n, bits=8, supertype=DType.Floating)
            self.tag = 1
            if route in ("vars", "str-subclass-key"):
                vars(self)[key] = lambda *a: "lie"
            elif route == "__dict__ assignment":
                self.__dict__ = {key: lambda *a: "lie"}
            else:
                [o for o in gc.get_referents(self) if isinstance(o, dict)][0][key] = 1

    _refused(TypeError, lambda: Writer(name))
    try:
        DType.from_name(name)
    except LookupError:
        pass
    else:
        raise AssertionError(f"{name!r} was registered by a refused construction")


def hook_uses_its_class(action):
    """A base whose __init_subclass__ instantiates or subclasses the class
    being created: refused inside the hook; the class then works."""
    seen = []

    class Base(SimpleDType):
        def __init_subclass__(cls, **kw):
            super().__init_subclass__(**kw)
            cls.tag = cls.__name__
            try:
                if action == "instantiate":
                    cls("HookMade", bits=8, supertype=DType.Floating)
                elif action == "subclass":
                    type(cls)("Sub", (cls,), {}, abstract=False)
                else:
                    type(cls)("Sub", (cls, DTypeCategory), {}, abstract=False)
            except TypeError as e:
                seen.append(str(e))

    before = DType.registered()
    Leaf = type(Base)("Leaf", (Base,), {}, abstract=False)
    assert len(seen) == 1 and "still being created" in seen[0], seen
    assert Leaf.tag == "Leaf"
    assert DType.registered() == before
    return Leaf


def assign_class(obj):
    """Try every way of changing obj.__class__: refused, type unchanged."""
    before = type(obj)
    others = (SimpleDType, BlockScaledDType, DTypeCategory, RepresentationRule)
    for other in others:
        for attempt in (lambda: setattr(obj, "__class__", other),
                        lambda: object.__setattr__(obj, "__class__", other),
                        lambda: object.__delattr__(obj, "__class__")):
            try:
                attempt()
            except (AttributeError, TypeError):
                pass
            else:
                raise AssertionError(f"__class__ of {obj!r} was changed")
            assert type(obj) is before and obj.__class__ is before


def _graph_object(obj):
    """What the walk descends into: the module, model objects and the
    immutable containers they are built of (never a user function, whose
    globals are the user's own)."""
    return (obj is _dtypes
            or isinstance(obj, (DType, RepresentationRule, Level, SymbolicBits,
                                tuple, frozenset))
            or obj is Whole)


def poke_referents(*roots):
    """Clear every mutable container that gc.get_referents hands out from
    `roots` and from the model objects those refer to (two levels):
    clearing a table the graph relies on would be the attack.  The module's
    own namespace and classes are left alone (CPython exposes those for
    every module and type)."""
    skip = id(vars(_dtypes))
    level = list(roots)
    for _ in range(2):
        found = []
        for obj in level:
            for ref in gc.get_referents(obj):
                if id(ref) == skip or isinstance(ref, type):
                    continue
                if isinstance(ref, (dict, list, set, bytearray)):
                    ref.clear()
                elif _graph_object(ref):
                    found.append(ref)
        level = found


class _FinalizingName(str):
    """An attribute name whose finalizer runs an attack on the object."""

    def __del__(self):
        attack = type(self).attack
        if attack is not None:
            attack()


def attack_attributes(target, action, other):
    """Try `action` (FINALIZER_ACTIONS) on `target`'s attributes: replace
    its __dict__ with `other`, set `late`, or delete `k`.  Returns "done",
    or "refused" for the AttributeError of a sealed object."""
    try:
        if action == "replace __dict__":
            target.__dict__ = other
        elif action == "set attribute":
            target.late = "late"
        else:
            del target.k
    except AttributeError:
        return "refused"
    return "done"


def finalizer_during_sealing(action, name):
    """A descriptor whose attribute dict holds a name whose finalizer runs
    when that dict is released by the seal, and tries `action` on the
    descriptor (replacing its __dict__ with a dict the attacker keeps, or
    writing an attribute).  The descriptor is published sealed: the attack
    is refused, and nothing the attacker kept reaches it."""
    other = {}
    outcome = []

    class Name(_FinalizingName):
        attack = None

    class Target(SimpleDType, abstract=False):
        def __init__(self, n):
            super().__init__(n, bits=8, supertype=DType.Floating)
            holder.append(self)
            vars(self)[Name("k")] = 1   # the dict holds the only reference

    def attack():
        outcome.append(attack_attributes(holder[0], action, other))

    holder = []
    Name.attack = attack
    d = Target(name)
    holder.clear()
    other["structure"] = lambda *a: ("lie",)
    other["__reduce_ex__"] = lambda *a: (str, ("lie",))
    assert outcome == ["refused"], outcome
    assert DType.from_name(name) is d
    assert d.structure()[:2] == ("SimpleDType", ("bits", "int:8"))
    assert dict(vars(d)) == {"k": 1}
    assert not hasattr(d, "late")
    assert pickle.loads(pickle.dumps(d)) is d
    return d


def classes_made_by_gc_callbacks(defined, count=6):
    """Create `count` descriptor classes (with __slots__ and a hook) while
    a gc callback, run by collections forced at every other allocation,
    creates classes of its own (`defined`: CALLBACK_CLASSES), also between
    type()'s first allocation and the class's.  Every class is created
    whole: each can be used, each hook saw a usable class, and the
    registry is unchanged."""
    made, seen, keep = [], [], []
    # More slots than CPython keeps free tuples for: type() allocates a
    # tuple for them before the class; the functions made before each
    # class move the collections over type()'s allocations.
    slots = tuple(f"s{i}" for i in range(24))

    def callback(phase, info):
        if phase != "start" or len(made) >= 40 * count:
            return
        if defined in ("descriptor", "both"):
            made.append(type(SimpleDType)("Inner", (SimpleDType,), {}))
        if defined in ("rule", "both"):
            made.append(type(RepresentationRule)("InnerRule",
                                                 (RepresentationRule,), {}))

    class Base(SimpleDType):
        def __init_subclass__(cls, **kw):
            super().__init_subclass__(**kw)
            seen.append(cls)

    before = DType.registered()
    threshold = gc.get_threshold()
    gc.callbacks.append(callback)
    gc.set_threshold(1)
    try:
        created = []
        for i in range(count):
            keep.extend(lambda: None for _ in range(i % 3))
            created.append(type(Base)("Outer", (Base,), {"__slots__": slots},
                                      abstract=False))
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(callback)
    assert DType.registered() == before
    assert seen == created
    for cls in seen + made:
        if isinstance(cls, type(SimpleDType)):
            assert type(cls.registered()) is tuple
            try:
                cls.from_name("no such name, surely")
            except LookupError:
                pass
            else:
                raise AssertionError(f"{cls} found an unknown name")
    return created


#: What a hostile object put in sys.modules stands in for.
MODULE_STAND_INS = ("difflib", "copyreg", "importlib", "the hinted module")


class _Tripwire:
    """A module stand-in whose every attribute read is recorded: the core
    must never consult it."""

    def __init__(self, touched):
        object.__setattr__(self, "_touched", touched)

    def __getattribute__(self, name):
        object.__getattribute__(self, "_touched").append(name)
        raise AttributeError(name)


def _core_pickle(obj):
    """Pickle `obj` with an empty dispatch table of the pickler's own, so
    only the object's own reduction runs.  Libraries register reducers for
    every exception class in copyreg's global table (tblib, which
    distributed installs), and those read copyreg, whatever the core
    does."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer)
    pickler.dispatch_table = {}
    pickler.dump(obj)
    return buffer.getvalue()


def sys_modules_replaced(which, name):
    """Replace sys.modules[`which`] with a tripwire while a miss on `name`
    is raised, read and pickled, and while a pickle of an unregistered
    descriptor whose hint names that module is loaded.  The miss reads the
    same message, the load is a LookupError, nothing is registered, and
    no stand-in is consulted, except the hinted module, which the import
    policy may only ever import (never read as a module that is there)."""
    import sys

    touched = []
    key = name + "_hint" if which == "the hinted module" else which
    saved = sys.modules.get(key)
    before = DType.registered()
    sys.modules[key] = _Tripwire(touched)
    try:
        try:
            DType.from_name(name)
        except LookupError as exc:
            message = str(exc)
            again = pickle.loads(_core_pickle(exc))
        else:
            raise AssertionError(f"{name!r} was found")
        assert message.startswith(f"no descriptor is registered under the name {name!r}")
        assert str(again) == message
        try:
            _dtypes._reconstruct(name, ("SimpleDType",), key)
        except (LookupError, ValueError):
            pass
        else:
            raise AssertionError("an unregistered name was reconstructed")
    finally:
        if saved is None:
            sys.modules.pop(key, None)
        else:
            sys.modules[key] = saved
    assert DType.registered() == before
    assert touched == [], f"the core consulted sys.modules[{key!r}]: {touched}"


def miss_shared_by_threads(name, threads=4, rounds=3):
    """Threads read one fresh miss at once (str, repr, args, pickling):
    every read gives the one message, and nothing crashes."""
    import threading

    for _ in range(rounds):
        try:
            DType.from_name("".join([name, ""]))    # a new str
        except LookupError as exc:
            shared = exc
        barrier = threading.Barrier(threads)
        seen = []

        def read():
            barrier.wait()
            seen.append((str(shared), repr(shared), shared.args,
                         str(pickle.loads(pickle.dumps(shared)))))

        workers = [threading.Thread(target=read) for _ in range(threads)]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
        messages = {m for reads in seen for m in (reads[0], reads[3], reads[2][0])}
        assert len(seen) == threads and len(messages) == 1, seen
        assert messages.pop().startswith(
            f"no descriptor is registered under the name {name!r}")


def nomemory_unusable():
    """Why this interpreter cannot make allocations fail on demand, or
    None when it can (with _testcapi.set_nomemory)."""
    import sysconfig

    try:
        import _testcapi
    except ImportError:
        return "this CPython has no _testcapi to make allocations fail"
    if not hasattr(_testcapi, "set_nomemory"):
        return "this CPython has no _testcapi.set_nomemory to make allocations fail"
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        # Seen on 3.13.5t with nothing but the standard library: after
        # type() creations with one allocation failed, the interpreter's
        # own heap is corrupt (a later collection crashes in a list's
        # traverse, or finalization loops in mimalloc's page collection).
        return ("allocation failures corrupt a free-threaded CPython's own "
                "heap (type() alone, after importing enum, dataclasses and "
                "typing, then crashes or hangs at exit); checked on GIL builds")
    return None


def _nomemory():
    if nomemory_unusable() is not None:
        return None
    import _testcapi
    return _testcapi


def count_unraisable(errors):
    """Install a sys.unraisablehook for a child that makes allocations
    fail, and return its count of MemoryErrors.

    A failed allocation can land in CPython's own machinery, which cannot
    raise it and reports it as unraisable instead (the information dict a
    collection hands its callbacks, a finalizer): the operation then
    carries on, and its result is checked as any other.  Those are
    counted; any other unraisable exception is a finding, appended to
    `errors` as text."""
    import sys

    counted = {"MemoryError": 0}

    def hook(report):
        if issubclass(report.exc_type, MemoryError):
            counted["MemoryError"] += 1
        else:
            errors.append("unraisable %s: %s (in %r)" % (
                report.exc_type.__name__, report.exc_value, report.object))

    sys.unraisablehook = hook
    return counted


#: What fails an allocation in `allocation_fails`.
ALLOCATING_OPERATIONS = ("simple dtype", "numeric record", "promotion edge")


def allocation_fails(what, name, index):
    """Run `what` with allocation number `index` failing (where
    _testcapi.set_nomemory exists): the result is the truth, or a
    MemoryError that leaves the registry, the descriptor's record and the
    default promotion lattice as they were.  The promotion edge goes into a
    lattice of its own (extending the default), so that runs of this
    operation do not grow the process's default lattice.  Returns None
    where allocations cannot be made to fail, else whether it failed."""
    import gc
    import sys

    from stride_weave.dtypes import default_lattice
    from stride_weave.numerics import NumericInfo, numeric_info, register_numeric_info

    testcapi = _nomemory()
    if testcapi is None:
        return None
    if what == "simple dtype":
        def op():
            return SimpleDType(name, bits=8, supertype=DType.Floating)
    else:
        d = SimpleDType(name, bits=16, supertype=DType.Integer)
        record = NumericInfo.integer(16, signed=True)
        if what == "promotion edge":
            register_numeric_info(d, record)
            upper = SimpleDType(name + "_up", bits=32, supertype=DType.Integer)
            register_numeric_info(upper, NumericInfo.integer(32, signed=True))

            def op():
                return default_lattice().extend([(d, upper)])
        else:
            def op():
                return register_numeric_info(d, record)
    before, lattice = DType.registered(), default_lattice()
    # The collector's callbacks (hypothesis times collections with one) are
    # not the operation: one whose allocation fails in a collection the
    # operation starts is reported on stderr as unraisable, so they are
    # left out while allocations fail.
    callbacks = gc.callbacks[:]
    gc.callbacks.clear()
    sys._getframe()         # this frame's object exists before anything fails
    testcapi.set_nomemory(index, index + 1)
    try:
        result = op()
    except MemoryError:
        failed = True
    else:
        failed = False
    finally:
        testcapi.remove_mem_hooks()
        gc.callbacks[:] = callbacks
    if what == "simple dtype":
        if failed:
            assert DType.registered() == before
        else:
            assert DType.from_name(name).bits == 8
    elif what == "numeric record":
        if failed:
            try:
                numeric_info(d)
            except LookupError:
                pass
            else:
                raise AssertionError("a record was attached by a failed call")
        else:
            assert numeric_info(d) == record
    else:
        assert default_lattice() is lattice
        if not failed:
            assert result.promote_types(d, upper) is upper
            assert result.promote_types(DType.Int8, DType.Int32) is DType.Int32
    return failed
