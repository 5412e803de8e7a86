"""A judge's first-position bias from one order (issue 34 item 3): sides randomised per vote, as in an arena."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from lib.io.tables import read_csv
from lib.judges.quality import judge_quality, position_bias
from lib.judges.read import match_items, oriented, read_judge_file
from lib.judges.simulate import SimulatedJudge, simulate_arena
from lib.judgments.formats import read_judgments

JUDGES = (SimulatedJudge("reads", noise=0.5), SimulatedJudge("first", noise=0.5, picks_first=0.4))


def quality(first_share: float, seed: int = 0):
    humans, verdicts, _ = simulate_arena(
        np.random.default_rng(seed), n_systems=6, n_votes=4000, n_twice=0, judges=JUDGES, first_share=first_share
    )
    humans = read_judgments(read_csv(humans.to_csv(index=False).encode(), "h.csv"), "pairwise", file="h.csv").votes
    judges = read_judge_file(read_csv(verdicts.to_csv(index=False).encode(), "j.csv"), file="j.csv")
    return judge_quality(*match_items(humans, judges)).table.set_index("judge")


def test_position_bias_from_randomised_sides_holds_the_true_bias():
    # the strongest systems come first by name and are shown first in 80% of the votes: the raw first-position
    # rate mixes quality with position; within each pair, both orders are averaged, which removes it
    table = quality(first_share=0.8)
    for judge, truth in (("reads", 0.0), ("first", 0.4 / 2)):
        row = table.loc[judge]
        assert row["position_bias_low"] <= truth <= row["position_bias_high"]
        assert row["position_bias_from"] == "randomised sides"
    assert table.loc["first", "position_bias_high"] - table.loc["first", "position_bias_low"] < 0.06


def test_coverage_of_the_one_order_interval():
    z, covered = norm.ppf(0.975), []
    for seed in range(60):
        _, verdicts, _ = simulate_arena(
            np.random.default_rng(seed), n_systems=6, n_votes=2000, n_twice=0, judges=JUDGES[1:], first_share=0.7
        )
        winner = verdicts["winner"].map({"model_a": "a", "model_b": "b", "tie": "tie"})
        _, low, high, _ = position_bias(oriented(verdicts.assign(winner=winner, first=verdicts["system_a"])), z)
        covered.append(low <= 0.2 <= high)
    assert np.mean(covered) >= 0.95 - 3 * (0.95 * 0.05 / len(covered)) ** 0.5


def test_a_fixed_order_gives_no_number_and_says_why():
    table = quality(first_share=1.0)  # the system first by name is always shown first (PandaLM's files)
    row = table.loc["first"]
    assert np.isnan(row["position_bias"]) and row["position_bias_from"].startswith("not estimable")


def test_both_orders_are_still_used_where_they_exist():
    text = "prompt,system_a,system_b,judge,choice\n0,x,y,m,A\n0,y,x,m,A\n1,x,y,m,A\n1,y,x,m,B\n"
    judges = read_judge_file(read_csv(text.encode(), "j.csv"), file="j.csv")
    humans = read_judgments(
        read_csv(b"prompt,system_a,system_b,choice\n0,x,y,A\n1,x,y,B\n", "h.csv"), "pairwise", file="h.csv"
    )
    row = judge_quality(*match_items(humans.votes, judges)).table.iloc[0]
    assert row["position_bias"] == pytest.approx(0.25) and row["position_bias_from"] == "both orders"
