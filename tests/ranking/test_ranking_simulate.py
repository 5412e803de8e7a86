"""The arena simulator: sizes, tie rate, position column, planted intransitivity."""

import numpy as np
import pytest

from lib.judgments.formats import VOTE_COLUMNS
from lib.ranking.simulate import simulate_arena


def test_votes_have_the_canonical_columns_and_the_asked_sizes():
    votes, truth = simulate_arena(7, 40, 500, seed=1)
    assert list(votes.columns) == VOTE_COLUMNS
    assert len(votes) == 500 and votes["annotator_id"].is_unique
    assert (votes["system_a"] != votes["system_b"]).all()
    assert set(votes["winner"]) == {"a", "b", "tie"}
    assert truth["skill"].shape == (7,) and truth["alpha"].shape == (40,)
    assert truth["skill"].sum() == pytest.approx(0.0, abs=1e-12)


def test_tie_rate_between_equal_systems_is_the_one_asked():
    votes, _ = simulate_arena(5, 50, 20_000, skill_sd=0.0, log_alpha_sd=0.0, tie_rate=0.2, seed=2)
    rate = (votes["winner"] == "tie").mean()
    assert rate == pytest.approx(0.2, abs=3 * np.sqrt(0.2 * 0.8 / 20_000))


def test_no_ties_when_the_tie_rate_is_zero():
    votes, _ = simulate_arena(5, 50, 2_000, tie_rate=0.0, seed=3)
    assert set(votes["winner"]) == {"a", "b"}


def test_position_bias_favours_the_system_shown_first():
    gamma = 1.0
    votes, truth = simulate_arena(
        4, 30, 20_000, skill_sd=0.0, log_alpha_sd=0.0, tie_rate=0.0, position_bias=gamma, seed=4
    )
    assert truth["gamma"] == gamma
    first_won = np.where(votes["winner"] == "a", votes["system_a"], votes["system_b"]) == votes["first"]
    # equal skills, alpha = 1: the first system wins with probability logistic(gamma)
    p = 1 / (1 + np.exp(-gamma))
    assert first_won.mean() == pytest.approx(p, abs=3 * np.sqrt(p * (1 - p) / 20_000))


def test_planted_intransitive_pair_shifts_that_pair_only():
    votes, truth = simulate_arena(
        3, 30, 30_000, skill_sd=0.0, log_alpha_sd=0.0, tie_rate=0.0, intransitive=(2, 0, 2.0), seed=5
    )
    assert truth["delta"] == {("sys000", "sys002"): -2.0}  # sys000 beats sys002 by 2 logits more
    pair = {frozenset(("sys000", "sys002"))}
    in_pair = votes[[frozenset(p) in pair for p in zip(votes["system_a"], votes["system_b"], strict=True)]]
    winners = np.where(in_pair["winner"] == "a", in_pair["system_a"], in_pair["system_b"])
    p = 1 / (1 + np.exp(-2.0))
    assert (winners == "sys000").mean() == pytest.approx(p, abs=3 * np.sqrt(p * (1 - p) / len(in_pair)))
