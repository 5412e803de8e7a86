"""Issue 30 item 4: P(best) is not robustness. A leader with P(best) above 0.9 loses first place when
about 1% of the votes, its wins over the runner-up, are dropped; the page's help for P(best) says so.

The fits are :func:`lib.ranking.simulate.bt_laplace`, the leaderboard's Bradley–Terry Laplace stand-in
(milliseconds); the default fit on the same arena: P(best) 0.938 before, 0.496 after
(``bench/bench_p_best_robustness.py``).
"""

from __future__ import annotations

import numpy as np

from lib.ranking.leaderboard import P_BEST_HELP
from lib.ranking.simulate import bt_laplace, simulate_arena

DROPPED = 33
"""The leader's wins over the runner-up dropped (of 3,000 votes)."""


def p_best(votes, systems) -> np.ndarray:
    draws = bt_laplace(votes, systems, draws=4000, seed=0)
    return np.bincount(draws.argmax(axis=1), minlength=len(systems)) / len(draws)


def test_a_high_p_best_is_overturned_by_dropping_one_percent_of_the_votes():
    votes, truth = simulate_arena(6, 60, 3000, tie_rate=0.0, log_alpha_sd=0.0, skill_sd=0.5, seed=21)
    systems = truth["systems"]
    before = p_best(votes, systems)
    leader, runner_up = np.argsort(-before)[:2]
    assert before[leader] > 0.9  # 0.93: "the best with 93% probability"
    a, b, w = votes["system_a"], votes["system_b"], votes["winner"]
    name_l, name_r = systems[leader], systems[runner_up]
    beat = ((a == name_l) & (b == name_r) & (w == "a")) | ((a == name_r) & (b == name_l) & (w == "b"))
    after = p_best(votes.drop(votes.index[beat][:DROPPED]), systems)
    assert after[runner_up] > after[leader]  # first place changes hands
    assert DROPPED / len(votes) < 0.012  # 1.1% of the votes


def test_the_help_for_p_best_says_it_is_not_robustness():
    assert "not robustness" in P_BEST_HELP and "51 of 60,000 votes" in P_BEST_HELP
