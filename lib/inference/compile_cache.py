"""Compile once per machine: JAX's persistent compilation cache in the project's cache folder.

:func:`enable` points JAX's persistent compilation cache at ``lib.paths.cache_dir("jax")``
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
  jax 0.10) holds an OS file lock (``filelock.FileLock`` on ``<folder>/.lockfile``) around every
  read, write and eviction, so no process reads an entry another is writing or evicting, and an
  entry already present is never rewritten (two processes that miss at once both compile; the
  second's write is skipped). A lock not acquired within 10 s, an unreadable entry (a process killed
  while writing it) or a folder that cannot be written make JAX warn and compile as without the
  cache; the fit itself does not fail (``jax_raise_persistent_cache_errors`` is left off).
- Opt-out: ``EVAL_JAX_CACHE=0`` (or ``false``, ``no``, ``off``) leaves JAX's settings alone. A
  cache folder already set (``JAX_COMPILATION_CACHE_DIR``, or ``jax.config`` by the caller) is kept
  with its own settings.

The folder is trusted like any of the project's caches: whoever can write to it can make JAX run
their code (JAX's persistent compilation cache guide).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from lib.paths import cache_dir

ENV = "EVAL_JAX_CACHE"
"""Environment variable: ``0``, ``false``, ``no`` or ``off`` turns the persistent cache off."""

KIND = "jax"
"""The cache folder's kind (``lib.paths.cache_dir(KIND)``)."""

MAX_BYTES = 512 * 2**20
"""Bound of the folder's compiled programs (bytes); JAX evicts the least recently read beyond it."""

_LOCK = threading.Lock()


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
        when :data:`ENV` turns the cache off.
    """
    if not enabled():
        return None
    import jax

    with _LOCK:
        current = jax.config.values.get("jax_compilation_cache_dir")
        if current:
            return Path(current)
        folder = cache_dir(KIND)
        jax.config.update("jax_compilation_cache_max_size", MAX_BYTES)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
        jax.config.update("jax_persistent_cache_enable_xla_caches", "")  # keys free of the folder's path
        jax.config.update("jax_compilation_cache_dir", str(folder))
        return folder
