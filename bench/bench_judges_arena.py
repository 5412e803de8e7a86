"""Judges that pay their way (issue 34, "Done when"): a simulated arena read as it is. Figures, not a test.

No Chatbot Arena file is bundled (no network here), so the bar is checked on a simulation shaped like the
issue's file (``lib.judges.simulate.simulate_arena``): 20 systems, 27,000 human votes on random pairs, one
per conversation (9 conversations voted twice), sides randomised per vote, no annotator column; three
judges on every conversation in the order the humans saw: a good one, a noisy one that ties often, and one
that answers "first" unread in 72% of its verdicts (86% first in all). Both files are written as CSV and
read by the app's readers as they are (``prompt_id, system_a, system_b, winner``; the judges' file adds
``judge``). For each of ``DRAWS`` draws, 10% of the items keep their human votes
(``lib.judges.run.keep_share``) and every verdict is used; the reference is the all-human skill (all
27,000 votes, human-only Bradley–Terry).

Prints, per draw and over the draws: how many of the 20 all-human skills the prediction-powered intervals
hold; mean 95% widths (prediction-powered, human-only, judge-only) and how many all-human skills the
judge-only intervals hold; effective human n with all three judges, with each judge alone, and with the
judges averaged into one prediction (one weight: the estimator before issue 34); each judge's weight and
what dropping it costs; rank-set sizes, max-t against Bonferroni; each judge's position bias (one order).

    python bench/bench_judges_arena.py [DRAWS]     # default 20
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from lib.inputs import analysis_input
from lib.io.tables import read_csv
from lib.judges.ppi import classical_fit, rank_sets, skill_fit
from lib.judges.read import read_judge_file
from lib.judges.run import item_design, judge_leaderboard, keep_share
from lib.judges.simulate import simulate_arena

SHARE = 0.10
"""The share of the items whose human votes are kept (the issue's 10%)."""


def read_as_is(folder: Path):
    """Write the simulated arena as CSV files and read them with the app's readers, no mapping given."""
    humans, verdicts, _ = simulate_arena(np.random.default_rng(34))
    humans.to_csv(folder / "arena_votes.csv", index=False)
    verdicts.to_csv(folder / "arena_judges.csv", index=False)
    data = analysis_input(
        read_csv(folder / "arena_votes.csv", "arena_votes.csv"), "pairwise", file="arena_votes.csv", matrix=False
    )
    judges = read_judge_file(read_csv(folder / "arena_judges.csv", "arena_judges.csv"), file="arena_judges.csv")
    return data, judges


def averaged_judges(result) -> float:
    """Effective human n of the estimator before issue 34: every verdict of every judge averaged into one
    prediction per item, one tuned weight (same clusters: none, every prompt one pair)."""
    items = result.items
    systems = sorted(set(items["system_low"]) | set(items["system_high"]))
    x, y, yhat = item_design(items, systems), items["human_score"].to_numpy(), items["judge_score"].to_numpy()
    has_h = items["n_human"].to_numpy() > 0
    human = classical_fit(x[has_h], y[has_h], what="human votes")
    mean = skill_fit(x[has_h], y[has_h], yhat[has_h], x[~has_h], yhat[~has_h])
    return result.diagnostics["human_votes"] * float(np.trace(human.cov) / np.trace(mean.cov))


def one_draw(votes: pd.DataFrame, judges, everyone: pd.Series, seed: int) -> dict:
    result = judge_leaderboard(keep_share(votes, SHARE, seed=seed), judges)
    board, d = result.leaderboard.set_index("system"), result.diagnostics
    truth = everyone.reindex(board.index)
    quality = result.quality.table.set_index("judge")
    k = len(board)
    bonferroni = norm.ppf(1 - 0.05 / (k * (k - 1)))
    b_low, b_high = rank_sets(result.fits["ppi"], z=bonferroni)
    row = {
        "draw": seed,
        "ppi_covers": int(((board["ppi_low"] <= truth) & (truth <= board["ppi_high"])).sum()),
        "human_covers": int(((board["human_low"] <= truth) & (truth <= board["human_high"])).sum()),
        "judge_covers": int(((board["judge_low"] <= truth) & (truth <= board["judge_high"])).sum()),
        "ppi_width": float((board["ppi_high"] - board["ppi_low"]).mean()),
        "human_width": float((board["human_high"] - board["human_low"]).mean()),
        "judge_width": float((board["judge_high"] - board["judge_low"]).mean()),
        "narrower": int((board["ppi_high"] - board["ppi_low"] < board["human_high"] - board["human_low"]).sum()),
        "human_votes": d["human_votes"],
        "eff_all": d["effective_human_n"],
        "eff_best_alone": float(quality["effective_human_n_alone"].max()),
        "eff_averaged": averaged_judges(result),
        "rank_set_max_t": float((board["rank_set_high"] - board["rank_set_low"] + 1).mean()),
        "rank_set_bonferroni": float((b_high - b_low + 1).mean()),
        "max_t_z": d["rank_set_z"],
        "bonferroni_z": float(bonferroni),
    }
    for judge, q in quality.iterrows():
        row |= {
            f"{judge}_weight": q["ppi_weight"],
            f"{judge}_alone": q["effective_human_n_alone"],
            f"{judge}_without": q["effective_human_n_without"],
            f"{judge}_agreement": q["agreement"],
            f"{judge}_position_bias": q["position_bias"],
            f"{judge}_position_low": q["position_bias_low"],
            f"{judge}_position_high": q["position_bias_high"],
        }
    return row


def main(draws: int) -> None:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        data, judges = read_as_is(Path(tmp))
    votes = data.judgments.votes
    print(
        f"read as it is: {len(votes)} votes, {votes['prompt_id'].nunique()} conversations; "
        f"notes: {'; '.join(data.judgments.notes)}"
    )
    full = judge_leaderboard(votes, judges)
    for note in full.notes:
        print(f"note: {note}")
    everyone = full.leaderboard.set_index("system")["human_skill"]
    table = pd.DataFrame([one_draw(votes, judges, everyone, seed) for seed in range(draws)])
    pd.set_option("display.width", 200)
    first = table.iloc[0].to_dict()
    print(
        f"\ndraw 0 (seed 0), {SHARE:.0%} of the items' human votes ({int(first['human_votes'])} votes) + every verdict:"
    )
    print(
        f"  prediction-powered intervals hold the all-human skill for {first['ppi_covers']:.0f} of 20 systems "
        f"(human-only {first['human_covers']:.0f}, judge-only {first['judge_covers']:.0f}); narrower than "
        f"human-only for {first['narrower']:.0f} of 20"
    )
    print(
        f"  mean 95% width: prediction-powered {first['ppi_width']:.3f} / human-only {first['human_width']:.3f} / "
        f"judge-only {first['judge_width']:.3f}"
    )
    hv = first["human_votes"]
    print(
        f"  effective human n: all three judges {first['eff_all']:.0f} ({first['eff_all'] / hv:.3f}x), best judge "
        f"alone {first['eff_best_alone']:.0f} ({first['eff_best_alone'] / hv:.3f}x), judges averaged into one "
        f"prediction (before) {first['eff_averaged']:.0f} ({first['eff_averaged'] / hv:.3f}x)"
    )
    for judge in judges.unusable["judge"]:
        print(
            f"  {judge}: agreement {first[f'{judge}_agreement']:.3f}, weight {first[f'{judge}_weight']:.3f}, "
            f"effective human n alone {first[f'{judge}_alone']:.0f}, without it {first[f'{judge}_without']:.0f} "
            f"(dropping it costs {first['eff_all'] - first[f'{judge}_without']:.0f}), position bias "
            f"{first[f'{judge}_position_bias']:.3f} ({first[f'{judge}_position_low']:.3f} to "
            f"{first[f'{judge}_position_high']:.3f}; first-position rate {0.5 + first[f'{judge}_position_bias']:.3f})"
        )
    print(
        f"  rank-sets, mean size: max-t {first['rank_set_max_t']:.2f} (z = {first['max_t_z']:.3f}), Bonferroni "
        f"{first['rank_set_bonferroni']:.2f} (z = {first['bonferroni_z']:.3f})"
    )
    print(f"\nover {draws} draws (seeds 0-{draws - 1}):")
    print(
        f"  systems covered by the prediction-powered intervals: min {table['ppi_covers'].min()}, median "
        f"{table['ppi_covers'].median():.0f} of 20; share of intervals {table['ppi_covers'].sum() / (20 * draws):.3f} "
        f"(human-only {table['human_covers'].sum() / (20 * draws):.3f}, judge-only "
        f"{table['judge_covers'].sum() / (20 * draws):.3f})"
    )
    ratio = table["ppi_width"] / table["human_width"]
    print(
        f"  mean width ratio prediction-powered / human-only: median {ratio.median():.3f} (max {ratio.max():.3f}); "
        f"systems narrower than human-only: median {table['narrower'].median():.0f} of 20 (min "
        f"{table['narrower'].min()})"
    )
    rel = table[["eff_all", "eff_best_alone", "eff_averaged"]].div(table["human_votes"], axis=0)
    print(
        "  effective human n / human votes, median: all three "
        f"{rel['eff_all'].median():.3f}, best alone {rel['eff_best_alone'].median():.3f}, averaged (before) "
        f"{rel['eff_averaged'].median():.3f}; all three >= best alone in "
        f"{(table['eff_all'] >= table['eff_best_alone'] - 1e-6).mean():.3f} of the draws"
    )
    print(
        f"  rank-set mean size: max-t {table['rank_set_max_t'].mean():.2f}, Bonferroni "
        f"{table['rank_set_bonferroni'].mean():.2f}"
    )
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
