"""Hostile JAX compile caches (issue 31, items 9 and 10): damaged or foreign entries, and a lock whose
holder cannot release it (``lib/inference/compile_cache.py``).

Each case runs, in a fresh process (a damaged entry could kill it), the cache as a fit turns it on
(:func:`lib.inference.compile_cache.enable`) and two small jitted programs of different shapes; a
module fixture writes the intact folder once. Before, an entry moved to another key raised
``ValueError`` in every later process, an entry with 64 bytes changed made JAX warn and never rewrite
it (or, decompressing cleanly, could abort the process), and a stopped holder of the lock made every
read and write wait 10 s (this process: about 120 s instead of 3).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from lib.inference import compile_cache
from lib.inference.compile_cache import KIND
from lib.io.paths import ROOT

LIMIT_S = 60
EXPECTED = "-0.20650792 60.0"  # sum(2 sin(0..6)) and sum(ones(3, 4) @ ones(4, 5))

SCRIPT = """
import sys, time
from jax import monitoring
from lib.inference import compile_cache
compile_cache.LOCK_WAIT_S = float(sys.argv[1])
events = []
monitoring.register_event_listener(lambda event, **kwargs: events.append(event))
compile_cache.enable()
import jax, jax.numpy as jnp
began = time.perf_counter()
f = jax.jit(lambda x: jnp.sin(x).sum() * 2)
g = jax.jit(lambda x, y: (x @ y).sum())
print(f"{float(f(jnp.arange(7.0))):.8f} {float(g(jnp.ones((3, 4)), jnp.ones((4, 5))))}")
print("SECONDS", time.perf_counter() - began)
print("EVENTS", events.count("/jax/compilation_cache/cache_hits"), events.count("/jax/compilation_cache/cache_misses"))
"""


def run(cache: Path, lock_wait_s: float = 10.0) -> subprocess.CompletedProcess:
    """The two programs in a new process caching under ``cache`` (``EVAL_CACHE_DIR``), at most ``LIMIT_S``."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JAX_") and k != compile_cache.ENV}
    environ["EVAL_CACHE_DIR"] = str(cache)
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(lock_wait_s)],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
    )


def counts(done: subprocess.CompletedProcess) -> tuple[int, int]:
    """(cache hits, entries written) of a run."""
    line = next(x for x in done.stdout.splitlines() if x.startswith("EVENTS "))
    hits, writes = map(int, line.split()[1:])
    return hits, writes


@pytest.fixture(scope="module")
def intact(tmp_path_factory) -> Path:
    """A cache folder written by one run: the programs' entries, sealed."""
    cache = tmp_path_factory.mktemp("intact")
    done = run(cache)
    assert done.returncode == 0 and done.stdout.startswith(EXPECTED), done.stderr[-2000:]
    return cache


def entries(cache: Path) -> list[Path]:
    return sorted((cache / KIND).glob("*-cache"))


def programs(cache: Path) -> list[Path]:
    """The entries of the two lambdas (the others are JAX's small helper programs)."""
    return [p for p in entries(cache) if p.name.startswith("jit__lambda")]


def payload_start(entry: bytes) -> int:
    """Where JAX's compressed bytes start in an entry (after the project's header and digest, when sealed)."""
    header = getattr(compile_cache, "HEADER", None)
    return len(header) + 32 if header and entry.startswith(header) else 0


def swap(cache: Path) -> list[str]:
    a, b = programs(cache)
    first = a.read_bytes()
    a.write_bytes(b.read_bytes())
    b.write_bytes(first)
    return [a.name, b.name]


def change_64_bytes(cache: Path) -> list[str]:
    entry = programs(cache)[0]
    raw = bytearray(entry.read_bytes())
    middle = payload_start(raw) + (len(raw) - payload_start(raw)) // 2
    raw[middle : middle + 64] = bytes(range(64))
    entry.write_bytes(bytes(raw))
    return [entry.name]


def change_64_bytes_of_the_program(cache: Path) -> list[str]:
    """64 bytes changed in the compiled program itself, the entry still a valid compressed stream: what
    JAX decompresses and deserialises as machine code (a checksum-less zstd entry damaged on disk)."""
    entry = programs(cache)[0]
    raw = entry.read_bytes()
    start = payload_start(raw)
    program = bytearray(zlib.decompress(raw[start:]))
    middle = len(program) * 4 // 5
    program[middle : middle + 64] = bytes(255 - i for i in range(64))
    entry.write_bytes(raw[:start] + zlib.compress(bytes(program)))
    return [entry.name]


def cut_short(cache: Path) -> list[str]:
    entry = programs(cache)[1]
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])
    return [entry.name]


