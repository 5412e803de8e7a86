"""Fitting the ranking model: recovery, Bradley-Terry equivalence, position bias, intransitivity,
unpaired ratings (MAP + Laplace, and short NUTS chains where Laplace does not apply)."""

import choix
import numpy as np
import pytest
from scipy.stats import spearmanr

from lib.errors import SettingsError
from lib.inputs import analysis_input, bundled_input
from lib.io.tables import read_csv
from lib.judgments.ratings import orient_votes
from lib.ranking.data import ranking_data
from lib.ranking.fit import RankSettings, fit_ranking, rank_settings
from lib.ranking.model import SKILL_PRIOR_SD
from lib.ranking.simulate import simulate_arena

LAPLACE = RankSettings(sampler="laplace", draws=1000)


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    """Fits are cached on disk: keep them out of the user's cache (and every test fits afresh)."""
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))


def interval(draws, level):
    return np.quantile(draws, [(1 - level) / 2, (1 + level) / 2], axis=0)


@pytest.mark.validation
def test_thirty_systems_recovered_with_calibrated_intervals_and_position_bias(arena):
    gamma = 0.4
    votes, truth = simulate_arena(30, 300, 6000, position_bias=gamma, seed=11)
    fit = fit_ranking(arena(votes), RankSettings(sampler="laplace", draws=1000, position_bias=True))
    skill = fit.skill_draws()
    assert skill.shape == (1000, 30)
    assert np.corrcoef(skill.mean(0), truth["skill"])[0, 1] >= 0.98
    low, high = interval(skill, 0.9)
    cover = np.mean((truth["skill"] >= low) & (truth["skill"] <= high))
    assert abs(cover - 0.9) <= 3 * np.sqrt(0.9 * 0.1 / 30)
    g_low, g_high = interval(fit.idata.posterior["gamma"].to_numpy().ravel(), 0.95)
    assert g_low <= gamma <= g_high and g_low > 0
    assert fit.diagnostics.sampler == "laplace" and "approximation" in fit.diagnostics.warnings[0]


@pytest.mark.validation
def test_votes_without_ties_and_alpha_one_are_bradley_terry(arena):
    votes, _ = simulate_arena(8, 50, 2000, tie_rate=0.0, log_alpha_sd=0.0, seed=12)
    rd = arena(votes)
    fit = fit_ranking(rd, RankSettings(sampler="laplace", draws=10), fixed_alpha=True)
    # The skills' prior N(0, SKILL_PRIOR_SD) on the sum-to-zero plane is choix's penalty
    # alpha ||s||^2 with alpha = 1 / (2 sd^2) (choix/opt.py; its docstring's "variance 1/alpha" is
    # off by 2), and the BT optimum sums to zero: the modes agree up to the optimisers' tolerance.
    index = {s: i for i, s in enumerate(rd.systems)}
    pairs = [
        (index[w], index[lo])
        for w, lo in zip(
            np.where(votes["winner"] == "a", votes["system_a"], votes["system_b"]),
            np.where(votes["winner"] == "a", votes["system_b"], votes["system_a"]),
            strict=True,
        )
    ]
    bt = choix.opt_pairwise(len(rd.systems), pairs, alpha=1 / (2 * SKILL_PRIOR_SD**2), tol=1e-10)
    np.testing.assert_allclose(fit.mode["skill"], bt - bt.mean(), atol=1e-3)


@pytest.mark.validation
def test_intransitivity_finds_a_planted_pair_and_tau_near_zero_without_one(arena):
    settings = RankSettings(sampler="numpyro", intransitivity=True, chains=2, draws=150, tune=150, seed=1)
    found = {}
    for planted in ((0, 4, 2.0), None):
        votes, _ = simulate_arena(5, 30, 2000, intransitive=planted, seed=7)
        post = fit_ranking(arena(votes), settings).idata.posterior
        low, high = interval(post["delta"].stack(s=("chain", "draw")).to_numpy().T, 0.9)
        found[planted] = post["pair"].to_numpy()[(low > 0) | (high < 0)].tolist()
        tau = post["tau"].to_numpy().ravel()
    assert found[(0, 4, 2.0)] == ["sys004 vs sys000"] and found[None] == []
    # without intransitivity tau's posterior sits far below its HalfNormal(0.5) prior (median 0.34)
    assert np.median(tau) < 0.15


