"""What to annotate next: the score's ingredients, the greedy batch, and fewer votes than uniform sampling."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from lib.errors import SettingsError
from lib.ranking.active import next_batch, next_from_posterior
from lib.ranking.simulate import bt_laplace, simulate_active_vs_uniform

SYSTEMS = ["a", "b", "c", "d"]
TIES = np.array([[-0.5, 0.5]])  # antisymmetric thresholds of A better / tie / B better


def _draws(mu, sd, n=4000, seed=0):
    return np.random.default_rng(seed).normal(mu, sd, (n, len(mu)))


def test_undecided_pair_and_discriminating_prompt_come_first():
    # a, b close at the top (who is best is undecided); c, d far below; p2 discriminates twice as much as p1
    skills = _draws([3.0, 3.1, 0.0, -3.0], 0.3)
    batch = next_batch(skills, SYSTEMS, ["p1", "p2"], np.array([1.0, 2.0]), np.repeat(TIES, 2, axis=0), n=2)
    assert batch.iloc[0][["system_a", "system_b", "prompt_id"]].tolist() == ["a", "b", "p2"]
    assert list(batch.columns) == ["system_a", "system_b", "prompt_id", "score"]
    assert batch["score"].iloc[0] > batch["score"].iloc[1] > 0


def test_focus_picks_the_rank_boundary():
    # c, d undecided at the top, a, b undecided at the bottom
    skills = _draws([-3.0, -2.9, 3.0, 3.1], 0.3, seed=3)
    args = (skills, SYSTEMS, ["p1"], np.ones(1), TIES)
    assert next_batch(*args, n=1)[["system_a", "system_b"]].iloc[0].tolist() == ["c", "d"]  # who is best
    assert next_batch(*args, n=1, focus=3)[["system_a", "system_b"]].iloc[0].tolist() == ["a", "b"]  # who is last
    whole = next_batch(*args, n=2, focus=None)
    assert {tuple(r) for r in whole[["system_a", "system_b"]].values} == {("a", "b"), ("c", "d")}
    with pytest.raises(SettingsError, match="rank boundary"):
        next_batch(*args, focus=4)


def test_score_is_closeness_times_sd_shrinkage():
    # two systems, d = s_b - s_a ~ N(0, 0.5^2): p = 1/2, weight 1; alpha 1, threshold 0 (no ties):
    # one vote's information at d is p(1-p) = expit(d) expit(-d), averaged over the draws of d
    skills = _draws([0.0, 0.0], 0.5 / np.sqrt(2), n=20_000, seed=1)
    d = skills[:, 1] - skills[:, 0]
    info = np.mean(expit(d) * expit(-d))
    var = d.var(ddof=1)
    p = (d > 0).mean()
    expected = 4 * p * (1 - p) * (np.sqrt(var) - np.sqrt(var / (1 + var * info)))
    got = next_batch(skills, ["x", "y"], ["q"], np.array([1.0]), np.zeros((1, 1)), n=1)["score"].iloc[0]
    # the information is tabulated on a 0.1-wide grid of d: relative error well under 1%
    assert got == pytest.approx(expected, rel=0.01)


def test_batch_spreads_and_never_repeats_a_candidate():
    skills = _draws([0.0, 0.05, 0.1, 0.15], 0.5, seed=2)
    batch = next_batch(skills, SYSTEMS, ["p1", "p2", "p3"], np.ones(3), np.repeat(TIES, 3, axis=0), n=12)
    assert not batch.duplicated(["system_a", "system_b", "prompt_id"]).any()
    assert batch[["system_a", "system_b"]].drop_duplicates().shape[0] > 1  # the covariance update spreads it
    everything = next_batch(skills, SYSTEMS, ["p1"], np.ones(1), TIES, n=100)
    assert len(everything) == 6  # 6 pairs x 1 prompt: all candidates, no more


def test_bad_batch_size():
    with pytest.raises(SettingsError, match="at least 1"):
        next_batch(_draws([0.0, 1.0], 0.5), ["x", "y"], ["q"], np.ones(1), TIES, n=0)


def test_bt_laplace_matches_the_bradley_terry_mode():
    # one pair, 30 wins of y to 10 of x: the MLE of d = s_y - s_x is ln 3; the N(0, 10) priors (d's prior
    # precision 1 / 200) pull the mode in by about ln 3 / 200 / information; Monte Carlo sd of the mean sd / sqrt(S)
    votes = pd.DataFrame({"system_a": "x", "system_b": "y", "winner": ["b"] * 30 + ["a"] * 10})
    draws = bt_laplace(votes, ["x", "y", "z"], prior_sd=10.0, draws=20_000)
    d = draws[:, 1] - draws[:, 0]
    info = 40 * 0.75 * 0.25  # Fisher information of d at the MLE
    assert d.mean() == pytest.approx(np.log(3), abs=np.log(3) / 200 / info + 4 * d.std() / np.sqrt(len(d)))
    assert d.std() == pytest.approx(1 / np.sqrt(info), rel=4 / np.sqrt(2 * len(d)))  # sd's Monte Carlo error
    assert abs(draws[:, 2].mean()) < 4 * 10 / np.sqrt(len(d))  # z has no votes: its prior mean


def test_active_rule_needs_fewer_votes_than_uniform():
    began = time.perf_counter()
    sim = simulate_active_vs_uniform(6, 40, fit=bt_laplace, start=30, batch=10, max_votes=2000, seed=5)
    assert sim.needed["active"] is not None and sim.needed["uniform"] is not None
    assert sim.needed["active"] < sim.needed["uniform"]
    assert set(sim.trace["rule"]) == {"uniform", "active"}
    assert sim.trace.groupby("rule")["p_best"].max().gt(0.95).all()
    assert time.perf_counter() - began < 60


def test_next_from_posterior_reads_the_ranking_model_names():
    import arviz as az

    skills = _draws([0.0, 0.2, 0.4], 0.3, n=1000, seed=4)
    alpha, b = np.array([0.5, 1.5]), np.repeat(TIES, 2, axis=0)
    coords = {"system": ["p", "q", "r"], "prompt": ["j1", "j2"], "threshold": [1, 2]}
    idata = az.from_dict(
        posterior={
            "skill": skills[None],
            "alpha": np.broadcast_to(alpha, (1, 1000, 2)),
            "b": np.broadcast_to(b, (1, 1000, 2, 2)),
        },
        coords=coords,
        dims={"skill": ["system"], "alpha": ["prompt"], "b": ["prompt", "threshold"]},
    )
    pd.testing.assert_frame_equal(
        next_from_posterior(idata, 3), next_batch(skills, ["p", "q", "r"], ["j1", "j2"], alpha, b, 3)
    )
    ratings = az.from_dict(
        posterior={"skill": skills[None], "b": np.zeros((1, 1000, 2))},
        coords=coords,
        dims={"skill": ["system"], "b": ["threshold"]},
    )
    with pytest.raises(SettingsError, match="paired likelihood"):
        next_from_posterior(ratings, 3)
