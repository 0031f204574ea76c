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
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from stride_weave._dtypes import set_unpickle_imports, unpickle_imports

if TYPE_CHECKING:
    from stride_weave._dask import StrideWeaveSetup

__all__ = ["WorkerSetup", "initializer", "dask_plugin", "register_with_dask"]

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
    before any worker starts.
    """
    names = tuple(_module_name(m) for m in modules)
    if define is not None and not callable(define):
        raise TypeError(f"initializer: define must be a function of no arguments or None, "
                        f"got an object of type {type(define).__qualname__}")
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
    worker cannot load ends that worker (docs/processes.md)."""
    plugin = dask_plugin(*modules, define=define, name=name)
    client.register_plugin(plugin, name=plugin.name)
    return plugin
