"""JAX's persistent compilation cache (``lib/inference/compile_cache.py``): a second process on the
same shapes loads the compiled programs the first wrote, from any cache folder they are copied to;
``EVAL_JAX_CACHE=0`` writes none.

Each run is a fresh ``python`` process ranking the bundled PandaLM votes with Laplace (about 10-20 s
each); the assertions are on the cache's files and JAX's monitoring events, never on time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from lib.inference.compile_cache import ENV, KIND
from lib.io.paths import ROOT
from lib.judgments.datasets import DATASETS

HITS = "/jax/compilation_cache/cache_hits"
WRITES = "/jax/compilation_cache/cache_misses"  # JAX records it when it hands the cache an entry

SCRIPT = f"""
import sys
from jax import monitoring
import lib.cli
events = []
monitoring.register_event_listener(lambda event, **kwargs: events.append(event))
code = lib.cli.main(sys.argv[1:])
print("EVENTS", events.count({HITS!r}), events.count({WRITES!r}))
sys.exit(code)
"""


def start(cache: Path, out: Path, **env: str) -> subprocess.Popen:
    """Rank PandaLM with Laplace in a new process caching under ``cache`` (see :func:`finish`): its net-rating cells,
    whose Laplace fit compiles JAX programs (the votes' quadrature fit compiles none, :mod:`lib.ranking.marginal`)."""
    ds = DATASETS["pandalm_pairwise"]
    columns = ",".join(f"{role}={name}" for role, name in ds.columns.items())
    args = ["rank", "--input", str(ds.path), "--format", ds.fmt, "--columns", columns, "--sampler", "laplace"]
    args += ["--likelihood", "cells"]
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JAX_") and k != ENV}
    environ.update(EVAL_CACHE_DIR=str(cache), **env)
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, *args, "--out", str(out)],
        cwd=ROOT,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen) -> tuple[int, int]:
    """Wait for a process of :func:`start`: (JAX's cache hits, entries written); it succeeded and
    JAX warned of no cache error."""
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr[-2000:]
    assert "persistent compilation cache" not in stderr, stderr[-2000:]
    line = next(x for x in stdout.splitlines() if x.startswith("EVENTS "))
    hits, writes = map(int, line.split()[1:])
    return hits, writes


def rank(cache: Path, out: Path, **env: str) -> tuple[int, int]:
    """One process of :func:`start`, to its end: (cache hits, entries written)."""
    return finish(start(cache, out, **env))


def entries(cache: Path) -> set[str]:
    """The compiled programs in the cache's JAX folder (``<key>-cache`` files)."""
    folder = cache / KIND
    return {p.name for p in folder.glob("*-cache")} if folder.is_dir() else set()


def test_opt_out_writes_no_compiled_program(tmp_path):
    cache = tmp_path / "cache"
    hits, writes = rank(cache, tmp_path / "out", **{ENV: "0"})
    assert hits == writes == 0
    assert not (cache / KIND).exists()


def test_second_process_loads_what_two_at_once_compiled(tmp_path):
    """Two cold processes start at once on an empty folder; a third, caching in another folder that
    holds a copy of JAX's (the fit cache would answer without compiling; keys do not depend on the
    folder's path), compiles nothing."""
    cache = tmp_path / "cache"
    both = [start(cache, tmp_path / f"cold{i}") for i in range(2)]
    counts = [finish(process) for process in both]
    written = entries(cache)
    assert written
    # each program was read whole from the cache (the other process wrote it first) or compiled
    # and handed to the cache (by both when both missed: the second write is skipped)
    assert all(hits + writes == len(written) for hits, writes in counts)
    other = tmp_path / "other"
    shutil.copytree(cache / KIND, other / KIND)
    hits, writes = rank(other, tmp_path / "warm")
    assert writes == 0 and hits == len(written)
    assert entries(other) == written
