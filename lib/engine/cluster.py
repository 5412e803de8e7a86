"""Where independent tasks run: a Dask cluster (``dask.distributed``), embedded or remote.

The default is a ``LocalCluster`` of worker processes (one thread each, as many as the machine
has cores), started on entering the context and closed on leaving it; a scheduler address sends
the same tasks to an existing cluster started elsewhere with ``dask scheduler`` and
``dask worker tcp://HOST:8786`` (``docs/planner.md``). Results do not depend on where a task
runs: tasks carry their own seeds.

Every wait is bounded (``docs/serving.md``): a scheduler address must answer Dask's handshake
within ``timeout`` seconds, and a running map stops with :class:`lib.errors.ClusterError` when the
cluster has had no worker (or no scheduler) for ``lost_timeout`` seconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import struct
import sys
import threading
import time
import types
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from lib.errors import ClusterError, SettingsError

if TYPE_CHECKING:
    from distributed import Client, LocalCluster

TaskProgress = Callable[[int, int], None]
"""Called with (tasks done, tasks in all) as tasks finish."""

CONNECT_TIMEOUT = 10.0
"""Seconds a scheduler address has to accept a connection and send Dask's handshake."""

LOST_TIMEOUT = 30.0
"""Seconds a running map waits for a worker (or the scheduler) to come back before it stops."""

HANDSHAKE_MAX_BYTES = 65536
"""A Dask scheduler's first message (its handshake: compression, Python version, pickle protocol)
is about 60 bytes; a peer announcing more than this is not one (and is not read)."""


def _run_batch(fn: Callable[[Any], Any], items: list) -> list:
    return [fn(item) for item in items]


