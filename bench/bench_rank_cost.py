"""The leaderboard's time estimate against the measured phases, on the bundled data sets and simulated ones.

Each case runs ``python -m lib rank --out DIR`` in a fresh process with an empty cache (a user's first
run: JAX compiles everything), as a user types it. The estimate the command prints before the fit
(``lib.ranking.budget.estimate_cost``, per phase) is set beside the seconds of each phase it wrote to
``diagnostics.json``, with the process's wall and CPU seconds and the machine's load (1-minute load
average before and after, over 2 cores). The estimate is of an idle machine; on a loaded one a run takes
longer, and the phases are also given idle-equivalent: scaled by the run's CPU / wall seconds (the share of
a core the process got; the fit is mostly one thread, so on an idle machine the ratio is about 1: 0.95 for
PandaLM's votes at a load of 0.8). Figures, not a test; ``--record FILE`` writes every case's sizes, measured
and idle-equivalent phases as JSON (``tests/ranking/rank_phase_times.json`` holds the runs the constants
were calibrated on, and ``tests/ranking/test_budget.py`` checks the estimate against them).

    python bench/bench_rank_cost.py [--record FILE] [CASE ...]      # default: every case but the large arenas
    python bench/bench_rank_cost.py arena_250k arena_1m arena_2m   # the other arenas of issue 17
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from lib.io.paths import DATA_DIR
from lib.ranking.simulate import simulate_arena, simulate_ratings


def _arena(n_prompts: int, n_votes: int) -> Callable[[Path], list[str]]:
    def write(folder: Path) -> list[str]:
        votes, _ = simulate_arena(50, n_prompts, n_votes, seed=1)
        path = folder / "arena.csv"
        votes = votes.rename(columns={"prompt_id": "prompt", "annotator_id": "annotator", "winner": "choice"})
        votes[["prompt", "system_a", "system_b", "annotator", "choice"]].to_csv(path, index=False)
        return ["--input", str(path), "--format", "pairwise"]

    return write


def _ratings(n_systems: int, n_prompts: int) -> Callable[[Path], list[str]]:
    def write(folder: Path) -> list[str]:
        scores, _ = simulate_ratings(n_systems, n_prompts, 20, seed=1)
        path = folder / "ratings.csv"
        scores.rename(columns={"prompt_id": "prompt", "annotator_id": "annotator"}).to_csv(path, index=False)
        return ["--input", str(path), "--format", "ratings"]

    return write


def _bundled(*args: str) -> Callable[[Path], list[str]]:
    return lambda folder: [a.replace("DATA", str(DATA_DIR)) for a in args]


CASES: dict[str, Callable[[Path], list[str]]] = {
    "pandalm_votes": _bundled("--input", "DATA/pandalm_pairwise/pairwise_long.csv", "--format", "pairwise"),
    "pandalm_cells": _bundled(
        "--input", "DATA/pandalm_pairwise/pairwise_long.csv", "--format", "pairwise", "--likelihood", "cells"
    ),
    "hanna_ratings": _bundled(
        "--input", "DATA/hanna_means/mean_human_scores_long.csv", "--format", "ratings", "--criterion", "Relevance"
    ),
    "rome_bestworst": _bundled(
        "--input", "DATA/rome_bestworst/bestworst_long.csv", "--format", "bestworst", "--criterion", "consistency"
    ),
    "ratings_20x200": lambda folder: [*_ratings(20, 200)(folder), "--no-annotator-effect"],  # Laplace: no severities
    "arena_20k": _arena(2_000, 20_000),
    "arena_100k": _arena(20_000, 100_000),
    "hanna_numpyro": lambda folder: [*CASES["hanna_ratings"](folder), "--sampler", "numpyro"],
    "arena_250k": _arena(20_000, 250_000),
    "arena_500k": _arena(20_000, 500_000),
    "arena_1m": _arena(20_000, 1_000_000),
    "arena_2m": _arena(20_000, 2_000_000),
}
LARGE = ("arena_250k", "arena_1m", "arena_2m")
"""The arenas of issue 17 but the 500,000 votes users time (a default case: 5-6 s): run when named (arena_2m: 11 s
and 1.3 GB at load 2, 2026-11-28)."""
DEFAULT = [name for name in CASES if name not in LARGE]


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def run(name: str, folder: Path) -> dict:
    """One case in a fresh process and cache: sizes, estimated and measured phases, wall, CPU and load."""
    args = CASES[name](folder)
    env = dict(os.environ, EVAL_CACHE_DIR=str(folder / "cache"))
    load_before, cpu_before = _load(), resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "lib", "rank", *args, "--out", str(folder / "out")],
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - began
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"{name}: exit {done.returncode}\n{done.stderr[-2000:]}")
    diagnostics = json.loads((folder / "out" / "diagnostics.json").read_text())
    estimate = diagnostics["estimate"]
    cpu = cpu_after.ru_utime + cpu_after.ru_stime - cpu_before.ru_utime - cpu_before.ru_stime
    share = min(1.0, cpu / wall)  # of a core: the idle machine's pace is 1
    return {
        "case": name,
        "sizes": estimate["sizes"],
        "estimated": estimate["phases"],
        "estimated_gb": estimate["memory_gb"],
        "measured": diagnostics["timings"],
        "idle_equivalent": {phase: s * share for phase, s in diagnostics["timings"].items()},
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_gb": cpu_after.ru_maxrss / 1024**2,  # of every case run so far: name cases in growing size
        "load": [load_before, _load()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", metavar="CASE", help=f"of {', '.join(CASES)}")
    parser.add_argument("--record", type=Path, help="write the records (JSON) here")
    args = parser.parse_args()
    if unknown := set(args.cases) - set(CASES):
        parser.error(f"unknown cases: {', '.join(sorted(unknown))}")
    records = []
    columns = (
        ("estimated s", 11),
        ("measured s", 11),
        ("idle-eq. s", 10),
        ("ratio", 6),
        ("wall s", 7),
        ("cpu s", 6),
        ("est. GB", 7),
        ("peak GB", 7),
    )
    print(f"{'case':<16} " + " ".join(f"{name:>{width}}" for name, width in columns) + "  load")
    for name in args.cases or DEFAULT:
        with tempfile.TemporaryDirectory() as tmp:
            r = run(name, Path(tmp))
        records.append(r)
        estimated = sum(r["estimated"].values())
        measured, idle = (sum(v for k, v in r[key].items() if k != "read") for key in ("measured", "idle_equivalent"))
        print(
            f"{name:<16} {estimated:>11.1f} {measured:>11.1f} {idle:>10.1f} {idle / estimated:>6.2f} "
            f"{r['wall_s']:>7.1f} {r['cpu_s']:>6.1f} {r['estimated_gb']:>7.2f} {r['peak_gb']:>7.2f}  "
            f"{r['load'][0]:.1f} -> {r['load'][1]:.1f}",
            flush=True,
        )
        table = pd.DataFrame(
            {"estimated": r["estimated"], "measured": r["measured"], "idle-equivalent": r["idle_equivalent"]}
        ).fillna(0.0)
        print(table.round(2).to_string(), flush=True)
    if args.record:
        args.record.write_text(json.dumps(records, indent=1) + "\n")


if __name__ == "__main__":
    main()
