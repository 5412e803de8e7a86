"""Ratings whose raters differ in severity: coverage of the leaderboard's skills before and after issue 30 item 3.

Each data set is simulated by :func:`lib.ranking.simulate.simulate_ratings` (1-5 scores, prompt effect SD
0.5, log alpha_j SD 0.3, rater severity SD ``--severity-sd``, default 1; ``--raters-per-cell`` raters of a
pool of ``--raters`` score each (prompt, system) cell, drawn at random or, with ``--confounding`` c > 0,
severe raters leaning towards the best systems) and ranked twice through the leaderboard's run function
(:func:`lib.ranking.run.rank_systems`, as ``rank`` and the page call it) with the command's sampling sizes:

- *before*: ``annotator_effect=False``, the default until issue 30 (the severities not modelled;
  MAP + Laplace);
- *after*: the default, ``RankSettings().annotator_effect`` None: modelled where the scores identify
  them (:func:`lib.ranking.data.annotator_design`; here always), by the NUTS a Laplace fit falls back to.

Prints, per condition, the share of the true skills inside their 95% intervals with its binomial SE, the
RMS of the posterior z ((mean - truth) / sd; 1 when calibrated) and the seconds per fit. Data sets are
fitted on the Dask engine (:class:`lib.engine.cluster.Engine`).

    python bench/bench_ratings_severity.py [--sets 10] [--confounding 0 0.5]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time

import numpy as np

from lib.engine.cluster import Engine
from lib.inference.settings import sampling_sizes
from lib.inputs import analysis_input
from lib.io.tables import read_csv
from lib.ranking.data import annotator_design, ranking_data
from lib.ranking.fit import RankSettings, fitted_sampler, resolve_annotator_effect
from lib.ranking.run import rank_systems
from lib.ranking.simulate import simulate_ratings

COLUMNS = {"prompt": "prompt_id", "system": "system", "annotator": "annotator_id", "score": "score"}
# The annotator effect of each fit: off (the old default) and the default.
RULES = {"before": False, "after": None}


def fitted(task: tuple[dict, float, str, int]) -> tuple[np.ndarray, np.ndarray, float, str]:
    """z of every skill, whether its 95% interval holds the truth, seconds, sampler: one data set, one rule."""
    design, confounding, rule, seed = task
    scores, truth = simulate_ratings(**design, confounding=confounding, seed=seed)
    table = read_csv(scores.to_csv(index=False).encode(), "scores.csv")
    data = analysis_input(table, "ratings", COLUMNS, file="scores.csv", merge_redundant=False)
    settings = RankSettings(annotator_effect=RULES[rule], seed=seed)
    decided = resolve_annotator_effect(settings, annotator_design(ranking_data(data).ratings))
    settings = dataclasses.replace(
        settings, **sampling_sizes(fitted_sampler(decided), draws=None, tune=None, target_ess=None)
    )
    start = time.perf_counter()
    result = rank_systems(data, settings)
    seconds = time.perf_counter() - start
    board = result.leaderboard.set_index("system").loc[truth["systems"]]
    z = ((board["skill_mean"] - truth["skill"]) / board["skill_sd"]).to_numpy()
    covered = ((board["skill_low"] <= truth["skill"]) & (truth["skill"] <= board["skill_high"])).to_numpy()
    return z, covered, seconds, result.fit.diagnostics.sampler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--systems", type=int, default=12)
    parser.add_argument("--prompts", type=int, default=30)
    parser.add_argument("--raters", type=int, default=12)
    parser.add_argument("--raters-per-cell", type=int, default=2)
    parser.add_argument("--severity-sd", type=float, default=1.0)
    parser.add_argument("--confounding", type=float, nargs="+", default=[0.0, 0.5])
    parser.add_argument("--workers", type=int, default=None, help="Dask workers (default: the machine's cores)")
    args = parser.parse_args()
    os.environ.setdefault("EVAL_CACHE_DIR", tempfile.mkdtemp(prefix="ratings-severity-"))
    design = {
        "n_systems": args.systems,
        "n_prompts": args.prompts,
        "n_annotators": args.raters,
        "raters_per_cell": args.raters_per_cell,
        "severity_sd": args.severity_sd,
    }
    print(
        f"{args.sets} data sets x {args.systems} systems, {args.prompts} prompts, {args.raters} raters "
        f"({args.raters_per_cell} a cell), severity SD {args.severity_sd:g}; seeds {args.first_seed}-"
        f"{args.first_seed + args.sets - 1}",
        flush=True,
    )
    print("confounding | rule | sampler | 95% intervals holding the truth (+- binomial SE) | RMS z | s per fit")
    seeds = range(args.first_seed, args.first_seed + args.sets)
    with Engine(n_workers=args.workers) as engine:
        for confounding in args.confounding:
            for rule in RULES:
                tasks = [(design, confounding, rule, s) for s in seeds]
                out = [v for _, v in engine.map(fitted, tasks)]
                z = np.concatenate([o[0] for o in out])
                covered = np.concatenate([o[1] for o in out])
                share = covered.mean()
                samplers = "/".join(sorted({o[3] for o in out}))
                print(
                    f"{confounding:g} | {rule} | {samplers} | {covered.sum()} of {len(covered)} = {share:.3f} +- "
                    f"{np.sqrt(share * (1 - share) / len(covered)):.3f} | {np.sqrt(np.mean(z**2)):.2f} | "
                    f"{np.mean([o[2] for o in out]):.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
