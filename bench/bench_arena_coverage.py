"""Calibration of the leaderboard's intervals on simulated arenas (issue 19, item 2): figures printed, not a test.

Each seed simulates an arena (:func:`lib.ranking.simulate.simulate_arena`: K systems, J prompts, N votes, log
alpha_j ~ N(0, ``--log-alpha-sd``)) and fits it with MAP + Laplace, as ``rank`` does. Printed per seed and in
all: the slope of the posterior means on the true skills (1: the simulated scale), the RMS of the posterior
z = (mean - truth) / sd (1 when calibrated), how many true skills the 95% intervals cover, the mean alpha
against the simulated one, sigma_alpha where the fit learns it (:func:`lib.ranking.model.learns_alpha_spread`)
and the fit's seconds. ``docs/leaderboard.md`` ("The spread of the discriminations") gives the figures.

Usage: ``python bench/bench_arena_coverage.py [--systems 50 --prompts 4000 --votes 100000]
[--log-alpha-sd 0.3] [--seeds 0 1 2 3]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    from lib.inputs import AnalysisInput
    from lib.judgments.formats import read_pairwise
    from lib.ranking.data import ranking_data
    from lib.ranking.fit import RankSettings, fit_ranking
    from lib.ranking.simulate import simulate_arena

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=50)
    parser.add_argument("--prompts", type=int, default=4000)
    parser.add_argument("--votes", type=int, default=100_000)
    parser.add_argument("--log-alpha-sd", type=float, default=0.3)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    args = parser.parse_args()
    roles = {"prompt": "prompt_id", "system_a": "system_a", "system_b": "system_b"}
    roles |= {"annotator": "annotator_id", "choice": "winner"}
    zs, covered, slopes = [], 0, []
    for seed in args.seeds:
        votes, truth = simulate_arena(args.systems, args.prompts, args.votes, log_alpha_sd=args.log_alpha_sd, seed=seed)
        judgments = read_pairwise(votes, roles, file="arena.csv")
        rd = ranking_data(AnalysisInput(None, "pairwise", "arena.csv", None, judgments=judgments))
        start = time.perf_counter()
        fit = fit_ranking(rd, RankSettings(sampler="laplace", draws=1000, seed=seed), use_cache=False)
        seconds = time.perf_counter() - start
        skill = fit.skill_draws()[:, [rd.systems.index(s) for s in truth["systems"]]]
        low, high = np.quantile(skill, [0.025, 0.975], axis=0)
        z = (skill.mean(0) - truth["skill"]) / skill.std(0)
        zs.append(z)
        covered += int(((low <= truth["skill"]) & (truth["skill"] <= high)).sum())
        slopes.append(float(np.polyfit(truth["skill"], skill.mean(0), 1)[0]))
        post = fit.idata.posterior
        spread = f", sigma_alpha {float(post['sigma_alpha'].mean()):.3f}" if "sigma_alpha" in post else ""
        print(
            f"seed {seed}: slope {slopes[-1]:.4f}, RMS z {np.sqrt(np.mean(z**2)):.3f}, mean alpha "
            f"{float(post['alpha'].mean()):.3f} (simulated {truth['alpha'].mean():.3f}){spread}, {seconds:.1f} s",
            flush=True,
        )
    z = np.concatenate(zs)
    print(
        f"{args.systems} systems x {args.prompts:,} prompts x {args.votes:,} votes, log alpha SD "
        f"{args.log_alpha_sd}: 95% intervals cover {covered} of {len(z)} true skills, RMS z "
        f"{np.sqrt(np.mean(z**2)):.3f}, mean slope {np.mean(slopes):.4f}"
    )


if __name__ == "__main__":
    main()
