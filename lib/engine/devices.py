"""JAX's CPU devices: one count in every process of the project (the app's server, ``python -m lib``, the
tests, Dask workers), set when ``lib`` is imported, before JAX is.

numpyro runs chains in parallel only across JAX devices, and the CPU is one device unless JAX is told to
split it before its CPU backend starts: :data:`CPU_DEVICES` lets up to 8 chains run side by side (4 chains
on the 2-core machines sample 3x faster than numpyro's vectorised chains, ``bench/bench_samplers.py``).

The count must be the same everywhere: the key of every program in JAX's persistent compilation cache
(:mod:`lib.inference.compile_cache`) hashes the CPU topology, devices included, so a process with another
count compiles afresh every program the others compiled. Before, it differed by what a process imported
first: 8 in the test processes (XLA_FLAGS set by the first numpyro fit), 100 in a process that imported
``pymc.sampling.jax`` first (it rewrites ``XLA_FLAGS`` on import; the app's servers, a Laplace fit) and 1 in
a process whose JAX started before either: the app's servers never loaded what the tests or ``fit`` had
compiled. JAX's own setting ``jax_num_cpu_devices`` (environment variable ``JAX_NUM_CPU_DEVICES``, read when
JAX is imported) takes precedence over XLA's ``--xla_force_host_platform_device_count``, whatever pymc
writes there.
"""

from __future__ import annotations

import os
import sys

CPU_DEVICES = 8
"""JAX's CPU devices in every process of the project: numpyro's parallel chains at most (more run one after
another: a 20 x 200 fit, 4 chains of 1,000 iterations on one device, 31 s against 45 s vectorised)."""

ENV = "JAX_NUM_CPU_DEVICES"
"""JAX's environment variable of the count (config ``jax_num_cpu_devices``), read when JAX is imported."""


def split_host_cpu() -> None:
    """Set :data:`ENV` to :data:`CPU_DEVICES` if JAX is not imported yet (``lib/__init__.py`` calls it).

    A count the user gave (:data:`ENV`, or ``--xla_force_host_platform_device_count`` in ``XLA_FLAGS``
    before any import of pymc's JAX sampling module, which rewrites it) is kept, and so is a process that
    imported JAX first (the setting is read at JAX's import: setting it later would do nothing)."""
    if "jax" in sys.modules or ENV in os.environ or "host_platform_device_count" in os.environ.get("XLA_FLAGS", ""):
        return
    os.environ[ENV] = str(CPU_DEVICES)
