"""Registering your descriptors in worker processes.

A descriptor travels to another process by name (docs/pickling.md): the
worker must have the same definition registered, or be allowed to import
the module that registers it. This module makes every worker do that when
it starts, before the first task arrives:

- :func:`initializer` is the ``initializer`` of a ``multiprocessing`` pool
  or a ``concurrent.futures.ProcessPoolExecutor``;
- :func:`register_with_dask` registers a worker plugin with a
  ``dask.distributed`` client, which runs on every worker, those that join
  later included (:func:`dask_plugin` makes the plugin for you to register).

Then :func:`check_dask` checks, before you submit, that every worker of
a Dask cluster can load the descriptors you are about to send: it sends
their names and structures as plain data (never a pickle of a descriptor,
which ends a Dask worker that cannot load it) and raises
:class:`WorkerLoadError` in the client, naming the workers, what they
lack and the remedy.

Each takes the modules whose import registers your descriptors, and an
optional ``define`` function for definitions that live in a script or a
notebook (``__main__``, which a worker never imports): it is called in
every worker, so it should register with ``ensure()``, which gives back
the registered descriptor when it runs again. In every worker, the modules
are added to the unpickle import policy
(:func:`stride_weave.dtypes.set_unpickle_imports`), then imported, then
``define`` is called.

Nothing here imports multiprocessing, concurrent.futures or Dask: the Dask
plugin's class is made when :func:`dask_plugin` is first called.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from stride_weave._dtypes import (
    DType,
    _unpickle_imports_environment,
    set_unpickle_imports,
    unpickle_imports,
)

if TYPE_CHECKING:
    from stride_weave._dask import StrideWeaveSetup

__all__ = ["WorkerSetup", "initializer", "dask_plugin", "register_with_dask",
           "check_dask", "WorkerLoadError"]

_lock = threading.Lock()


class WorkerSetup(NamedTuple):
    """What a worker runs when it starts: allow ``modules`` in its unpickle
    import policy, import them, then call ``define`` (when not None).

    Calling it does that, in the calling process; it is picklable (``define``
    must be too: a function of an importable module, or of ``__main__`` at
    its top level, which a *spawn* worker's ``__main__`` defines again, or
    anything cloudpickle sends, for Dask). An immutable tuple; make one with
    :func:`initializer`."""

    modules: tuple[str, ...]
    define: Callable[[], object] | None

    def __call__(self) -> None:
        """Allow, import, define: in this process."""
        _allow(self.modules)
        for module in self.modules:
            importlib.import_module(module)
        if self.define is not None:
            self.define()


def initializer(*modules: str, define: Callable[[], object] | None = None) -> WorkerSetup:
    """The set-up of a worker, to give as the ``initializer`` of a pool:
    ``multiprocessing.get_context("spawn").Pool(initializer=initializer("mylib"))``
    or ``ProcessPoolExecutor(initializer=initializer("mylib", define=define))``.

    ``modules`` are dotted module names (exact ``str``, no ``__main__``
    part: unpickling never imports those); ``define`` a function of no
    arguments, or None. TypeError or ValueError otherwise, in this process,
    before any worker starts; so is a malformed
    ``STRIDE_WEAVE_UNPICKLE_IMPORTS`` in this process's environment, which
    workers inherit (the ValueError their policy would raise at its first
    use).
    """
    names = tuple(_module_name(m) for m in modules)
    if define is not None and not callable(define):
        raise TypeError(f"initializer: define must be a function of no arguments or None, "
                        f"got an object of type {type(define).__qualname__}")
    _unpickle_imports_environment()
    return tuple.__new__(WorkerSetup, (names, define))


def _module_name(value: object) -> str:
    """``value`` as a module name (an exact str copy of a str)."""
    if not issubclass(type(value), str):   # the real type: __class__ may claim str
        raise TypeError(f"initializer: modules must be module names (str), got "
                        f"an object of type {type(value).__qualname__}")
    name = str.__str__(value)
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts) or "__main__" in parts:
        raise ValueError(
            f"initializer: {name!r} is not a module a worker can import: a dotted "
            "name of identifiers without a __main__ part is expected (define "
            "what a script or notebook registers in a define function instead)"
        )
    return name


def _allowed(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _allow(modules: tuple[str, ...]) -> None:
    """Add ``modules`` to this process's unpickle import policy. A policy of
    True (any module) already allows them; one of False (importing on
    unpickle turned off) stays off: the modules are imported by the set-up
    itself, so their descriptors load all the same."""
    with _lock:
        current = unpickle_imports()
        if isinstance(current, bool):
            return
        missing = tuple(m for m in modules if not _allowed(m, current))
        if not missing:
            return
        # First a superset of what is allowed now (the user's prefixes with
        # the declared modules), so that nothing is refused meanwhile; then
        # the user's own setting with the new modules.
        previous = set_unpickle_imports(current + missing)
        if isinstance(previous, tuple):
            set_unpickle_imports(previous + missing)


def dask_plugin(*modules: str, define: Callable[[], object] | None = None,
                name: str | None = None) -> StrideWeaveSetup:
    """A ``dask.distributed`` worker plugin whose ``setup`` runs
    ``initializer(*modules, define=define)`` on the worker: register it with
    ``client.register_plugin(plugin)``, as :func:`register_with_dask` does.
    ``name`` is the plugin's name (registering a plugin of the same name
    again replaces it, and runs it again on every worker); by default it
    is made from the modules and ``define``'s qualified name. Imports
    ``distributed``."""
    setup = initializer(*modules, define=define)
    from stride_weave._dask import StrideWeaveSetup

    if name is None:
        label = getattr(define, "__qualname__", None) if define is not None else None
        name = "stride_weave.workers:" + ",".join(setup.modules + ((label,) if label else ()))
    return StrideWeaveSetup(setup, name)


def register_with_dask(client: Any, *modules: str,
                       define: Callable[[], object] | None = None,
                       name: str | None = None) -> StrideWeaveSetup:
    """Run ``initializer(*modules, define=define)`` on every worker of
    ``client``'s cluster, now and on every worker that joins later (a
    worker plugin, :func:`dask_plugin`); return the plugin. Register it
    before submitting tasks that carry these descriptors: a task argument a
    worker cannot load ends that worker (docs/processes.md). Then
    :func:`check_dask` checks that every worker loads them::

        workers.register_with_dask(client, "mylib")
        workers.check_dask(client, mylib.FP6)   # WorkerLoadError if not

    An exception of the set-up on a worker (``mylib`` not importable there,
    ``define`` raising) is raised here, in the client."""
    plugin = dask_plugin(*modules, define=define, name=name)
    client.register_plugin(plugin, name=plugin.name)
    return plugin


# --- the Dask pre-flight check ---------------------------------------------------

class WorkerLoadError(LookupError):
    """Raised by :func:`check_dask` when a worker cannot load a descriptor
    (or the cluster has no worker). The message names the workers, what
    each lacks, why, and the remedy; ``missing`` maps each such worker's
    address to the names it cannot load (empty when there is no worker)."""

    def __init__(self, message: str, missing: dict[str, tuple[str, ...]]) -> None:
        super().__init__(message)
        self.missing = missing

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.missing))


def _module_reason(module: str) -> str:
    """Why ``module`` did not give this process the name it was to register
    (called after loading failed): one of the reasons :func:`check_dask`
    explains."""
    parts = module.split(".")
    if "__main__" in parts or "__mp_main__" in parts:
        return "main"
    top = parts[0]
    try:
        importable = top in sys.modules or importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        importable = False
    if not importable:
        return "not-importable"
    policy = unpickle_imports()
    if policy is False or (isinstance(policy, tuple) and not _allowed(module, policy)):
        return "not-allowed"
    return "not-registered" if module in sys.modules else "import-failed"


def _try_loading(items: tuple[tuple[str, tuple[Any, ...], str | None], ...]
                 ) -> tuple[tuple[str, str, str], ...]:
    """Run on each worker by :func:`check_dask`: load each ``(name,
    structure, module)`` as unpickling would (importing the module as the
    worker's policy allows), and return ``(name, reason, message)`` for each
    one that does not load. Never raises for a descriptor."""
    from stride_weave._dtypes import _reconstruct

    failed = []
    for name, structure, module in items:
        try:
            if module is None:
                _reconstruct(name, structure)
            else:
                _reconstruct(name, structure, module)
        except ValueError as exc:
            failed.append((name, "differs", str(exc)))
        except LookupError as exc:
            reason = "builtin" if module is None else _module_reason(module)
            failed.append((name, reason, str(exc)))
        except Exception as exc:   # reported in the client, with the worker
            failed.append((name, "error", f"{type(exc).__name__}: {exc}"))
    return tuple(failed)


def _sent(descriptor: object, position: int) -> tuple[str, tuple[Any, ...], str | None]:
    """What :func:`check_dask` sends for ``descriptor``: its name, its
    structure (nested tuples of str) and the module its pickle names."""
    if not issubclass(type(descriptor), DType):   # the real type
        raise TypeError(f"check_dask: descriptors must be DType instances, got an "
                        f"object of type {type(descriptor).__qualname__} "
                        f"(argument {position})")
    d = cast(DType, descriptor)
    reduced: Any = d.__reduce__()   # owned by the model: not overridable
    args = reduced[1]
    return (d.name, d.structure(), args[1] if len(args) > 1 else None)


def _remedy(descriptor: DType, reason: str, module: str | None) -> str:
    """The remedy :func:`check_dask` gives for one failure."""
    from stride_weave import __version__

    name = descriptor.name
    register = f"stride_weave.workers.register_with_dask(client, {module!r})"
    same_release = f"install stride-weave {__version__} (the client's) on the workers"
    if reason == "main":
        return (f"{name!r} is defined in the client's __main__, which no worker "
                "imports: register it on the workers with stride_weave.workers."
                "register_with_dask(client, define=f), where f makes it with "
                f"{type(descriptor).__name__}.ensure(...)")
    if reason == "not-allowed":
        return (f"{register}: it allows and imports {module!r} on every worker, "
                "those that join later included")
    if reason == "not-importable":
        return (f"install {module!r} on the workers (a single-file module: "
                f"client.upload_file(path)), then {register}")
    if reason == "import-failed":
        return (f"make {module!r} import on the workers (the message says what it "
                f"raised), then {register}")
    if reason == "not-registered":
        return (f"the workers' {module!r} registers no {name!r} when imported: "
                f"install the client's version of {module!r} on the workers, or "
                "register it there with stride_weave.workers.register_with_dask("
                f"client, {module!r}, define=f)")
    if reason == "differs" and module is not None:
        return f"install the client's version of {module!r} on the workers"
    return same_release


def check_dask(client: Any, *descriptors: DType) -> tuple[str, ...]:
    """Check that every worker of ``client``'s cluster can load
    ``descriptors``, before submitting tasks that carry them; return the
    addresses of the workers checked.

    Each worker is sent the descriptors' names, structures and modules as
    plain data (with ``client.run``; no pickle of a descriptor, so a worker
    that cannot load one does not end) and loads each as unpickling would:
    a name registered there must have the same structure, and an unknown
    one imports its module as the worker's import policy allows (that
    import stays done, as the first task's would). Raises
    :class:`WorkerLoadError` in the client when a worker cannot load one,
    naming the workers, what they lack, why, and the remedy (such as
    ``register_with_dask(client, "mylib")``); when a worker cannot run the
    check at all (stride-weave is not installed there); and when the
    cluster has no worker yet (``client.wait_for_workers(n)`` first).
    TypeError, before anything is sent, for an argument that is not a
    descriptor.

    A worker that joins later is not checked: :func:`register_with_dask`
    sets up those too.
    """
    from stride_weave import __version__

    items = tuple(_sent(d, i) for i, d in enumerate(descriptors, 2))
    results = client.run(_try_loading, items, on_error="return")
    if not results:
        raise WorkerLoadError(
            "check_dask: the cluster has no worker: nothing could be checked "
            "(wait for workers with client.wait_for_workers(n) first)", {})
    by_name = {d.name: (d, module) for d, (_, _, module) in zip(descriptors, items)}
    groups: dict[tuple[str, str, str], list[str]] = {}
    broken: dict[str, list[str]] = {}
    missing: dict[str, tuple[str, ...]] = {}
    for worker, result in sorted(results.items()):
        if isinstance(result, BaseException):
            broken.setdefault(f"{type(result).__name__}: {result}", []).append(worker)
            missing[worker] = tuple(by_name)
            continue
        for failure in result:
            groups.setdefault(failure, []).append(worker)
        if result:
            missing[worker] = tuple(dict.fromkeys(name for name, _, _ in result))
    if not missing:
        return tuple(sorted(results))
    lines = [f"check_dask: {len(missing)} of {len(results)} workers cannot load what "
             "the client would send them (a task argument a worker cannot load ends "
             "that worker):"]
    for message, where in broken.items():
        lines.append(f"- the check does not run on {', '.join(where)}: {message}")
        lines.append(f"  remedy: install stride-weave {__version__} (the client's) "
                     "on the workers")
    for (name, reason, message), where in groups.items():
        descriptor, module = by_name[name]
        origin = f"module {module!r}" if module is not None else "built-in"
        lines.append(f"- {name!r} ({origin}) on {', '.join(where)}: {message}")
        lines.append(f"  remedy: {_remedy(descriptor, reason, module)}")
    raise WorkerLoadError("\n".join(lines), missing)
