"""Leaderboard read-outs on hand-made skill draws with known ranks, P(best) and win probabilities."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from lib.errors import SettingsError
from lib.ranking.leaderboard import intransitive_pairs, leaderboard, position_bias, win_matrix

# systems in non-alphabetical order; 4 draws with rankings x>y>z, x>z>y, y>z>x, x>y>z
SYSTEMS = ["z", "x", "y"]
DRAWS = np.array([[1.0, 3.0, 2.0], [2.0, 3.0, 1.0], [2.0, 1.0, 3.0], [1.0, 3.0, 2.0]])


def test_ranks_and_probabilities_of_hand_made_draws():
    board = leaderboard(DRAWS, SYSTEMS, pd.Series({"x": 5, "y": 7, "z": 2}), top_k=2, level=0.5).set_index("system")
    assert list(board.index) == ["x", "y", "z"]  # best mean skill first: 2.5, 2.0, 1.5
    assert board["rank_mean"].to_dict() == {"x": 1.5, "y": 2.0, "z": 2.5}
    assert board["p_best"].to_dict() == {"x": 0.75, "y": 0.25, "z": 0.0}
    assert board["p_top_k"].to_dict() == {"x": 0.75, "y": 0.75, "z": 0.5}
    # 25% and 75% quantiles of the ranks: x 1,1,3,1 -> [1, 1]; y 2,3,1,2 -> [1, 2]; z 3,2,2,3 -> [2, 3]
    assert board[["rank_low", "rank_high"]].to_dict("index") == {
        "x": {"rank_low": 1, "rank_high": 1},
        "y": {"rank_low": 1, "rank_high": 2},
        "z": {"rank_low": 2, "rank_high": 3},
    }
    assert board["n_votes"].to_dict() == {"x": 5, "y": 7, "z": 2}
    assert board.loc["x", "skill_mean"] == 2.5
    assert board.loc["x", "skill_sd"] == pytest.approx(1.0)  # 3, 3, 1, 3: sample sd 1


def test_wide_level_covers_every_rank_seen():
    board = leaderboard(DRAWS, SYSTEMS, [2, 5, 7], level=0.95).set_index("system")
    assert board["rank_low"].to_dict() == {"x": 1, "y": 1, "z": 2}  # z never ranks first
    assert (board["rank_high"] == 3).all()
    assert list(board.columns) == [
        "skill_mean",
        "skill_sd",
        "skill_low",
        "skill_high",
        "rank_mean",
        "rank_low",
        "rank_high",
        "p_best",
        "p_top_k",
        "n_votes",
        "component",
    ]


def test_win_matrix_every_pair_alphabetical():
    wins = win_matrix(DRAWS, SYSTEMS)
    assert wins[["system_a", "system_b"]].values.tolist() == [["x", "y"], ["x", "z"], ["y", "z"]]
    assert wins["p_b_better"].tolist() == [0.25, 0.25, 0.25]


def test_probabilities_match_gaussian_skills():
    # independent skills N(mu_k, 1): P(s_B > s_A) = Phi((mu_B - mu_A) / sqrt 2); Monte Carlo sd sqrt(p(1-p)/S)
    rng = np.random.default_rng(11)
    mu = np.array([0.0, 0.5, 1.5])
    draws = rng.normal(mu, 1.0, (40_000, 3))
    wins = win_matrix(draws, ["a", "b", "c"])
    exact = norm.cdf((mu[[1, 2, 2]] - mu[[0, 0, 1]]) / np.sqrt(2))
    tol = 4 * np.sqrt(exact * (1 - exact) / len(draws))
    assert np.all(np.abs(wins["p_b_better"].to_numpy() - exact) < tol)
    board = leaderboard(draws, ["a", "b", "c"], [1, 1, 1], top_k=1).set_index("system")
    assert board["p_best"].sum() == pytest.approx(1.0)
    assert (board["p_best"] == board["p_top_k"]).all()
    np.testing.assert_allclose(board.loc[["a", "b", "c"], "skill_mean"], mu, atol=4 / np.sqrt(len(draws)))


def test_bad_top_k_is_a_settings_error():
    with pytest.raises(SettingsError, match="top k"):
        leaderboard(DRAWS, SYSTEMS, [1, 1, 1], top_k=4)


def _idata(**posterior):
    import arviz as az

    return az.from_dict(
        posterior=posterior,
        coords={"system": ["p", "q", "r"], "pair": ["q vs p", "r vs p", "r vs q"]},
        dims={"skill": ["system"], "delta": ["pair"]},
    )


def test_intransitive_pairs_whose_interval_excludes_zero():
    rng = np.random.default_rng(3)
    # (1 chain, 2000 draws): delta of "q vs p" well above 0, "r vs q" well below, "r vs p" around 0
    delta = rng.normal([1.0, 0.0, -0.8], 0.1, (1, 2000, 3))
    found = intransitive_pairs(_idata(skill=rng.normal(size=(1, 2000, 3)), delta=delta))
    assert found[["system_a", "system_b"]].values.tolist() == [["p", "q"], ["q", "r"]]  # largest |delta| first
    assert found["note"].tolist() == [
        "the data say q beats p directly more than their skills imply",
        "the data say q beats r directly more than their skills imply",
    ]
    assert (found["delta_low"] < found["delta_mean"]).all() and (found["delta_mean"] < found["delta_high"]).all()
    assert intransitive_pairs(_idata(skill=rng.normal(size=(1, 50, 3)))) is None


def test_position_bias_interval():
    rng = np.random.default_rng(4)
    gamma = rng.normal(0.3, 0.05, (2, 4000))
    row = position_bias(_idata(skill=rng.normal(size=(2, 4000, 3)), gamma=gamma)).iloc[0]
    # mean of 8000 draws: Monte Carlo sd 0.05 / sqrt(8000); the 95% interval is 0.3 +- 1.96 * 0.05, its
    # ends with Monte Carlo sd sqrt(0.025 * 0.975 / 8000) / pdf(1.96) * 0.05 = 0.0015 (tolerance 0.005)
    assert row["mean"] == pytest.approx(0.3, abs=4 * 0.05 / np.sqrt(8000))
    assert row["low"] == pytest.approx(0.3 - 1.96 * 0.05, abs=0.005)
    assert row["high"] == pytest.approx(0.3 + 1.96 * 0.05, abs=0.005)
    assert position_bias(_idata(skill=gamma[..., None].repeat(3, axis=2))) is None
