"""Compile once per machine: JAX's persistent compilation cache in the project's cache folder.

:func:`enable` points JAX's persistent compilation cache at ``lib.io.paths.cache_dir("jax")``
(``$EVAL_CACHE_DIR/jax``, else ``.cache/jax``) before a fit's first JAX compilation
(:func:`lib.inference.samplers.runner` calls it for the samplers in
:data:`lib.inference.samplers.ON_JAX`). A second process that compiles the same programs (same model,
same shapes, same JAX and CPU) loads them from the folder instead of compiling them again
(``bench/bench_compile_cache.py`` prints cold and warm whole-process times).

- Every program is cached, however small or quick to compile
  (``jax_persistent_cache_min_compile_time_secs = 0``, ``jax_persistent_cache_min_entry_size_bytes
  = -1``); programs with host callbacks are not: JAX never writes those, so the numpyro sampler
  reports its progress between chunks of iterations, not from inside its program
  (:func:`lib.inference.samplers.numpyro_sample`; a second fit of the same model and sizes compiles
  nothing).
- Keys: a program's key does not depend on the folder's path, so a folder copied or moved (another
  ``EVAL_CACHE_DIR``) still answers. JAX's extra XLA caches are left off
  (``jax_persistent_cache_enable_xla_caches = ""``): their default, the GPU autotuning cache, puts
  ``<folder>/xla_gpu_per_fusion_autotune_cache_dir`` into the compile options that every key
  hashes, on CPU too (jax 0.10, ``jax/_src/compiler.py``).
- Bounded: ``jax_compilation_cache_max_size`` = :data:`MAX_BYTES`; JAX evicts the least recently
  read entries when a new entry would take the folder over the bound.
- Two processes at once: with a size bound set, JAX's ``LRUCache`` (``jax/_src/lru_cache.py``,
  jax 0.10) holds an OS file lock (``filelock.FileLock``: ``flock`` on ``<folder>/.lockfile``) around
  every read, write and eviction, so no process reads an entry another is writing or evicting, and an
  entry already present is never rewritten (two processes that miss at once both compile; the
  second's write is skipped). A folder that cannot be written makes JAX warn and compile as without
  the cache, and one that cannot be made is not used (:func:`enable` warns); the fit itself does not
  fail (``jax_raise_persistent_cache_errors`` is left off).
- Every entry is checked before JAX loads it (:class:`VerifiedCache`, the cache JAX is given): the
  project writes each compiled program with a header holding the SHA-256 of its key and its bytes,
  in the same file (so an entry and its digest are written, evicted and moved together). JAX
  deserialises an entry's bytes as machine code: an entry damaged on disk (64 bytes changed) killed
  the process (SIGILL, SIGSEGV, an LLVM abort), and one moved to another key ran as the wrong
  program (``ValueError``, ``RuntimeProgramInputMismatch``), in every later fit, since JAX never
  rewrites an entry that is present. An entry whose digest does not match, or that has none (written
  by JAX itself or an older version of the project), is moved to ``<folder>/quarantine/`` (the
  newest :data:`QUARANTINE_KEEP` kept for inspection) with a :class:`CompileCacheWarning`, and the
  program is compiled afresh and written again.
- A stale lock: a process stopped (``kill -STOP``, Ctrl-Z) while it held the lock, or one whose lock
  a child process inherited and kept after it ended, made every read and write wait JAX's 10 s (a
  12 s fit took 313 s). When the lock is taken, its holder is read from ``/proc/locks``: a holder that
  is stopped or has ended is not waited for, and one that holds the lock beyond :data:`LOCK_WAIT_S`
  is waited for once; the fit then compiles without the cache while that holder keeps the lock, with
  one warning naming the process.
- Opt-out: ``EVAL_JAX_CACHE=0`` (or ``false``, ``no``, ``off``) leaves JAX's settings alone. A
  cache folder already set (``JAX_COMPILATION_CACHE_DIR``, or ``jax.config`` by the caller) is kept
  with its own settings (and JAX's own cache, without the checks above).

The folder is trusted like any of the project's caches: whoever can write to it can make JAX run
their code (JAX's persistent compilation cache guide); the digest finds damage, not an attacker who
can write a digest too.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from lib.io.paths import cache_dir

if TYPE_CHECKING:
    from jax._src.compilation_cache_interface import CacheInterface

ENV = "EVAL_JAX_CACHE"
"""Environment variable: ``0``, ``false``, ``no`` or ``off`` turns the persistent cache off."""

KIND = "jax"
"""The cache folder's kind (``lib.io.paths.cache_dir(KIND)``)."""

