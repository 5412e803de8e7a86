"""Posterior predictive checks: data from the GRM pass, data from another model are flagged."""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest

from lib.errors import SettingsError
from lib.inference.diagnostics import Diagnostics
from lib.irt.fit import GRMFit, fit_grm
from lib.irt.map import fit_map
from lib.irt.ppc import INTERVAL, P_EXTREME, posterior_predictive, replicate
from lib.irt.settings import FitSettings
from lib.irt.simulate import simulate_grm

CATEGORIES = np.arange(-3, 4)
S = 200


def repeat(x: np.ndarray) -> np.ndarray:
    """A point estimate as S identical draws: a plug-in check."""
    return np.repeat(x[None], S, axis=0)


def outside(table) -> np.ndarray:
    return ((table["observed"] < table["replicated_low"]) | (table["observed"] > table["replicated_high"])).to_numpy()


def binomial_bound(rate: float, n: int) -> float:
    """Largest fraction of n events of probability `rate` to expect: 4 binomial SDs above."""
    return rate + 4 * np.sqrt(rate * (1 - rate) / n)


@pytest.fixture(scope="module")
def true_check():
    """20 comparisons x 200 prompts drawn from the GRM, replicated from the true parameters."""
    sim = simulate_grm(20, 200, seed=0)
    return replicate(sim.codes, CATEGORIES, repeat(sim.theta), repeat(sim.alpha), repeat(sim.b), seed=0)


def test_observed_counts_lie_inside_the_replicated_interval(true_check):
    # Observed and replicated counts share one distribution, so each count falls outside the
    # central 94% interval with probability <= 6% (integer bounds only widen it).
    miss = 1 - INTERVAL
    overall = true_check.overall()
    assert list(overall["category"]) == list(CATEGORIES)
    assert overall["observed"].sum() == 20 * 200
    # K = 7 categories: 3 or more outside has probability < 1% under Binomial(7, 0.06).
    assert outside(overall).sum() <= 2
    per_cell = np.concatenate([outside(true_check.for_prompt(p)) for p in true_check.prompt_ids])
    assert per_cell.mean() <= binomial_bound(miss, per_cell.size)


@pytest.mark.validation
def test_p_values_of_a_model_that_fits_are_rarely_extreme(true_check):
    table = true_check.prompt_table()
    assert table["p_value"].between(0, 1).all()
    # From the true parameters the mid-p value is close to uniform: 2 * P_EXTREME are flagged.
    assert table["misfit"].mean() <= binomial_bound(2 * P_EXTREME, len(table))
    assert abs(table["p_value"].median() - 0.5) < 0.1


@pytest.mark.validation
def test_prompts_from_another_model_get_extreme_p_values():
    sim = simulate_grm(40, 60, seed=1)
    codes = sim.codes.copy()
    # Swap A and B where theta < 0 (antisymmetric cutpoints: still GRM data), so every theta > 0.
    codes[sim.theta < 0] = 6 - codes[sim.theta < 0]
    biased = np.arange(3)  # every comparison rated +3 whatever the systems: a position bias
    reversed_ = 3 + np.argsort(sim.alpha[3:])[-3:]  # the 3 most discriminating prompts, reversed
    codes[:, biased] = 6
    codes[:, reversed_] = 6 - codes[:, reversed_]
    point = fit_map(codes, len(CATEGORIES))
    check = replicate(codes, CATEGORIES, repeat(point.theta), repeat(point.alpha), repeat(point.b), seed=0)
    p = check.p_value
    assert (p[biased] < P_EXTREME).all()  # the model predicts lower ratings than observed
    assert (p[reversed_] > 1 - P_EXTREME).all()  # the model predicts higher ratings
    good = np.setdiff1d(np.arange(60), np.r_[biased, reversed_])
    assert check.prompt_table()["misfit"].to_numpy()[good].mean() <= binomial_bound(2 * P_EXTREME, len(good))


