"""Categories that borrow strength (issue 36 item 2): one pooled fit against separate fits per category, on
simulated votes; figures printed, not a test.

Votes of :func:`lib.ranking.simulate.simulate_category_arena` (a skill per system and category: overall skills
evenly spaced, deviations of SD ``--spread``, and in ``coding`` systems 1 and 2 swapped), ranked

- pooled: ``python -m lib rank --by category``'s defaults (:func:`lib.ranking.fit.rank_settings` with
  ``by_category=True``), one fit, ``leaderboard_by_category.csv``;
- separately: ``rank``'s defaults on each category's votes alone (LMArena's way).

Printed per seed and over all seeds: the correlation of each way's per-category skills with the true ones
(centred within the category, as both fits are), the mean width of the 95% intervals in the large category and
in the small ones, the share of true skills inside their intervals (coverage; nominal 0.95), whether the reversal
is found (P(system 2 above system 1 in coding) > 0.95), sigma_category against the deviations' realised SD, and
the seconds of each way.

Usage: ``python bench/bench_categories.py [--seeds S] [--systems K] [--votes N,N,...] [--spread SD]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lib.inputs import analysis_input  # noqa: E402
from lib.ranking.fit import rank_settings  # noqa: E402
from lib.ranking.run import rank_systems  # noqa: E402
from lib.ranking.simulate import simulate_category_arena  # noqa: E402

UPLOAD = {"prompt_id": "prompt", "annotator_id": "annotator", "winner": "choice"}


def _input(votes: pd.DataFrame):
    return analysis_input(
        votes.rename(columns=UPLOAD).drop(columns="criterion"), "pairwise", file="v.csv", matrix=False
    )


def _scores(boards: dict[str, pd.DataFrame], truth: dict) -> dict[str, float]:
    rows = []
    for c, board in boards.items():
        true = truth["category_skill"][c]
        t = board.set_index("system").reindex(truth["systems"])
        rows.append(t.assign(category=c, true=true - true.mean()))
    t = pd.concat(rows)
    width = t["skill_high"] - t["skill_low"]
    large = t["category"] == truth["categories"][0]
    return {
        "r": float(np.corrcoef(t["true"], t["skill_mean"])[0, 1]),
        "width_large": float(width[large].mean()),
        "width_small": float(width[~large].mean()),
        "covered": float(((t["skill_low"] <= t["true"]) & (t["true"] <= t["skill_high"])).mean()),
        "n": len(t),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--votes", default="6000,1500,400,150", help="votes per category, largest first")
    parser.add_argument("--spread", type=float, default=0.4)
    args = parser.parse_args()
    n_votes = [int(v) for v in args.votes.split(",")]
    rows = []
    for seed in range(args.seeds):
        votes, truth = simulate_category_arena(n_votes, n_systems=args.systems, spread=args.spread, seed=seed)
        began = time.perf_counter()
        pooled = rank_systems(_input(votes), rank_settings(by_category=True))
        pooled_s = time.perf_counter() - began
        began = time.perf_counter()
        separate = {
            c: rank_systems(_input(votes[votes["category"] == c]), rank_settings()).leaderboard
            for c in truth["categories"]
        }
        separate_s = time.perf_counter() - began
        assert pooled.by_category is not None and pooled.category_spread is not None
        first, second, category = truth["reversal"]
        draws = pooled.fit.idata["posterior"]["category_skill"].sel(category=category)
        found = float((draws.sel(system=second) > draws.sel(system=first)).mean())
        deviations = np.concatenate([truth["category_skill"][c] - truth["skill"] for c in truth["categories"]])
        both = _scores(dict(tuple(pooled.by_category.groupby("category"))), truth)
        alone = _scores(separate, truth)
        row = {
            "seed": seed,
            "sampler": pooled.fit.diagnostics.sampler,
            **{f"pooled_{k}": v for k, v in both.items() if k != "n"},
            **{f"separate_{k}": v for k, v in alone.items() if k != "n"},
            "p_reversal": found,
            "sigma_category": float(pooled.category_spread["mean"].iloc[0]),
            "deviation_sd": float(deviations.std()),
            "pooled_s": pooled_s,
            "separate_s": separate_s,
        }
        rows.append(row)
        print(pd.DataFrame([row]).to_string(index=False, float_format=lambda v: f"{v:.3f}"), flush=True)
    table = pd.DataFrame(rows)
    print(f"\n{args.systems} systems, votes per category {n_votes}, spread {args.spread}, {args.seeds} seeds:")
    print(table.drop(columns=["seed", "sampler"]).mean().to_string(float_format=lambda v: f"{v:.3f}"))
    print(f"reversal found (P > 0.95) in {(table['p_reversal'] > 0.95).sum()} of {len(table)} seeds")


if __name__ == "__main__":
    main()
