"""Null calibration of the leaderboard (issue 16, item 11): two systems with no true difference.

For 1 and 3 annotators per prompt and the votes and ratings likelihoods, simulate ``--studies``
studies of ``--prompts`` prompts, fit each with the leaderboard's default sampler
(:data:`lib.ranking.fit.DEFAULT_SAMPLER`) and count a *false detection* when either system's P(best)
exceeds 0.975 (a two-sided 5% decision: P(B better) outside [0.025, 0.975]); the target is at most 6%.
Studies are fitted on the Dask engine (:class:`lib.engine.cluster.Engine`, one worker per core).

A few dozen studies are not enough to tell 6% from 15%: 40 studies of one seed range gave the
ratings 15-17.5%, and a paired t-test on the same 40 studies 17.5%, while over 1,000 studies the
t-test rejects 5.5%. So every study also gets a *reference test* (a paired t-test on the per-prompt
differences: mean score of B minus mean score of A, or B's wins minus A's wins) whose rate is
computed on ``--reference-studies`` cheap simulated studies, and the false detection is estimated
by the difference (control-variate) estimator rate = mean(fit detects) - mean(reference rejects) +
reference rate over the many studies, with SE sqrt(var(detects - rejects) / studies + r (1 - r) /
reference studies): the fit and the test agree on most studies, so this SE is a fraction of the
plain sqrt(p (1 - p) / studies), also printed. The RMS of the posterior z of the gap (mean / SD of
s_B - s_A) is 1 for a calibrated posterior; the plain rate of |z| above the 0.975 quantile of a
Student t with prompts - 1 degrees of freedom (the paired t-test's reference) is printed beside it.

Votes: each annotator casts one vote (A, B or tie; tie rate 0.1 between equal systems, log alpha_j ~
N(0, 0.3)) on the pair of the prompt. Ratings: each (prompt, system) cell is scored (1-5) by
``annotators`` raters drawn independently from a pool of 10 (:func:`lib.ranking.simulate.simulate_ratings`;
prompt effect SD 0.5, log alpha_j SD 0.3, rater severity SD ``--severity-sd``, default 1).
The ratings are fitted as ``rank`` fits them: the severities modelled where the scores identify them
(issue 30: the default, :func:`lib.ranking.data.annotator_design`; here always), by the NUTS a Laplace
fit falls back to, with the command's sampling sizes; ``--no-annotator-effect`` leaves them out (the
default before issue 30: the raters' severities are then noise the fit does not model; Laplace, 2,000
draws), ``--annotator-effect`` asks for them. ``--fixed-alpha`` fits alpha_j = 1 (the
fit does so itself for ratings with one score a cell, :func:`lib.ranking.model.one_score_a_cell`).

    python bench/bench_null_calibration_rank.py [--studies 100] [--prompts 40] [--first-seed 0]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from lib.engine.cluster import Engine
from lib.errors import SettingsError
from lib.inference.settings import sampling_sizes
from lib.inputs import analysis_input
from lib.io.tables import read_csv
from lib.judgments.formats import DEFAULT_CRITERION
from lib.ranking.data import annotator_design_of, ranking_data
from lib.ranking.fit import DEFAULT_SAMPLER, RankSettings, fit_ranking, fitted_sampler, resolve_annotator_effect
from lib.ranking.simulate import simulate_arena, simulate_ratings

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


@dataclass(frozen=True)
class Condition:
    """One row of the benchmark: the design simulated and how it is fitted."""

    likelihood: str
    annotators: int
    prompts: int
    annotator_effect: bool | None = None
    severity_sd: float = 1.0
    fixed_alpha: bool = False


def simulate(c: Condition, seed: int) -> pd.DataFrame:
    """The judgments of one null study, as a user's file holds them."""
    if c.likelihood == "votes":
        votes, _ = simulate_arena(2, c.prompts, c.prompts * c.annotators, skill_sd=0.0, seed=seed)
        votes["prompt_id"] = [f"p{j:05d}" for j in np.repeat(np.arange(c.prompts), c.annotators)]
        votes["annotator_id"] = [f"r{k}" for k in np.tile(np.arange(c.annotators), c.prompts)]
        votes["criterion"] = DEFAULT_CRITERION
        return votes
    scores, _ = simulate_ratings(
        2,
        c.prompts,
        max(10, c.annotators),
        raters_per_cell=c.annotators,
        skill_sd=0.0,
        severity_sd=c.severity_sd,
        seed=seed,
    )
    return scores


def reference_p(c: Condition, raw: pd.DataFrame) -> float:
    """Two-sided p-value of a paired t-test on the per-prompt differences of B against A."""
    if c.likelihood == "votes":
        sign = raw["winner"].map({"a": -1.0, "tie": 0.0, "b": 1.0})
        # votes name A and B in either order: orient them to the alphabetical pair
        sign = sign.where(raw["system_a"] < raw["system_b"], -sign)
        diff = sign.groupby(raw["prompt_id"]).mean()
    else:
        means = raw.pivot_table(index="prompt_id", columns="system", values="score", aggfunc="mean")
        diff = means.iloc[:, 1] - means.iloc[:, 0]
    return float(stats.ttest_1samp(diff.to_numpy(), 0.0).pvalue) if diff.std() > 0 else 1.0


