"""Benchmark of the ranking model (issue 11, "Scale"): figures printed, not a timed test.

1. Arena: 100 systems x 20,000 prompts x 500,000 votes (votes likelihood, MAP + Laplace). The votes
   are written to a CSV first; then a fresh process reads it (``lib.io.tables.read_csv`` and the
   pairwise reader), fits and computes a leaderboard (skill mean, sd, 95% interval, rank interval);
   its whole wall time and peak memory are reported. Targets: <= 60 s, <= 4 GB, reading <= 5 s.
2. HANNA (11 systems, 96 prompts, ratings likelihood): full NUTS (numpyro, 4 x 1000 draws); target
   <= 30 s with min bulk ESS >= 400.

Usage: ``python bench/bench_arena.py [--systems 100 --prompts 20000 --votes 500000] [--skip-hanna]``
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def run_arena(csv: Path) -> None:
    """The measured process: read, fit, leaderboard; prints stage times and peak memory."""
    start = time.perf_counter()
    import numpy as np

    from lib.inputs import AnalysisInput
    from lib.judgments.formats import read_pairwise
    from lib.ranking.data import ranking_data
    from lib.ranking.fit import RankSettings, fit_ranking

    t = time.perf_counter()
    from lib.io.tables import read_csv

    table = read_csv(csv, csv.name)
    print(f"read_csv: {time.perf_counter() - t:.1f} s ({len(table)} rows)")
    t = time.perf_counter()
    judgments = read_pairwise(
        table,
        {
            "prompt": "prompt_id",
            "system_a": "system_a",
            "system_b": "system_b",
            "annotator": "annotator_id",
            "choice": "winner",
        },
        file=csv.name,
    )
    print(f"pairwise reader: {time.perf_counter() - t:.1f} s")
    # The votes likelihood needs no rating matrix (a dense pairs x prompts matrix would not fit here).
    rd = ranking_data(AnalysisInput(None, "pairwise", csv.name, None, judgments=judgments))
    print(f"ready to fit: {time.perf_counter() - start:.1f} s (imports, reading, ranking data)")
    stages = []
    fit = fit_ranking(
        rd,
        RankSettings(sampler="laplace", draws=1000),
        use_cache=False,
        progress=lambda f, m: stages.append((time.perf_counter() - start, m.split(" · ")[0])),
    )
    seen = set()
    for when, what in stages:
        if what not in seen:
            seen.add(what)
            print(f"  {when:6.1f} s  {what}")
    skill = fit.skill_draws()
    ranks = (-skill).argsort(1).argsort(1) + 1
    low, high = np.quantile(skill, [0.025, 0.975], axis=0)
    rank_low, rank_high = np.quantile(ranks, [0.025, 0.975], axis=0)
    best = int(skill.mean(0).argmax())
    print(
        f"leaderboard: best {rd.systems[best]} skill {skill.mean(0)[best]:.3f} "
        f"[{low[best]:.3f}, {high[best]:.3f}], rank [{rank_low[best]:.0f}, {rank_high[best]:.0f}]; "
        f"mean 95% width {np.mean(high - low):.3f} logits"
    )
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(
        f"whole process: {time.perf_counter() - start:.1f} s after interpreter start-up, peak memory {peak_gb:.2f} GB"
    )


def bench_hanna() -> None:
    from lib.inputs import bundled_input
    from lib.ranking.data import ranking_data
    from lib.ranking.fit import RankSettings, fit_ranking

    rd = ranking_data(bundled_input("hanna_means", "Relevance", merge_redundant=False))
    fit = fit_ranking(rd, RankSettings(sampler="numpyro"), use_cache=False)
    d = fit.diagnostics
    print(
        f"HANNA (Relevance, ratings likelihood, numpyro 4 x 1000): {d.wall_s:.1f} s, min bulk ESS "
        f"{d.ess_bulk_min:.0f}, R-hat max {d.rhat_max:.3f}, divergences {d.divergences}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=100)
    parser.add_argument("--prompts", type=int, default=20_000)
    parser.add_argument("--votes", type=int, default=500_000)
    parser.add_argument("--skip-hanna", action="store_true")
    parser.add_argument("--run", type=Path, help=argparse.SUPPRESS)  # the measured child process
    args = parser.parse_args()
    if args.run:
        run_arena(args.run)
        return
    from lib.ranking.simulate import simulate_arena

    with tempfile.TemporaryDirectory() as folder:
        csv = Path(folder) / "arena.csv"
        votes, _ = simulate_arena(args.systems, args.prompts, args.votes, seed=0)
        votes.to_csv(csv, index=False)
        print(
            f"arena: {args.systems} systems x {args.prompts} prompts x {args.votes} votes "
            f"({csv.stat().st_size / 2**20:.0f} MB CSV)"
        )
        t = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--run", str(csv)], check=True, env=os.environ.copy())
        print(f"whole process including interpreter start-up: {time.perf_counter() - t:.1f} s")
    if not args.skip_hanna:
        bench_hanna()


if __name__ == "__main__":
    main()
