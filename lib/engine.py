"""Where independent tasks run: a Dask cluster (``dask.distributed``), embedded or remote.

The default is a ``LocalCluster`` of worker processes (one thread each, as many as the machine
has cores), started on entering the context and closed on leaving it; a scheduler address sends
the same tasks to an existing cluster started elsewhere with ``dask scheduler`` and
``dask worker tcp://HOST:8786`` (``docs/planner.md``). Results do not depend on where a task
runs: tasks carry their own seeds.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from lib.errors import SettingsError

Progress = Callable[[int, int], None]
"""Called with (tasks done, tasks in all) as tasks finish."""


def _run_batch(fn: Callable[[Any], Any], items: list) -> list:
    return [fn(item) for item in items]


class Engine:
    """A Dask client over an embedded ``LocalCluster`` or an existing scheduler; a context manager.

    Parameters
    ----------
    scheduler : str, optional
        Address of a running scheduler, ``tcp://HOST:8786``. None starts an embedded cluster.
    n_workers : int, optional
        Worker processes of the embedded cluster (default: the machine's cores). Ignored with a
        scheduler address.
    timeout : float
        Seconds to wait for a scheduler address to answer.

    Raises
    ------
    SettingsError
        On entering: the scheduler cannot be reached (its address is named), or ``n_workers < 1``.
    """

    def __init__(self, scheduler: str | None = None, n_workers: int | None = None, *, timeout: float = 10.0) -> None:
        if n_workers is not None and n_workers < 1:
            raise SettingsError("the number of workers must be at least 1")
        self.scheduler = scheduler
        self.n_workers = n_workers or os.cpu_count() or 1
        self.timeout = timeout
        self._cluster = None
        self._client = None

    def __enter__(self) -> Engine:
        from distributed import Client, LocalCluster

        if self.scheduler is None:
            # Worker processes are spawned, and multiprocessing re-imports ``__main__`` from its file in
            # each child: under Streamlit that is the running page, which a worker must not run. The
            # workers start under a bare ``__main__`` (the caller's is put back at once).
            caller_main = sys.modules["__main__"]
            sys.modules["__main__"] = types.ModuleType("__main__")
            try:
                # No dashboard, and the scheduler's HTTP endpoint on a free port: several apps or tests
                # on one machine would otherwise fight over port 8787 (and warn).
                self._cluster = LocalCluster(n_workers=self.n_workers, threads_per_worker=1, processes=True,
                                             host="127.0.0.1", dashboard_address=None,
                                             scheduler_kwargs={"dashboard": False, "dashboard_address": ":0"})
            finally:
                sys.modules["__main__"] = caller_main
            self._client = Client(self._cluster)
        else:
            try:
                self._client = Client(self.scheduler, timeout=self.timeout)
            except (OSError, TimeoutError, ValueError) as err:
                raise SettingsError(f"cannot reach the Dask scheduler at '{self.scheduler}' ({err})") from None
        return self

    def __exit__(self, *exc) -> None:
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None

    @property
    def workers(self) -> int:
        """Number of workers the scheduler knows now."""
        return len(self._client.scheduler_info()["workers"]) if self._client is not None else 0

    def map(self, fn: Callable[[Any], Any], items: Iterable, *, progress: Progress | None = None,
            batch: int | None = None) -> Iterator[tuple[int, Any]]:
        """Run ``fn(item)`` for every item on the cluster, yielding ``(index, result)`` as tasks finish.

        Parameters
        ----------
        fn : callable
            A module-level function (it is pickled to the workers).
        items : iterable
            Its arguments; ``index`` is an item's position.
        progress : callable, optional
            ``progress(done, total)`` in items, after each finished task.
        batch : int, optional
            Items per task (default 1): consecutive items share a task, so per-task costs such as
            compiling a solver for a data shape are paid once per batch.

        Yields
        ------
        (int, object)
            In order of completion, not of ``items``. Stopping the iteration cancels the tasks
            not yet finished; the results already yielded are the caller's.

        Raises
        ------
        Exception
            Whatever ``fn`` raised in a worker (the remaining tasks are cancelled).
        """
        from distributed import as_completed

        if self._client is None:
            raise RuntimeError("use the engine inside a 'with Engine(...)' block")
        items = list(items)
        size = max(1, batch or 1)
        starts = range(0, len(items), size)
        futures = {self._client.submit(_run_batch, fn, items[s:s + size], pure=False): s for s in starts}
        done = 0
        try:
            for future in as_completed(futures):
                start = futures[future]
                results = future.result()
                done += len(results)
                if progress is not None:
                    progress(done, len(items))
                yield from ((start + k, r) for k, r in enumerate(results))
        finally:
            self._client.cancel([f for f in futures if not f.done()])
