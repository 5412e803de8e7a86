"""Prediction-powered leaderboards (issue 20): coverage in simulation and on PandaLM. Figures, not a test.

1. The issue's simulation (``lib.judges.simulate.coverage_study``): data sets of 6 systems, 2,000
   items of which 300 carry a human vote, a judge that copies the human vote 60% of the time and
   otherwise favours the weakest system by 1 logit. Prints the coverage and mean width of the
   human-only, judge-only and prediction-powered 95% intervals.
2. A realistic judge (issue 30): it tracks each item's own preference (SD ``item_sd`` logits, shared
   with the human) but never sees the human vote, one human vote per item, bias 1 logit towards the
   weakest system; coverage of the skills Bradley–Terry estimates and the width ratio for item effects
   of SD 0.5, 1, 2 and 3.
3. PandaLM (data/pandalm_pairwise): for each of ``DRAWS`` random 15% subsets of the items, the human
   votes there plus every verdict of both judges; prints how often the prediction-powered intervals
   hold the skill fitted on all human votes (per system and for every system at once), the width
   ratio to the human-only intervals on the same 15%, lambda and the effective human sample size.

3. Rank-sets (issue 34 item 4): the max-t simultaneous critical value against Bonferroni's, on data sets
   like 1. with 6 systems and with 20 (20,000 items, 3,000 with a human vote): how often every true rank is
   held at once, and the mean rank-set size.

    python bench/bench_ppi_coverage.py [N_SETS] [DRAWS]     # default 200 200
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
from scipy.stats import norm

from lib.inputs import analysis_input
from lib.io.paths import DATA_DIR
from lib.io.tables import read_csv
from lib.judges.ppi import design, max_t_critical, rank_sets, skill_fit
from lib.judges.read import read_judge_file
from lib.judges.run import judge_leaderboard, keep_share
from lib.judges.simulate import coverage_study, simulate_items
from lib.judgments.datasets import DATASETS


def simulation(n_sets: int) -> None:
    study = coverage_study(n_sets, seed=20)
    print(f"simulation: {n_sets} data sets x 6 systems, 95% intervals")
    print(f"{'estimator':>10} {'coverage':>9} {'mean width':>11} {'coverage of the favoured system':>32}")
    favoured = study[study["system"] == 0]
    for name in ("human", "judge", "ppi"):
        print(
            f"{name:>10} {study[f'{name}_covered'].mean():9.3f} {study[f'{name}_width'].mean():11.3f} "
            f"{favoured[f'{name}_covered'].mean():32.3f}"
        )
    print(f"PPI width / human-only width: {(study['ppi_width'] / study['human_width']).mean():.3f}")
    every = study.groupby("dataset")["rank_set_covered"].all().mean()
    print(f"rank-sets (simultaneous 95%): every true rank held in {every:.3f} of the data sets")


def realistic(n_sets: int) -> None:
    print(f"\na judge that tracks item-level preference, one human vote per item: {n_sets} data sets each")
    print(f"{'item SD':>8} {'human coverage':>15} {'PPI coverage':>13} {'PPI width / human-only width':>29}")
    for item_sd in (0.5, 1.0, 2.0, 3.0):
        study = coverage_study(n_sets, seed=30, copy=0.0, item_sd=item_sd)
        print(
            f"{item_sd:8.1f} {study['human_covered'].mean():15.3f} {study['ppi_covered'].mean():13.3f} "
            f"{(study['ppi_width'] / study['human_width']).mean():29.3f}"
        )


def pandalm(draws: int) -> None:
    ds = DATASETS["pandalm_pairwise"]
    votes = analysis_input(read_csv(ds.path, ds.path.name), ds.fmt, ds.columns, file=ds.path.name, matrix=False)
    votes = votes.judgments.votes
    path = DATA_DIR / "pandalm_pairwise" / "judge_votes_long.csv"
    judges = read_judge_file(read_csv(path, path.name), file=path.name)
    everyone = judge_leaderboard(votes, judges).leaderboard.set_index("system")["human_skill"]
    rows = []
    for d in range(draws):
        result = judge_leaderboard(keep_share(votes, 0.15, seed=d), judges)
        board = result.leaderboard.set_index("system")
        truth = everyone.reindex(board.index)
        rows.append(
            pd.DataFrame(
                {
                    "draw": d,
                    "system": board.index,
                    "covered": (board["ppi_low"] <= truth) & (truth <= board["ppi_high"]),
                    "human_covered": (board["human_low"] <= truth) & (truth <= board["human_high"]),
                    "ratio": (board["ppi_high"] - board["ppi_low"]) / (board["human_high"] - board["human_low"]),
                    "lam": result.diagnostics["lambda"],
                    "ess": result.diagnostics["effective_human_n"] / result.diagnostics["human_votes"],
                }
            )
        )
    table = pd.concat(rows, ignore_index=True)
    first = table[table["draw"] == 0].set_index("system")
    print(f"\nPandaLM: 15% of the items' human votes (149 items, 447 votes) + both judges, {draws} draws")
    print("first draw (seed 0), per system: PPI interval holds the all-human skill, width / human-only width")
    print(first[["covered", "ratio"]].round(3).to_string())
    per_system = table.groupby("system")[["covered", "human_covered", "ratio"]].mean()
    print("\nover all draws, per system: share covered (PPI, human-only), mean width ratio")
    print(per_system.round(3).to_string())
    every = table.groupby("draw")["covered"].all().mean()
    narrower = table.groupby("draw")["ratio"].max().lt(1).mean()
    print(
        f"every system covered in {every:.3f} of the draws; every PPI interval narrower in {narrower:.3f}; "
        f"lambda median {table['lam'].median():.3f}; effective human n / human votes median "
        f"{table.groupby('draw')['ess'].first().median():.3f}"
    )


def rank_set_study(n_sets: int) -> None:
    """Max-t against Bonferroni rank-sets: simultaneous coverage of the true ranks and mean size."""
    print("\nrank-sets, 95% simultaneous: max-t against Bonferroni (issue 34)")
    print(f"{'systems':>8} {'data sets':>10} {'z max-t':>8} {'z Bonf.':>8} {'all held':>18} {'mean size':>18}")
    for k, n_items, n_labelled in ((6, 2000, 300), (20, 20000, 3000)):
        rng = np.random.default_rng(34)
        skills = np.linspace(-1.0, 1.0, k)
        rank = np.arange(k, 0, -1)  # the skills increase: the last system is first
        bonferroni = norm.ppf(1 - 0.05 / (k * (k - 1)))
        held, size, z = {"max-t": [], "Bonferroni": []}, {"max-t": [], "Bonferroni": []}, []
        for _ in range(n_sets):
            first, second, y, yhat = simulate_items(rng, skills, n_items, copy=0.6, bias=1.0)
            x, lab = design(first, second, k), slice(0, n_labelled)
            fit = skill_fit(x[lab], y[lab], yhat[lab], x[n_labelled:], yhat[n_labelled:])
            z.append(max_t_critical(fit.cov))
            for name, crit in (("max-t", z[-1]), ("Bonferroni", bonferroni)):
                low, high = rank_sets(fit, z=crit)
                held[name].append(bool(((low <= rank) & (rank <= high)).all()))
                size[name].append(float((high - low + 1).mean()))
        print(
            f"{k:>8} {n_sets:>10} {np.mean(z):8.3f} {bonferroni:8.3f} "
            f"{np.mean(held['max-t']):8.3f} / {np.mean(held['Bonferroni']):7.3f} "
            f"{np.mean(size['max-t']):8.2f} / {np.mean(size['Bonferroni']):7.2f}"
        )


if __name__ == "__main__":
    simulation(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
    realistic(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
    pandalm(int(sys.argv[2]) if len(sys.argv) > 2 else 200)
    rank_set_study(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