MAX_BYTES = 512 * 2**20
"""Bound of the folder's compiled programs (bytes); JAX evicts the least recently read beyond it."""

QUARANTINE = "quarantine"
"""Subfolder of the cache folder that receives the entries that failed their check."""

QUARANTINE_KEEP = 8
"""Quarantined entries kept (the newest): enough to inspect a damage, never a growing folder."""

LOCK_WAIT_S = 10.0
"""Seconds a read or write waits for the cache's lock held by a running process (JAX's own wait), once
per holder: while that holder keeps it, later reads and writes do not wait."""

HEADER = b"efficient-human-eval jax cache 1\n"
"""First bytes of every entry the project writes; the SHA-256 digest and JAX's bytes follow."""

_DIGEST_BYTES = 32
_LOCK = threading.Lock()


class CompileCacheWarning(UserWarning):
    """An entry of the compile cache failed its check, or its lock is held by a process that cannot release it."""


def seal(key: str, value: bytes) -> bytes:
    """The entry written for JAX's ``value`` under ``key``: :data:`HEADER`, the SHA-256 of the key and
    the value, then the value (the key is hashed in, so an entry moved to another key fails :func:`unseal`)."""
    return HEADER + _digest(key, value) + value


def unseal(key: str, entry: bytes) -> tuple[bytes | None, str]:
    """JAX's bytes of an entry read under ``key`` and "" when its digest matches; else None and why."""
    if not entry.startswith(HEADER):
        return None, "it has no digest: written by JAX itself or an older version of this project"
    digest, value = entry[len(HEADER) : len(HEADER) + _DIGEST_BYTES], entry[len(HEADER) + _DIGEST_BYTES :]
    if not hmac.compare_digest(digest, _digest(key, value)):
        return None, "its digest does not match: damaged on disk, cut short, or moved from another key"
    return value, ""


def _digest(key: str, value: bytes) -> bytes:
    return hashlib.sha256(key.encode("utf-8") + b"\0" + value).digest()


def lock_holders(path: Path) -> dict[int, str]:
    """The processes holding a ``flock`` on ``path`` (Linux ``/proc/locks``), pid -> state: "running",
    "stopped" (stopped or traced: it cannot release the lock until resumed), "ended" (it has ended or is
    a zombie, and a process it started still holds the lock) or "unknown" (pid 0 or -1: another pid
    namespace, an open file description lock). Empty when nothing is known (no ``/proc/locks``, the
    lock released meanwhile)."""
    try:
        st = os.stat(path)
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return {}
    device = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    holders = {}
    for line in lines:
        fields = line.split()
        if len(fields) >= 6 and fields[1] != "->" and fields[5] == device:
            pid = int(fields[4])
            holders[pid] = _process_state(pid) if pid > 0 else "unknown"
    return holders