def fitted(task: tuple[Condition, int]) -> tuple[float, float, float] | None:
    """P(system B better), the posterior z of the gap and the reference test's p-value of one
    simulated null study, or None when the fit found no mode."""
    c, seed = task
    raw = simulate(c, seed)
    name = f"{c.likelihood}.csv"
    table = read_csv(raw.to_csv(index=False).encode(), name)
    fmt, columns = ("pairwise", VOTE_COLUMNS) if c.likelihood == "votes" else ("ratings", SCORE_COLUMNS)
    data = analysis_input(table, fmt, columns, file=name, merge_redundant=False)
    rd = ranking_data(data, c.likelihood)
    settings = resolve_annotator_effect(
        RankSettings(seed=seed, annotator_effect=c.annotator_effect), annotator_design_of(data, c.likelihood)
    )
    nuts = fitted_sampler(settings) != DEFAULT_SAMPLER  # its sizes as `rank` takes them; Laplace: 2,000 draws
    settings = dataclasses.replace(
        settings,
        **sampling_sizes("ranking", fitted_sampler(settings), draws=None if nuts else 2000, tune=None, target_ess=None),
    )
    try:
        skill = fit_ranking(rd, settings, fixed_alpha=c.fixed_alpha).skill_draws()
    except SettingsError:  # the Laplace fit found no mode: counted apart, not a decision
        return None
    gap = skill[:, 1] - skill[:, 0]
    return float(np.mean(gap > 0)), float(gap.mean() / gap.std()), reference_p(c, raw)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=100)
    parser.add_argument("--prompts", type=int, default=40)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds of the fitted studies start here")
    parser.add_argument("--reference-studies", type=int, default=4000, help="studies for the reference test's rate")
    parser.add_argument("--likelihoods", nargs="+", choices=("votes", "ratings"), default=["votes", "ratings"])
    parser.add_argument("--annotators", type=int, nargs="+", default=[1, 3])
    parser.add_argument(
        "--annotator-effect",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="ratings: fit the raters' severities (default: as rank, where the scores identify them)",
    )
    parser.add_argument("--severity-sd", type=float, default=1.0, help="ratings: SD of the raters' severities")
    parser.add_argument("--fixed-alpha", action="store_true", help="fit with alpha_j = 1 (a diagnosis)")
    parser.add_argument("--workers", type=int, default=None, help="Dask workers (default: the machine's cores)")
    args = parser.parse_args()
    os.environ.setdefault("EVAL_CACHE_DIR", tempfile.mkdtemp(prefix="null-calibration-"))  # fits of a rerun load
    effect = {None: "auto (the default)", True: "on", False: "off"}[args.annotator_effect]
    print(
        f"sampler {DEFAULT_SAMPLER}, ratings' annotator effect {effect}, {args.studies} studies x {args.prompts} "
        "prompts per condition",
        flush=True,
    )
    print(
        "likelihood | annotators per prompt | false detection (difference estimate) | its SE | plain rate +- SE | "
        "reference test: same studies / many studies | RMS of the posterior z | |z| > t(prompts - 1) | "
        "seconds per study | failed fits"
    )
    with Engine(n_workers=args.workers) as engine:
        for likelihood in args.likelihoods:
            for annotators in args.annotators:
                c = Condition(
                    likelihood, annotators, args.prompts, args.annotator_effect, args.severity_sd, args.fixed_alpha
                )
                start = time.perf_counter()
                seeds = range(args.first_seed, args.first_seed + args.studies)
                out = {seeds[i]: v for i, v in engine.map(fitted, [(c, s) for s in seeds])}
                seconds = (time.perf_counter() - start) / args.studies
                failed = sorted(s for s, v in out.items() if v is None)
                p, z, ref = (np.array(v) for v in zip(*(v for v in out.values() if v is not None), strict=True))
                detects = (np.maximum(p, 1 - p) > LEVEL).astype(float)
                rejects = (ref < 0.05).astype(float)
                # the reference's rate on studies of other seeds than the fitted ones
                many = 10**6 + np.arange(args.reference_studies)
                r = float(np.mean([reference_p(c, simulate(c, int(s))) < 0.05 for s in many]))
                rate = detects.mean() - rejects.mean() + r
                se = np.sqrt(np.var(detects - rejects) / len(p) + r * (1 - r) / len(many))
                plain = detects.mean()
                beyond_t = np.mean(np.abs(z) > stats.t.ppf(LEVEL, args.prompts - 1))
                print(
                    f"{likelihood} | {annotators} | {rate:.3f} | {se:.3f} | "
                    f"{plain:.3f} +- {np.sqrt(plain * (1 - plain) / len(p)):.3f} | {rejects.mean():.3f} / {r:.3f} | "
                    f"{np.sqrt(np.mean(z**2)):.2f} +- {np.sqrt(np.mean(z**2) / (2 * len(z))):.2f} | {beyond_t:.3f} | "
                    f"{seconds:.1f} | {len(failed)} (seeds {failed})",
                    flush=True,
                )


if __name__ == "__main__":
    main()
