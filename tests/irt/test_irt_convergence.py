"""Convergence checks (lib/inference/convergence.py) and their use by the GRM fit (issue 17: a stuck NUTS chain
looked certain)."""

import contextlib
import io
import json
import math

import arviz as az
import numpy as np

from lib.inference.convergence import ESS_MIN, RHAT_MAX, check_convergence
from lib.inference.diagnostics import NOT_CONVERGED, diagnostics_from_json, diagnostics_json
from lib.irt.fit import diagnose
from lib.irt.settings import FitSettings


def grm_idata(theta: np.ndarray, alpha: np.ndarray, b: np.ndarray, diverging: np.ndarray | None = None):
    """InferenceData laid out as a GRM fit's: theta (chain, draw, comparison), alpha (chain, draw,
    prompt), b (chain, draw, prompt, threshold)."""
    chains, draws = theta.shape[:2]
    return az.from_dict(
        posterior={"theta": theta, "alpha": alpha, "b": b},
        sample_stats={"diverging": np.zeros((chains, draws), bool) if diverging is None else diverging},
        coords={
            "comparison": [f"c{i}" for i in range(theta.shape[2])],
            "prompt": [f"p{j}" for j in range(alpha.shape[2])],
            "threshold": np.arange(1, b.shape[3] + 1),
        },
        dims={"theta": ["comparison"], "alpha": ["prompt"], "b": ["prompt", "threshold"]},
    )


def healthy(chains=4, draws=1000, seed=0):
    """Independent normal draws: what a mixing sampler gives (ESS near chains x draws, R-hat near 1)."""
    rng = np.random.default_rng(seed)
    b = np.sort(rng.normal(size=(chains, draws, 5, 2)), axis=-1)
    return grm_idata(rng.normal(size=(chains, draws, 3)), np.exp(rng.normal(size=(chains, draws, 5)) * 0.3), b)


def test_a_stuck_chain_is_not_converged_and_says_so_in_diagnostics_json():
    # What `fit --chains 1 --draws 20 --tune 0` gave: 20 identical draws of every parameter.
    rng = np.random.default_rng(1)
    stuck = grm_idata(
        np.tile(rng.normal(size=3), (1, 20, 1)),
        np.tile(np.exp(rng.normal(size=5)), (1, 20, 1)),
        np.tile(np.sort(rng.normal(size=(5, 2)), axis=-1), (1, 20, 1, 1)),
        diverging=np.eye(1, 20, dtype=bool),
    )
    diag = diagnose(stuck, FitSettings(chains=1, draws=20, tune=0), 0.0)
    assert diag.converged is False
    failed = [w for w in diag.warnings if w.startswith(NOT_CONVERGED)]
    assert any("stuck chain" in w and "18 parameter(s)" in w and "theta[c0]" in w for w in failed)
    assert any("one chain" in w for w in failed) and any("bulk ESS down to 20" in w for w in failed)
    assert any("1 divergent" in w for w in failed)
    written = json.loads(diagnostics_json(diag))
    assert written["converged"] is False and written["warnings"][: len(failed)] == failed
    assert diagnostics_from_json(written).converged is False


def test_a_mixing_posterior_passes_every_check():
    check = check_convergence(healthy(), ["theta", "alpha", "b"])
    assert check.converged and check.failures == [] and check.stuck == []
    assert check.rhat_max <= RHAT_MAX and check.ess_bulk_min >= ESS_MIN
    assert diagnose(healthy(), FitSettings(), 0.0).converged is True


def test_each_check_fails_on_its_own():
    rng = np.random.default_rng(2)
    idata = healthy()
    # Chains centred 0.5 apart on one theta: R-hat well above 1.01.
    idata.posterior["theta"][1, :, 0] = idata.posterior["theta"][1, :, 0] + 0.5
    assert [m for m in check_convergence(idata, ["theta"]).failures if m.startswith("R-hat up to")]
    # One element stuck in one chain of four, the rest fine.
    idata = healthy()
    idata.posterior["alpha"][2, :, 3] = 1.3
    check = check_convergence(idata, ["alpha"])
    assert check.stuck == ["alpha[p3]"] and not check.converged
    # Strongly autocorrelated draws (AR(1), rho 0.99): ESS far below 400 with 4 x 1000 draws.
    ar = np.zeros((4, 1000, 3))
    for t in range(1, 1000):
        ar[:, t] = 0.99 * ar[:, t - 1] + rng.normal(size=(4, 3)) * 0.14
    idata.posterior["theta"][:] = ar
    assert any(m.startswith("bulk ESS") for m in check_convergence(idata, ["theta"]).failures)
    # Divergences alone.
    idata = healthy()
    idata.sample_stats["diverging"][0, 5] = True
    assert check_convergence(idata, ["theta"]).failures == [
        "1 divergent transitions: the posterior may be biased; run more tuning iterations."
    ]


def test_map_fits_are_not_checked():
    rng = np.random.default_rng(3)
    one = grm_idata(rng.normal(size=(1, 1, 3)), np.ones((1, 1, 5)), np.zeros((1, 1, 5, 2)))
    diag = diagnose(one, FitSettings(sampler="map"), 0.0)
    assert diag.converged is None and json.loads(diagnostics_json(diag))["converged"] is None


def test_a_cached_fit_of_fixed_draws_reads_back_as_one():
    """A Laplace fit's diagnostics (no R-hat, no target ESS) read back from the cache as they were written:
    a cached fit printed "sampled to the target ESS nan: ..., ceiling reached first" when every null became NaN."""
    from lib.cli import print_target_ess
    from lib.inference.diagnostics import Diagnostics

    laplace = Diagnostics("laplace", 1, 4000, float("nan"), float("nan"), float("nan"), 0, 1.5, None)
    back = diagnostics_from_json(json.loads(diagnostics_json(laplace)))
    assert back.target_ess is None and back.stopped is None and back.converged is None
    assert math.isnan(back.rhat_max) and math.isnan(back.ess_bulk_min) and back.draws == 4000
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        print_target_ess(back)
    assert buffer.getvalue() == ""