@contextlib.contextmanager
def _ctrl_c_kept() -> Iterator[None]:
    """Ctrl-C stops the block even when its ``KeyboardInterrupt`` is lost.

    Python runs a signal's handler in the main thread at the next bytecode, and that may be inside a
    garbage collector callback (JAX registers one) or a weakref callback, whose exceptions Python
    prints as "Exception ignored in ..." and drops: the Ctrl-C was lost, and a map waiting for a
    worker went on waiting. While the block runs in the main thread with Python's own Ctrl-C handler
    (:func:`signal.default_int_handler`), a handler that also notes the signal replaces it; leaving
    the block (Python's handler back) raises ``KeyboardInterrupt`` if a signal was noted and its
    exception did not get out. Elsewhere (another thread, as under Streamlit, or a handler of the
    caller's own) the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    noted = False

    def note(signum: int, frame: types.FrameType | None) -> None:
        nonlocal noted
        noted = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, note)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if noted:
        raise KeyboardInterrupt


def _receive(sock: socket.socket, size: int, deadline: float) -> bytes:
    """Exactly ``size`` bytes from ``sock`` before ``deadline`` (monotonic seconds)."""
    data = bytearray()
    while len(data) < size:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)
        chunk = sock.recv(min(size - len(data), 65536))
        if not chunk:
            raise ConnectionResetError("the connection was closed")
        data += chunk
    return bytes(data)


def check_scheduler(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Check, within ``timeout`` seconds, that a Dask scheduler answers at ``address``.

    A Dask server writes its handshake as soon as it accepts a connection (``distributed.comm.core``):
    an 8-byte length, the frame count and lengths, and one msgpack frame holding ``python`` and
    ``pickle-protocol``. The check sends a client's handshake (so a server of another protocol, such
    as HTTP, answers at once) and reads only the peer's, with its length capped at
    :data:`HANDSHAKE_MAX_BYTES` and decoded by plain msgpack (nothing is unpickled), before Dask's
    own client (whose handshake has no timeout) is let near the peer.

    Parameters
    ----------
    address : str
        ``tcp://HOST:PORT`` or ``HOST:PORT``.
    timeout : float
        Seconds for the connection and the handshake together.

    Raises
    ------
    SettingsError
        Naming the address: malformed or not TCP, refused, silent for ``timeout`` seconds, or answering
        with something other than a Dask handshake (an HTTP server, random bytes, a huge frame).
    """
    import msgpack
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.protocol.utils import pack_frames_prelude, unpack_frames

    def refuse(why: str) -> SettingsError:
        return SettingsError(f"the Dask scheduler address '{address}' {why}")

    try:
        scheme, location = parse_address(address, strict=False)
        host, port = parse_host_port(location)
    except ValueError as err:
        raise refuse(f"is not an address tcp://HOST:PORT ({err})") from None
    if scheme != "tcp":
        raise refuse(f"uses '{scheme}://'; give tcp://HOST:PORT")
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            # speak first, as Dask's client does, and end with a blank line: a line-based server of
            # another protocol (HTTP) answers at once instead of waiting for the end of a request
            hello = msgpack.dumps({"compression": None, "python": tuple(sys.version_info)[:3], "pickle-protocol": 5})
            framed = pack_frames_prelude([hello]) + hello
            sock.sendall(struct.pack("Q", len(framed)) + framed + b"\r\n\r\n")
            head = _receive(sock, 8, deadline)
            if head.startswith((b"HTTP/", b"<")):  # a status line, or an HTTP/0.9 answer's bare HTML page
                raise refuse("is not a Dask scheduler: it answers in HTTP (a web server or the dashboard?)")
            (size,) = struct.unpack("Q", head)
            if not 8 < size <= HANDSHAKE_MAX_BYTES:
                raise refuse(
                    f"is not a Dask scheduler: its first message announces {size:,} byte{'s' if size != 1 else ''} "
                    f"(a scheduler's greeting has 9 to {HANDSHAKE_MAX_BYTES:,})"
                )
            body = _receive(sock, size, deadline)
    except TimeoutError:
        raise refuse(f"did not answer as a Dask scheduler within {timeout:g} s (the engine's timeout)") from None
    except OSError as err:
        raise refuse(f"cannot be reached ({err.strerror or err})") from None
    try:  # untrusted bytes: any failure to parse means the peer does not speak Dask
        frames = unpack_frames(body)
        hello = msgpack.loads(bytes(frames[0]), raw=False, strict_map_key=False)
        if not (isinstance(hello, dict) and {"python", "pickle-protocol"} <= hello.keys()):
            raise ValueError
    except Exception:
        raise refuse("is not a Dask scheduler: its first message is not a Dask handshake") from None


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
        Seconds a scheduler address has to answer as a Dask scheduler (default
        :data:`CONNECT_TIMEOUT`, 10 s): :func:`check_scheduler`, then Dask's client.
    lost_timeout : float
        Seconds :meth:`map` waits while the cluster has no worker, or has lost its scheduler, before
        it stops (default :data:`LOST_TIMEOUT`, 30 s).

    Raises
    ------
    SettingsError
        On entering: the address is not a Dask scheduler answering within ``timeout`` (the address is
        named), or ``n_workers < 1``, or a timeout is not positive.
    """

    def __init__(
        self,
        scheduler: str | None = None,
        n_workers: int | None = None,
        *,
        timeout: float = CONNECT_TIMEOUT,
        lost_timeout: float = LOST_TIMEOUT,
    ) -> None:
        if n_workers is not None and n_workers < 1:
            raise SettingsError("the number of workers must be at least 1")
        if not (timeout > 0 and lost_timeout > 0):
            raise SettingsError(f"the engine's timeouts must be positive (got {timeout}, {lost_timeout})")
        self.scheduler = scheduler
        self.n_workers = n_workers or os.cpu_count() or 1
        self.timeout = timeout
        self.lost_timeout = lost_timeout
        self._cluster: LocalCluster | None = None
        self._client: Client | None = None

    def __enter__(self) -> Engine:
        """Start the embedded cluster, or connect to ``scheduler``.

        Raises
        ------
        SettingsError
            The scheduler's address is malformed, or no Dask scheduler answers there within ``timeout``
            (:func:`check_scheduler`).
        """
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
                self._cluster = LocalCluster(
                    n_workers=self.n_workers,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                    scheduler_kwargs={"dashboard": False, "dashboard_address": ":0"},
                )
            finally:
                sys.modules["__main__"] = caller_main
            self._client = Client(self._cluster)
        else:
            check_scheduler(self.scheduler, self.timeout)
            try:
                self._client = Client(self.scheduler, timeout=self.timeout)
            except (OSError, TimeoutError, ValueError) as err:
                raise SettingsError(f"cannot reach the Dask scheduler at '{self.scheduler}' ({err})") from None
        return self

    def __exit__(self, *exc) -> None:
        """Close the client and the embedded cluster (a lost scheduler is not an error)."""
        try:
            if self._client is not None:
                self._client.close(timeout=self.timeout)
        except (OSError, TimeoutError):
            pass  # a lost scheduler: nothing is left to close
        finally:
            if self._cluster is not None:
                self._cluster.close()
            self._client = self._cluster = None

    @property
    def workers(self) -> int:
        """Number of workers the scheduler knows now."""
        return self._client.scheduler_info(n_workers=0)["n_workers"] if self._client is not None else 0

    def _lost(self) -> str | None:
        """Why the cluster cannot run a task now (no worker, no scheduler), or None."""
        if self._client is None or self._client.status != "running":
            return f"lost its scheduler{f' at {self.scheduler}' if self.scheduler else ''}"
        try:
            return None if self.workers else "has no worker left"
        except (OSError, TimeoutError):
            return "cannot reach its scheduler"

    def _finished(
        self, pending: set, starts: dict, poll: float
    ) -> tuple[list[tuple[int, list]], Exception | None, str | None]:
        """One wait of :meth:`map`, at most about ``poll`` seconds, Ctrl-C kept (:func:`_ctrl_c_kept`).

        Returns the tasks finished, as (index of their first item, results), taken out of ``pending``
        (``starts`` maps a task to that index); the first error a finished task raised (:meth:`map`
        raises it once the results finished beside it are yielded); and, when no task finished, why
        the cluster cannot run one (:meth:`_lost`), else None.
        """
        from distributed import wait

        with _ctrl_c_kept():
            try:
                finished = wait(pending, timeout=poll, return_when="FIRST_COMPLETED").done
            except TimeoutError:
                finished = set()
            ready, failed = [], None
            for future in finished:
                pending.discard(future)
                try:
                    ready.append((starts[future], future.result(timeout=poll)))
                except TimeoutError:  # its worker died before handing it over: computed again
                    pending.add(future)
                except Exception as err:
                    failed = failed or err
            return ready, failed, None if finished else self._lost()

    def map(
        self,
        fn: Callable[[Any], Any],
        items: Iterable,
        *,
        progress: TaskProgress | None = None,
        batch: int | None = None,
    ) -> Iterator[tuple[int, Any]]:
        """Run ``fn(item)`` for every item on the cluster, yielding ``(index, result)`` as tasks finish.

        A task lost with its worker runs again on the remaining workers (Dask reschedules it; a task
        whose workers died 4 times, Dask's ``allowed-failures`` 3, counts as killing them). An error
        raised by ``fn`` is not retried: tasks are seeded, it would be raised again.

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
            In order of completion, not of ``items``. Stopping the iteration (or Ctrl-C) cancels the
            tasks not yet finished; the results already yielded are the caller's.

        Raises
        ------
        ClusterError
            The cluster had no worker, or no scheduler, for ``lost_timeout`` seconds, or a task killed
            its workers; every result finished before was yielded, the rest are cancelled.
        Exception
            Whatever ``fn`` raised in a worker (the remaining tasks are cancelled).
        """
        from distributed.client import FutureCancelledError, FuturesCancelledError
        from distributed.scheduler import KilledWorker

        if self._client is None:
            raise RuntimeError("use the engine inside a 'with Engine(...)' block")
        client = self._client
        items = list(items)
        size = max(1, batch or 1)
        starts = range(0, len(items), size)
        futures = {client.submit(_run_batch, fn, items[s : s + size], pure=False): s for s in starts}
        pending, done, lost_since = set(futures), 0, None
        poll = min(1.0, self.lost_timeout / 10)
        try:
            while pending:
                ready, failed, why = self._finished(pending, futures, poll)
                for start, results in ready:
                    done += len(results)
                    if progress is not None:
                        progress(done, len(items))
                    yield from ((start + k, r) for k, r in enumerate(results))
                if failed is not None:
                    raise failed
                lost_since = None if why is None else lost_since or time.monotonic()
                if lost_since is not None and time.monotonic() - lost_since >= self.lost_timeout:
                    raise ClusterError(
                        f"the Dask cluster {why} for {self.lost_timeout:g} s; {done} of {len(items)} tasks had finished"
                    )
        except KilledWorker as err:
            raise ClusterError(
                f"the Dask cluster lost every worker that ran a task ({err}); {done} of {len(items)} tasks had finished"
            ) from None
        except (FutureCancelledError, FuturesCancelledError):  # Dask cancels every task when its scheduler is lost
            raise ClusterError(
                f"the Dask cluster lost its scheduler{f' at {self.scheduler}' if self.scheduler else ''}"
                f"; {done} of {len(items)} tasks had finished"
            ) from None
        finally:
            if client.status == "running":
                client.cancel([f for f in futures if not f.done()])