@pytest.mark.parametrize("damage", [swap, change_64_bytes, change_64_bytes_of_the_program, cut_short])
def test_a_damaged_entry_is_quarantined_and_compiled_afresh(intact, tmp_path, damage):
    cache = tmp_path / "cache"
    shutil.copytree(intact, cache)
    damaged = damage(cache)
    done = run(cache)
    assert done.returncode == 0, done.stderr[-2000:]  # before: ValueError, or the process killed
    assert done.stdout.startswith(EXPECTED)
    assert done.stderr.count("CompileCacheWarning") == len(damaged), done.stderr[-2000:]
    assert "its digest does not match: damaged on disk, cut short, or moved from another key" in done.stderr
    assert sorted(p.name for p in (cache / KIND / "quarantine").iterdir()) == sorted(damaged)
    hits, writes = counts(done)
    assert (hits, writes) == (len(entries(intact)) - len(damaged), len(damaged))  # rewritten, the rest loaded
    for name in damaged:  # sealed again: the next process loads it
        value, why = compile_cache.unseal(name.removesuffix("-cache"), (cache / KIND / name).read_bytes())
        assert value is not None and why == ""


def test_entries_without_a_digest_are_replaced_with_one_warning(intact, tmp_path):
    """Entries written by JAX itself (or before the digest): not trusted, replaced, said once."""
    cache = tmp_path / "cache"
    shutil.copytree(intact, cache)
    for entry in entries(cache):
        raw = entry.read_bytes()
        entry.write_bytes(raw[payload_start(raw) :])
    done = run(cache)
    assert done.returncode == 0 and done.stdout.startswith(EXPECTED), done.stderr[-2000:]
    assert done.stderr.count("CompileCacheWarning") == 1 and "it has no digest" in done.stderr
    assert counts(done) == (0, len(entries(intact)))
    assert run(cache).stderr.count("CompileCacheWarning") == 0


def hold_lock(cache: Path, how: str) -> tuple[subprocess.Popen, int]:
    """A process holding the cache's lock: ``stopped`` (stops itself holding it), ``ended`` (ends, a
    child it started keeps the lock) or ``running`` (holds it and sleeps). Returns the process and the
    pid /proc/locks names."""
    lock = cache / KIND / ".lockfile"
    code = f"""
import fcntl, os, signal, sys, time
f = open({str(lock)!r}, "a")
fcntl.flock(f, fcntl.LOCK_EX)
if {how!r} == "ended":
    child = os.fork()
    if child == 0:
        time.sleep({LIMIT_S})
        os._exit(0)
    print(os.getpid(), child, flush=True)
    os._exit(0)
print(os.getpid(), 0, flush=True)
if {how!r} == "stopped":
    os.kill(os.getpid(), signal.SIGSTOP)
time.sleep({LIMIT_S})
"""
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    pid, child = map(int, holder.stdout.readline().split())
    with open(lock) as f:  # held: a non-blocking try fails
        with pytest.raises(BlockingIOError):
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    holder.child = child  # type: ignore[attr-defined]
    return holder, pid


def release(holder: subprocess.Popen) -> None:
    for pid in (holder.pid, holder.child):  # type: ignore[attr-defined]
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    holder.wait(timeout=10)


@pytest.mark.parametrize(("how", "said"), [("stopped", "which has been stopped"), ("ended", "which has ended")])
def test_a_lock_whose_holder_cannot_release_it_is_not_waited_for(intact, tmp_path, how, said):
    cache = tmp_path / "cache"
    shutil.copytree(intact, cache)
    holder, pid = hold_lock(cache, how)
    try:
        began = time.perf_counter()
        done = run(cache)  # before: 10 s a read or write, about 120 s here (TimeoutExpired at LIMIT_S)
        seconds = time.perf_counter() - began
    finally:
        release(holder)
    assert done.returncode == 0 and done.stdout.startswith(EXPECTED), done.stderr[-2000:]
    assert f"is held by process {pid}, {said}: compiling without the cache" in done.stderr
    assert done.stderr.count("CompileCacheWarning") == 1 and counts(done) == (0, len(entries(intact)))
    assert seconds < 45  # a few seconds on an idle machine; each wait would have been 10 s


def test_a_lock_held_by_a_running_process_is_waited_for_once(intact, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(intact, cache)
    holder, pid = hold_lock(cache, "running")
    try:
        done = run(cache, lock_wait_s=2.0)
    finally:
        release(holder)
    assert done.returncode == 0 and done.stdout.startswith(EXPECTED), done.stderr[-2000:]
    assert f"is held by process {pid} for more than 2 s" in done.stderr
    seconds = float(next(x for x in done.stdout.splitlines() if x.startswith("SECONDS ")).split()[1])
    assert seconds < 2.0 * len(entries(intact))  # one wait of 2 s, not one per read and write
