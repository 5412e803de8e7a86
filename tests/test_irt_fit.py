"""Fitting: posterior recovery on the paper's design, agreement with mirt, diagnostics, cache."""

import json
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd
import pytest
import xarray as xr

from lib.formats import read_responses
from lib.irt.fit import FitSettings, diagnose, fit_grm, load_cached, load_latest
from lib.irt.simulate import simulate_grm
from lib.irt.summary import ability_table, prompt_table
from lib.ratings import RatingMatrix, from_responses

DATA = Path(__file__).resolve().parents[1] / "data" / "irt_reference"


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    return tmp_path


def matrix(codes: np.ndarray) -> RatingMatrix:
    n_comp, n_prompt = codes.shape
    ids = np.array([f"p{j}" for j in range(n_prompt)])
    return RatingMatrix(
        u=codes.astype(float) - 3,
        comparisons=pd.DataFrame({"comparison": [f"c{i}" for i in range(n_comp)],
                                  "system_a": "a", "system_b": "b"}),
        prompt_ids=ids, categories=np.arange(-3, 4),
        groups=pd.DataFrame({"prompt_id": ids, "group": ids}), n_votes=np.ones_like(codes),
    )


def test_posterior_recovers_theta_with_calibrated_90_percent_intervals():
    sim = simulate_grm(20, 200, seed=11)
    fit = fit_grm(matrix(sim.codes), FitSettings(chains=2, draws=250, tune=250, seed=1),
                  use_cache=False)
    post = fit.idata.posterior
    theta = post["theta"].stack(s=("chain", "draw")).to_numpy()  # (I, S)
    alpha = post["alpha"].stack(s=("chain", "draw")).to_numpy()  # (J, S)
    assert np.corrcoef(theta.mean(axis=1), sim.theta)[0, 1] > 0.95
    # 90% central intervals of all 220 theta and alpha values: with parameters drawn from the
    # prior, the coverage is 0.9 on average; +-3 binomial SDs for n = 220 is +-0.061.
    draws = np.concatenate([theta, alpha])
    truth = np.concatenate([sim.theta, sim.alpha])
    lo, hi = np.quantile(draws, [0.05, 0.95], axis=1)
    coverage = ((truth >= lo) & (truth <= hi)).mean()
    assert 0.9 - 0.061 <= coverage <= 0.9 + 0.061
    assert fit.diagnostics.rhat_max < 1.1  # short chains: the lax threshold


def test_science_slopes_lie_in_mirts_95_percent_intervals():
    ref = json.loads((DATA / "reference_estimates.json").read_text())["Science_GRM_mirt"]
    df = pd.read_csv(DATA / "Science_mirt4_long.csv", dtype=str)
    rm = from_responses(read_responses(df, file="Science_mirt4_long.csv"))
    fit = fit_grm(rm, FitSettings(cutpoints="free", chains=2, draws=400, tune=400, seed=2),
                  use_cache=False)
    table = prompt_table(fit, rm).set_index("prompt_id")
    for item in ("Comfort", "Work", "Future", "Benefit"):
        a, se = ref[item]["a1"], ref[item]["SE_Louis"]["a1"]
        assert a - 1.96 * se <= table.loc[item, "alpha_mean"] <= a + 1.96 * se, item
        # mirt's intercepts d_k = -a b_k, in decreasing order; ours are thresholds b_k.
        b = np.asarray(table.loc[item, "b_mean"])
        d = np.asarray(ref[item]["d"])
        d_se = np.asarray(ref[item]["SE_Louis"]["d"])
        ours = -table.loc[item, "alpha_mean"] * b
        assert (np.abs(ours - d) <= 3 * d_se).all(), (item, ours, d)


def test_diagnostics_flag_chains_that_disagree():
    rng = np.random.default_rng(0)
    theta = rng.normal(size=(2, 200, 3))
    theta[1] += 3.0  # second chain elsewhere
    post = xr.Dataset({
        "theta": (("chain", "draw", "comparison"), theta),
        "alpha": (("chain", "draw", "prompt"), np.exp(rng.normal(size=(2, 200, 4)))),
        "b": (("chain", "draw", "prompt", "threshold"), rng.normal(size=(2, 200, 4, 2))),
    })
    stats = xr.Dataset({"diverging": (("chain", "draw"), np.zeros((2, 200), bool))})
    d = diagnose(az.InferenceData(posterior=post, sample_stats=stats), FitSettings(chains=2), 1.0)
    assert d.rhat_max > 1.5
    assert any("R-hat" in w for w in d.warnings)
    assert d.divergences == 0


def test_fits_are_cached_on_disk_by_data_and_settings(cache):
    rm = matrix(simulate_grm(5, 30, seed=5).codes)
    settings = FitSettings(sampler="map")
    first = fit_grm(rm, settings)
    assert (cache / "fits" / f"{first.cache_key}.nc").exists()
    messages = []
    again = fit_grm(rm, settings, progress=lambda f, m: messages.append(m))
    assert messages == ["loaded from cache"]
    np.testing.assert_allclose(again.idata.posterior["theta"], first.idata.posterior["theta"])
    assert load_cached(rm, FitSettings(sampler="map", seed=1)) is None
    assert load_latest(rm).cache_key == first.cache_key  # reopening the app shows the last fit
    table = ability_table(again, rm)
    assert list(table.columns) == ["comparison", "system_a", "system_b", "theta_mean", "theta_sd",
                                   "hdi_low", "hdi_high", "p_b_better"]
