"""The Dask worker plugin of stride_weave.workers (imports distributed).

A module of its own, imported only by stride_weave.workers.dask_plugin(),
so that the plugin's class is importable by name on the workers (which
unpickle it) while nothing else in stride-weave imports Dask.
"""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from stride_weave.workers import WorkerSetup


class StrideWeaveSetup(WorkerPlugin):
    """Runs a :class:`stride_weave.workers.WorkerSetup` on each worker."""

    def __init__(self, worker_setup: WorkerSetup, name: str) -> None:
        self.worker_setup = worker_setup
        self.name = name

    def setup(self, worker: Any) -> None:
        self.worker_setup()
