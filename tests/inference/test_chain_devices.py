"""A numpyro fit's draws of a seed do not depend on the devices the process has: chains run in parallel
(``jax.pmap``) where the CPU was split before JAX started, else one after another by the same one-chain
program. Before, the fallback was ``jax.vmap``, whose batched program rounds differently: a process
whose JAX had started before its first numpyro fit (a notebook that ran JAX code first, a test process
whose collection imported JAX) gave other numbers than the command line for the same data and seed."""

from __future__ import annotations

import numpy as np
import pytest

from lib.irt.fit import fit_grm
from lib.irt.settings import FitSettings
from lib.irt.simulate import simulate_grm
from tests.conftest import rating_matrix_from_codes

SETTINGS = FitSettings(chains=2, draws=30, tune=30, seed=5)


@pytest.fixture(scope="module")
def rm():
    return rating_matrix_from_codes(simulate_grm(3, 8, seed=4).codes)


@pytest.fixture(scope="module")
def parallel(rm) -> np.ndarray:
    """theta's draws of a fit whose chains run in parallel."""
    import jax

    assert jax.local_device_count() >= SETTINGS.chains  # this process runs the chains in parallel
    return fit_grm(rm, SETTINGS, use_cache=False).idata.posterior["theta"].values


def test_one_device_draws_what_a_split_cpu_draws(monkeypatch, rm, parallel):
    import jax

    monkeypatch.setattr(jax, "local_device_count", lambda: 1)  # as a process whose JAX started unsplit
    one_device = fit_grm(rm, SETTINGS, use_cache=False).idata.posterior["theta"].values
    assert one_device.shape == parallel.shape == (2, 30, 3)
    np.testing.assert_array_equal(one_device, parallel)


def test_a_start_without_a_finite_density_is_jittered_again_as_pymc_does(monkeypatch, rm, parallel):
    """The chains start at PyMC's first jitter unchecked (their start computes the potential there anyway); where
    it is not finite, PyMC's checked points (its retries) replace them: the draws are those of the checked points."""
    from lib.inference import samplers

    initial_points, checked = samplers._initial_points, []

    def first_jitter_overflows(model, settings, potential=None, data=None):
        points = initial_points(model, settings, potential, data)
        checked.append(potential is not None)
        if potential is None:  # chain 0's first jitter: alpha = exp(1000), no finite density
            points[[v.name for v in model.value_vars].index("log_alpha")][0, 0] = 1000.0
        return points

    monkeypatch.setattr(samplers, "_initial_points", first_jitter_overflows)
    theta = fit_grm(rm, SETTINGS, use_cache=False).idata.posterior["theta"].values
    assert checked == [False, True]  # the unchecked start, then PyMC's checked one
    np.testing.assert_array_equal(theta, parallel)
