"""Null calibration of the leaderboard (issue 16, item 11): two systems with no true difference.

For 1 and 3 annotators per prompt and the votes and ratings likelihoods, simulate ``--studies``
studies of ``--prompts`` prompts, fit each with the leaderboard's default sampler
(:data:`lib.ranking.fit.DEFAULT_SAMPLER`) and count a *false detection* when either system's P(best)
exceeds 0.975 (a two-sided 5% decision: P(B better) outside [0.025, 0.975]). Prints the false
detection rate with its Monte-Carlo SE, sqrt(p (1 - p) / studies); the target is at most 6%.
Studies are fitted on the Dask engine (:class:`lib.engine.Engine`, one worker per core).

Votes: each annotator casts one vote (A, B or tie; tie rate 0.1 between equal systems, log alpha_j ~
N(0, 0.3)) on the pair of the prompt. Ratings: each (prompt, system) cell is scored (1-5) by
``annotators`` raters drawn independently from a pool of 10 (:func:`lib.ranking.simulate.simulate_ratings`;
prompt effect SD 0.5, rater severity SD ``--severity-sd``, default 1). ``--annotator-effect`` fits the ratings with the
severities (as ``rank --annotator-effect``); without it the raters' severities are noise the fit
does not model.

    python bench/bench_null_calibration_rank.py [--studies 100] [--prompts 40] [--annotator-effect]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

from lib.engine import Engine
from lib.errors import SettingsError
from lib.formats import DEFAULT_CRITERION
from lib.inputs import analysis_input
from lib.ranking.data import ranking_data
from lib.ranking.fit import DEFAULT_SAMPLER, RankSettings, fit_ranking
from lib.ranking.simulate import simulate_arena, simulate_ratings
from lib.tables import read_csv

LEVEL = 0.975
"""P(best) above this declares a system better (two-sided 5%)."""
VOTE_COLUMNS = {
    "prompt": "prompt_id",
    "system_a": "system_a",
    "system_b": "system_b",
    "annotator": "annotator_id",
    "choice": "winner",
}
SCORE_COLUMNS = {"prompt": "prompt_id", "system": "system", "annotator": "annotator_id", "score": "score"}


def study(likelihood: str, annotators: int, prompts: int, seed: int, severity_sd: float = 1.0):
    """A null study as a user's file would give it, read by the project's readers."""
    if likelihood == "votes":
        votes, _ = simulate_arena(2, prompts, prompts * annotators, skill_sd=0.0, seed=seed)
        votes["prompt_id"] = [f"p{j:05d}" for j in np.repeat(np.arange(prompts), annotators)]
        votes["annotator_id"] = [f"r{k}" for k in np.tile(np.arange(annotators), prompts)]
        votes["criterion"] = DEFAULT_CRITERION
        table = read_csv(votes.to_csv(index=False).encode(), "votes.csv")
        return analysis_input(table, "pairwise", VOTE_COLUMNS, file="votes.csv", merge_redundant=False)
    scores, _ = simulate_ratings(
        2, prompts, max(10, annotators), raters_per_cell=annotators, skill_sd=0.0, severity_sd=severity_sd, seed=seed
    )
    table = read_csv(scores.to_csv(index=False).encode(), "scores.csv")
    return analysis_input(table, "ratings", SCORE_COLUMNS, file="scores.csv", merge_redundant=False)


def p_b_better(task: tuple[str, int, int, int, bool, float]) -> float | None:
    """P(system B better) of one simulated null study, or None when the fit found no mode."""
    likelihood, annotators, prompts, seed, severity, severity_sd = task
    rd = ranking_data(study(likelihood, annotators, prompts, seed, severity_sd), likelihood)
    settings = RankSettings(draws=2000, seed=seed, annotator_effect=severity and likelihood == "ratings")
    try:
        skill = fit_ranking(rd, settings).skill_draws()
    except SettingsError:  # the Laplace fit found no mode: counted apart, not a decision
        return None
    return float(np.mean(skill[:, 1] > skill[:, 0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=100)
    parser.add_argument("--prompts", type=int, default=40)
    parser.add_argument("--likelihoods", nargs="+", choices=("votes", "ratings"), default=["votes", "ratings"])
    parser.add_argument("--annotators", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--annotator-effect", action="store_true", help="ratings: fit the raters' severities")
    parser.add_argument("--severity-sd", type=float, default=1.0, help="ratings: SD of the raters' severities")
    parser.add_argument("--workers", type=int, default=None, help="Dask workers (default: the machine's cores)")
    args = parser.parse_args()
    os.environ["EVAL_CACHE_DIR"] = tempfile.mkdtemp(prefix="null-calibration-")
    print(f"sampler {DEFAULT_SAMPLER}, {args.studies} studies x {args.prompts} prompts per condition", flush=True)
    print("likelihood | annotators per prompt | false detection | MC SE | seconds per study | failed fits")
    with Engine(n_workers=args.workers) as engine:
        for likelihood in args.likelihoods:
            for annotators in args.annotators:
                start = time.perf_counter()
                tasks = [
                    (likelihood, annotators, args.prompts, s, args.annotator_effect, args.severity_sd)
                    for s in range(args.studies)
                ]
                p = dict(engine.map(p_b_better, tasks))
                failed = sorted(s for s, v in p.items() if v is None)
                fitted = np.array([v for v in p.values() if v is not None])
                rate = float(np.mean(np.maximum(fitted, 1 - fitted) > LEVEL))
                print(
                    f"{likelihood} | {annotators} | {rate:.3f} | {np.sqrt(rate * (1 - rate) / len(fitted)):.3f} | "
                    f"{(time.perf_counter() - start) / args.studies:.1f} | {len(failed)} (seeds {failed})",
                    flush=True,
                )


if __name__ == "__main__":
    main()
