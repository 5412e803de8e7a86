"""A numpyro fit's draws of a seed do not depend on the devices the process has: chains run in parallel
(``jax.pmap``) where the CPU was split before JAX started, else one after another by the same one-chain
program. Before, the fallback was ``jax.vmap``, whose batched program rounds differently: a process
whose JAX had started before its first numpyro fit (a notebook that ran JAX code first, a test process
whose collection imported JAX) gave other numbers than the command line for the same data and seed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np

from lib.irt.fit import fit_grm
from lib.irt.settings import FitSettings
from lib.irt.simulate import simulate_grm
from lib.paths import ROOT
from tests.conftest import rating_matrix_from_codes

SETTINGS = FitSettings(chains=2, draws=30, tune=30, seed=5)

ONE_DEVICE = textwrap.dedent(
    """
    import sys
    import jax

    jax.devices()  # JAX starts before the fit could split the CPU: one device
    import numpy as np
    from lib.irt.fit import fit_grm
    from lib.irt.simulate import simulate_grm
    from tests.conftest import rating_matrix_from_codes
    from tests.inference.test_chain_devices import SETTINGS

    fit = fit_grm(rating_matrix_from_codes(simulate_grm(3, 8, seed=4).codes), SETTINGS, use_cache=False)
    np.save(sys.argv[1], fit.idata.posterior["theta"].values)
    print(jax.local_device_count())
    """
)


def test_a_process_with_one_device_draws_what_a_split_cpu_draws(tmp_path):
    import jax

    assert jax.local_device_count() >= SETTINGS.chains  # this process runs the chains in parallel
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"} | {"PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", ONE_DEVICE, str(tmp_path / "theta.npy")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    assert out.stdout.split()[-1] == "1"  # that process ran them one after another
    here = fit_grm(rating_matrix_from_codes(simulate_grm(3, 8, seed=4).codes), SETTINGS, use_cache=False)
    np.testing.assert_array_equal(np.load(tmp_path / "theta.npy"), here.idata.posterior["theta"].values)