def test_ratings_likelihood_ranks_systems_rated_on_different_prompts():
    file = "tests/hostile/ratings_prompt_per_system.csv"
    data = analysis_input(read_csv(file, "unpaired.csv"), "ratings", file="unpaired.csv")
    rd = ranking_data(data)
    fit = fit_ranking(rd, rank_settings())  # the command's (and the page's) defaults
    mean_score = data.ratings.groupby("system")["score"].mean().reindex(rd.systems)
    assert spearmanr(fit.skill_draws().mean(0), mean_score).statistic >= 0.9
    assert fit.idata.posterior["eta"].sizes["prompt"] == data.ratings["prompt_id"].nunique()


def test_hanna_leaderboard_orders_systems_as_their_mean_human_score():
    data = bundled_input("hanna_means", "Relevance", merge_redundant=False)
    rd = ranking_data(data)
    fit = fit_ranking(rd, rank_settings())  # the command's (and the page's) defaults
    mean_score = data.ratings[data.ratings["criterion"] == "Relevance"].groupby("system")["score"].mean()
    assert spearmanr(fit.skill_draws().mean(0), mean_score.reindex(rd.systems)).statistic >= 0.9


def test_settings_refused_with_a_reason(arena):
    rd = arena(simulate_arena(3, 5, 60, seed=14)[0])
    with pytest.raises(SettingsError, match="unknown sampler 'map'"):
        fit_ranking(rd, RankSettings(sampler="map"))
    with pytest.raises(SettingsError, match="which system was shown first"):
        fit_ranking(rd, RankSettings(sampler="laplace", position_bias=True))
    with pytest.raises(SettingsError, match="prepared for the votes likelihood"):
        fit_ranking(rd, RankSettings(sampler="laplace", likelihood="cells"))


def test_cells_likelihood_ranks_pandalm_as_its_net_wins():
    data = bundled_input("pandalm_pairwise", merge_redundant=False)
    rd = ranking_data(data, "cells")
    skill = fit_ranking(rd, rank_settings(likelihood="cells")).skill_draws().mean(0)  # the command's defaults
    votes = orient_votes(rd.votes)  # score: +1 when B won, -1 when A won
    net = (
        votes.groupby("system_b")["score"].sum().reindex(rd.systems, fill_value=0)
        - votes.groupby("system_a")["score"].sum().reindex(rd.systems, fill_value=0)
    ) / rd.n_votes
    assert np.corrcoef(skill, net)[0, 1] >= 0.95


@pytest.mark.parametrize("sampler", ["pymc", "nutpie"])
def test_pymc_and_nutpie_samplers_give_a_posterior_with_diagnostics(arena, sampler):
    votes, _ = simulate_arena(4, 10, 200, position_bias=0.5, seed=15)
    settings = RankSettings(sampler=sampler, position_bias=True, chains=2, draws=50, tune=50, seed=2)
    messages = []
    fit = fit_ranking(arena(votes), settings, progress=lambda fraction, message: messages.append(fraction))
    post = fit.idata.posterior
    assert set(post.data_vars) == {"skill", "alpha", "sigma_alpha", "b", "gamma"}
    assert dict(post["skill"].sizes) == {"chain": 2, "draw": 50, "system": 4}
    assert dict(post["alpha"].sizes) == {"chain": 2, "draw": 50, "prompt": 10}
    assert dict(post["b"].sizes) == {"chain": 2, "draw": 50, "threshold": 2}
    assert np.allclose(post["skill"].sum("system"), 0, atol=1e-9)  # sum-to-zero skills
    diag = fit.diagnostics
    assert (diag.sampler, diag.chains, diag.draws) == (sampler, 2, 50)
    assert np.isfinite(diag.rhat_max) and diag.ess_bulk_min > 0 and diag.divergences >= 0
    assert "diverging" in fit.idata.sample_stats and fit.mode is None
    assert messages == sorted(messages) and messages[-1] == 1.0