def _process_state(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "ended"
    state = stat.rpartition(")")[2].split()[0]  # the name before it may hold blanks and parentheses
    return {"T": "stopped", "t": "stopped", "Z": "ended", "X": "ended"}.get(state, "running")


class VerifiedCache:
    """The cache JAX is given (a ``jax._src.compilation_cache_interface.CacheInterface``): JAX's
    ``LRUCache`` with each entry sealed (:func:`seal`) and checked before JAX loads it (:func:`unseal`),
    and its lock checked for a holder that cannot release it (:func:`lock_holders`).

    Parameters
    ----------
    base : jax._src.lru_cache.LRUCache
        JAX's bounded cache of the folder.
    """

    def __init__(self, base: Any) -> None:
        self._base = base
        self._path = base._path  # JAX logs it
        self._mutex = threading.Lock()
        self._stuck: set[int] = set()  # holders waited for in vain (-1: a holder /proc/locks does not name)
        self._said: set[object] = set()

    def get(self, key: str) -> bytes | None:
        """JAX's bytes of the entry of ``key``, or None: absent, quarantined (failed its check), or the
        lock cannot be had."""
        with self._locked() as locked:
            entry = self._base.get(key) if locked else None
            if entry is None:
                return None
            value, why = unseal(key, entry)
            if value is None:
                self._quarantine(key, why)
            return value

    def put(self, key: str, value: bytes) -> None:
        """Write JAX's ``value`` sealed under ``key`` (skipped, as JAX does, when the entry exists or
        the lock cannot be had)."""
        with self._locked() as locked:
            if locked:
                self._base.put(key, seal(key, value))

    def _quarantine(self, key: str, why: str) -> None:
        folder = Path(self._base.path)
        target = folder / QUARANTINE
        try:
            target.mkdir(exist_ok=True)
            os.replace(folder / f"{key}-cache", target / f"{key}-cache")
            (folder / f"{key}-atime").unlink(missing_ok=True)
            for old in sorted(target.glob("*-cache"), key=lambda p: p.stat().st_mtime)[:-QUARANTINE_KEEP]:
                old.unlink(missing_ok=True)
            where = f"moved to {target}"
        except OSError as err:
            where = f"could not be moved to {target} ({err.strerror})"
        legacy = why.startswith("it has no digest")
        if self._first(("legacy",) if legacy else key):  # entries of an older version: one warning a process
            warnings.warn(
                f"the compiled program {key} in {folder} was not used: {why}; {where}, and it is compiled afresh"
                + (" (the same for other such entries)" if legacy else ""),
                CompileCacheWarning,
                stacklevel=2,
            )

    def _first(self, what: object) -> bool:
        with self._mutex:
            first = what not in self._said
            self._said.add(what)
        return first

    @contextlib.contextmanager
    def _locked(self) -> Iterator[bool]:
        """Hold the cache's lock (reentrant: JAX's cache takes it again inside); False when it cannot be had."""
        lock = getattr(self._base, "lock", None)
        if lock is None:  # no size bound: JAX takes no lock
            yield True
            return
        try:
            lock.acquire(blocking=False)
        except TimeoutError:
            if not self._wait(lock):
                yield False
                return
        try:
            yield True
        finally:
            lock.release()

    def _wait(self, lock: Any) -> bool:
        """Whether the lock, held by another process, was had after waiting: not waited for when its
        holder is stopped or has ended, or was waited for in vain already."""
        holders = lock_holders(Path(lock.lock_file))
        stuck = {pid: state for pid, state in holders.items() if state in ("stopped", "ended")}
        if stuck:
            pid, state = next(iter(stuck.items()))
            if self._first(("holder", pid)):
                if state == "stopped":
                    self._warn_lock(f"process {pid}, which has been stopped", f"resume it (kill -CONT {pid}) or end it")
                else:
                    self._warn_lock(f"process {pid}, which has ended", "end the processes it started")
            return False
        known = set(holders) or {-1}
        if known <= self._stuck:
            return False
        try:
            lock.acquire(timeout=LOCK_WAIT_S)
        except TimeoutError:
            with self._mutex:
                self._stuck |= known
            who = ", ".join(f"process {pid}" for pid in sorted(holders)) or "another process"
            self._warn_lock(f"{who} for more than {LOCK_WAIT_S:g} s", "end it if it hangs")
            return False
        return True

    def _warn_lock(self, holder: str, advice: str) -> None:
        warnings.warn(
            f"the lock of the compiled programs' cache ({self._base.lock_path}) is held by {holder}: compiling "
            f"without the cache while it holds it; {advice}",
            CompileCacheWarning,
            stacklevel=5,  # the cache's get or put
        )


def enabled() -> bool:
    """Whether :data:`ENV` leaves the persistent cache on (unset: on)."""
    return os.environ.get(ENV, "1").strip().lower() not in {"0", "false", "no", "off"}


def enable() -> Path | None:
    """Turn on JAX's persistent compilation cache in ``cache_dir("jax")``, once per process.

    Call before the first JAX compilation that should be cached (JAX opens the folder on its first
    compilation after the folder is set). Imports JAX.

    Returns
    -------
    pathlib.Path or None
        The folder JAX caches compiled programs in (one set before this call is kept), or None
        when :data:`ENV` turns the cache off or the folder cannot be made (a warning says why).
    """
    if not enabled():
        return None
    import jax

    with _LOCK:
        current = jax.config.values.get("jax_compilation_cache_dir")
        if current:
            return Path(current)
        folder = cache_dir(KIND)
        from jax._src.lru_cache import LRUCache

        try:
            cache = VerifiedCache(LRUCache(str(folder), max_size=MAX_BYTES))  # makes the folder
        except OSError as err:
            warnings.warn(f"compiling without a cache: {folder} cannot be made ({err})", CompileCacheWarning, 2)
            return None
        jax.config.update("jax_compilation_cache_max_size", MAX_BYTES)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
        jax.config.update("jax_persistent_cache_enable_xla_caches", "")  # keys free of the folder's path
        jax.config.update("jax_compilation_cache_dir", str(folder))
        _install(cache)
        return folder


def _install(cache: VerifiedCache) -> None:
    """Give JAX ``cache`` as its cache, before its first compilation (which would otherwise open a plain
    ``LRUCache`` in the folder: ``jax._src.compilation_cache._initialize_cache``, jax 0.10)."""
    from jax._src import compilation_cache

    with compilation_cache._cache_initialized_mutex:
        compilation_cache._cache = cast("CacheInterface", cache)
        compilation_cache._cache_initialized = True
