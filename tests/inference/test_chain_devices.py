"""A numpyro fit's draws of a seed do not depend on the devices the process has: chains run in parallel
(``jax.pmap``) where the CPU was split before JAX started, else one after another by the same one-chain
program. Before, the fallback was ``jax.vmap``, whose batched program rounds differently: a process
whose JAX had started before its first numpyro fit (a notebook that ran JAX code first, a test process
whose collection imported JAX) gave other numbers than the command line for the same data and seed."""

from __future__ import annotations

import numpy as np

from lib.irt.fit import fit_grm
from lib.irt.settings import FitSettings
from lib.irt.simulate import simulate_grm
from tests.conftest import rating_matrix_from_codes


def test_one_device_draws_what_a_split_cpu_draws(monkeypatch):
    import jax

    settings = FitSettings(chains=2, draws=30, tune=30, seed=5)
    rm = rating_matrix_from_codes(simulate_grm(3, 8, seed=4).codes)
    assert jax.local_device_count() >= settings.chains  # this process runs the chains in parallel
    parallel = fit_grm(rm, settings, use_cache=False).idata.posterior["theta"].values
    monkeypatch.setattr(jax, "local_device_count", lambda: 1)  # as a process whose JAX started unsplit
    one_device = fit_grm(rm, settings, use_cache=False).idata.posterior["theta"].values
    assert one_device.shape == parallel.shape == (2, 30, 3)
    np.testing.assert_array_equal(one_device, parallel)
