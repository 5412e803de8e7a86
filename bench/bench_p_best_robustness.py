"""P(best) is not robustness (issue 30 item 4): a high P(best) that a handful of dropped votes overturns.

Simulated tie-free arenas (:func:`lib.ranking.simulate.simulate_arena`, alpha_j = 1, skill SD 0.5) are
ranked by the leaderboard's default fit (:func:`lib.ranking.run.rank_systems`). The leader's wins over the
runner-up are then dropped one by one, in file order, until the fast Bradley–Terry Laplace stand-in
(:func:`lib.ranking.simulate.bt_laplace`) puts the runner-up first, and the default fit is run again on the
votes that remain. Prints P(best) of both systems before and after, and how many votes were dropped.

    python bench/bench_p_best_robustness.py
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from lib.inputs import analysis_input
from lib.io.tables import read_csv
from lib.judgments.formats import DEFAULT_CRITERION
from lib.ranking.fit import RankSettings
from lib.ranking.run import rank_systems
from lib.ranking.simulate import bt_laplace, simulate_arena

ARENAS = ((6, 60, 3000, 21), (8, 500, 8000, 27))
"""(systems, prompts, votes, seed): arenas whose leader has P(best) about 0.9."""
COLUMNS = {"prompt": "prompt_id", "system_a": "system_a", "system_b": "system_b", "choice": "winner"}


def p_best(votes) -> dict[str, float]:
    """P(best) of every system by the leaderboard's default fit."""
    votes = votes.assign(criterion=DEFAULT_CRITERION)
    table = read_csv(votes.to_csv(index=False).encode(), "arena.csv")
    data = analysis_input(table, "pairwise", COLUMNS, file="arena.csv", merge_redundant=False)
    board = rank_systems(data, RankSettings()).leaderboard
    return dict(zip(board["system"], board["p_best"], strict=True))


def main() -> None:
    os.environ.setdefault("EVAL_CACHE_DIR", tempfile.mkdtemp(prefix="p-best-"))
    print("systems | votes | leader: P(best) before | votes dropped (share) | P(best) after: leader, runner-up")
    for systems, prompts, n_votes, seed in ARENAS:
        votes, truth = simulate_arena(
            systems, prompts, n_votes, tie_rate=0.0, log_alpha_sd=0.0, skill_sd=0.5, seed=seed
        )
        before = p_best(votes)
        leader, runner_up = sorted(before, key=before.get, reverse=True)[:2]
        beat = ((votes["system_a"] == leader) & (votes["system_b"] == runner_up) & (votes["winner"] == "a")) | (
            (votes["system_a"] == runner_up) & (votes["system_b"] == leader) & (votes["winner"] == "b")
        )
        wins = votes.index[beat]
        order = truth["systems"]
        for k in range(1, len(wins) + 1):
            draws = bt_laplace(votes.drop(wins[:k]), order, draws=4000, seed=0)
            if order[int(np.argmax(draws.mean(axis=0)))] != leader:
                break
        after = p_best(votes.drop(wins[:k]))
        print(
            f"{systems} | {n_votes} | {leader}: {before[leader]:.3f} | {k} ({k / n_votes:.2%}) | "
            f"{after[leader]:.3f}, {after[runner_up]:.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