def fake_fit(sim, rm, chains: int = 2, draws: int = 100) -> GRMFit:
    """A 'posterior' of the true parameters with small noise, shaped as a NUTS fit's idata."""
    rng = np.random.default_rng(3)
    shape = (chains, draws)
    post = {
        "theta": sim.theta + rng.normal(0, 0.05, shape + sim.theta.shape),
        "alpha": sim.alpha * np.exp(rng.normal(0, 0.05, shape + sim.alpha.shape)),
        "b": np.sort(sim.b + rng.normal(0, 0.05, shape + sim.b.shape), axis=-1),
    }
    idata = az.from_dict(
        posterior=post,
        coords={
            "comparison": rm.comparisons["comparison"].to_numpy(),
            "prompt": rm.prompt_ids,
            "threshold": np.arange(1, 7),
        },
        dims={"theta": ["comparison"], "alpha": ["prompt"], "b": ["prompt", "threshold"]},
    )
    diag = Diagnostics("numpyro", chains, draws, 1.0, 100.0, 100.0, 0, 1.0, True)
    return GRMFit(idata, diag, FitSettings(chains=chains, draws=draws), "fake")


def test_posterior_predictive_thins_draws_and_is_seeded(codes_to_matrix):
    sim = simulate_grm(8, 12, seed=2)
    rm = codes_to_matrix(sim.codes)
    fit = fake_fit(sim, rm)
    check = posterior_predictive(fit, rm, n_draws=50, seed=4)
    assert check.replicated.shape == (50, 12, 7)
    assert (check.replicated.sum(axis=2) == 8).all()  # every replicate rates the observed cells
    assert list(check.prompt_ids) == list(rm.prompt_ids)
    again = posterior_predictive(fit, rm, n_draws=50, seed=4)
    other = posterior_predictive(fit, rm, n_draws=50, seed=5)
    assert np.array_equal(check.replicated, again.replicated)
    assert not np.array_equal(check.replicated, other.replicated)
    assert posterior_predictive(fit, rm, n_draws=10_000).replicated.shape[0] == 200  # all draws


def test_missing_cells_are_not_replicated(codes_to_matrix):
    sim = simulate_grm(8, 12, seed=2)
    codes = sim.codes.copy()
    codes[:3, 0] = -1
    codes[:, 1] = -1
    check = posterior_predictive(fake_fit(sim, codes_to_matrix(codes)), codes_to_matrix(codes), n_draws=20)
    table = check.prompt_table()
    assert list(table["n_ratings"][:3]) == [5, 0, 8]
    assert (check.replicated[:, 0].sum(axis=1) == 5).all()
    assert np.isnan(table["p_value"][1]) and not table["misfit"][1]


def test_map_fit_and_unknown_prompt_raise_settings_errors(codes_to_matrix):
    sim = simulate_grm(6, 8, seed=0)
    rm = codes_to_matrix(sim.codes)
    fit = fit_grm(rm, FitSettings(sampler="map"), use_cache=False)
    with pytest.raises(SettingsError, match="NUTS"):
        posterior_predictive(fit, rm)
    other = codes_to_matrix(simulate_grm(6, 9, seed=0).codes)
    with pytest.raises(SettingsError, match="other data"):
        posterior_predictive(fake_fit(sim, rm), other)
    with pytest.raises(SettingsError, match="unknown prompt 'nope'"):
        posterior_predictive(fake_fit(sim, rm), rm).for_prompt("nope")


def test_verdict_passes_data_from_the_model(true_check):
    ok, text = true_check.verdict()
    assert ok and text.startswith("The model reproduces the number of ratings in every category")
    assert not true_check.category_table()["misfit"].any()


def test_verdict_flags_counts_the_model_cannot_give():
    # Issue 16 item 18: three workers who never tie give only odd net ratings; a model that puts
    # 20-25 ratings at 0 and +-2 must be called a misfit, naming those categories.
    sim = simulate_grm(2, 40, seed=18)
    values = CATEGORIES[sim.codes]
    rng = np.random.default_rng(18)
    odd = np.where(values % 2 == 0, values + rng.choice([-1, 1], size=values.shape), values)
    check = replicate(odd + 3, CATEGORIES, repeat(sim.theta), repeat(sim.alpha), repeat(sim.b), seed=0)
    ok, text = check.verdict()
    table = check.category_table()
    assert not ok and text.startswith("The model misfits the data")
    assert {-2, 0} <= set(table.loc[table["misfit"], "category"])  # never observed, 15-20 replicated
    assert "; 0: observed 0, replicated" in text
