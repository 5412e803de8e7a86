"""Benchmark: the paper's design (20 comparisons x 200 prompts x 3 votes, simulated) fitted by
``python -m lib fit`` with the old default (numpyro, 4 chains x 1000 draws after 500 tuning) and with
today's default, sampled to a target ESS (issue 19 item 3), one process each, one after the other.

Each default runs twice in a cache folder of its own: cold (a new user's first fit: everything compiled)
and warm (a second process on the same machine: JAX's persistent compilation cache, issue 19 item 4,
keeps what it can: both defaults run numpyro's NUTS in chunks by programs it keeps). Prints each
process's whole seconds, its phases, draws per chain, the lowest bulk and tail ESS, the highest R-hat,
divergences and the coverage of the true thetas by the 95% intervals, then the ratios of the times
(target: at most 1/3). Run: ``.venv/bin/python bench/bench_target_ess.py [--seed N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from lib.inference.timings import timings_text
from lib.irt.simulate import simulate_grm
from lib.paths import ROOT

N_COMPARISONS, N_PROMPTS, N_VOTES = 20, 200, 3
RUNS = {
    "old default (4 x 1000 draws, 500 tuning)": ["--draws", "1000", "--tune", "500"],
    "target ESS (default)": [],
}


def paper_votes(seed: int) -> tuple[pd.DataFrame, pd.Series]:
    """Pairwise votes whose net rating per (comparison, prompt) is the GRM's simulated one (3 votes each:
    |u| for the winner, the rest ties), and the true theta by comparison label."""
    sim = simulate_grm(N_COMPARISONS, N_PROMPTS, seed=seed)
    systems = [f"s{k}" for k in range(7)]
    pairs = [(a, b) for i, a in enumerate(systems) for b in systems[i + 1 :]][:N_COMPARISONS]
    rows = []
    for i, (a, b) in enumerate(pairs):
        for j in range(N_PROMPTS):
            u = int(sim.codes[i, j]) - N_VOTES
            votes = ["B" if u > 0 else "A"] * abs(u) + ["tie"] * (N_VOTES - abs(u))
            rows += [
                {"prompt": f"p{j}", "system_a": a, "system_b": b, "annotator": f"r{r}", "choice": v}
                for r, v in enumerate(votes)
            ]
    return pd.DataFrame(rows), pd.Series(sim.theta, index=[f"{b} vs {a}" for a, b in pairs])


def run(csv: Path, extra: list[str], folder: Path, name: str) -> dict:
    """One whole ``python -m lib fit`` process with the cache ``folder``: its seconds and what it wrote."""
    out = folder / name
    env = {**os.environ, "EVAL_CACHE_DIR": str(folder / "cache")}
    argv = [sys.executable, "-m", "lib", "fit", "--input", str(csv), "--format", "pairwise", "--out", str(out)]
    started = time.perf_counter()
    subprocess.run([*argv, *extra], cwd=ROOT, env=env, check=True, capture_output=True)
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "diagnostics": json.loads((out / "diagnostics.json").read_text()),
        "abilities": pd.read_csv(out / "abilities.csv"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    votes, truth = paper_votes(args.seed)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "votes.csv"
        votes.to_csv(csv, index=False)
        for i, (name, extra) in enumerate(RUNS.items()):
            for start in ("cold", "warm"):
                results[f"{name}, {start}"] = run(csv, extra, Path(tmp) / str(i), start)
    for name, r in results.items():
        d, ab = r["diagnostics"], r["abilities"].set_index("comparison")
        theta = truth.reindex(ab.index)
        covered = int(((ab["hdi_low"] <= theta) & (theta <= ab["hdi_high"])).sum())
        print(f"\n{name}: {r['seconds']:.1f} s whole process")
        print(
            f"  draws per chain {d['draws']} x {d['chains']} chains, stopped: {d['stopped']}, "
            f"min bulk ESS {d['ess_bulk_min']:.0f}, min tail ESS {d['ess_tail_min']:.0f}, "
            f"max R-hat {d['rhat_max']:.4f}, divergences {d['divergences']}, "
            f"95% intervals cover {covered} of {len(theta)} true thetas, "
            f"corr(theta mean, truth) {np.corrcoef(ab['theta_mean'], theta)[0, 1]:.3f}"
        )
        print(timings_text(d["timings"], r["seconds"]))
    seconds = [r["seconds"] for r in results.values()]
    for i, start in enumerate(("cold", "warm")):
        print(
            f"\nwhole process, {start}: target ESS / old default {seconds[2 + i] / seconds[i]:.2f} "
            "(target: at most 0.33)"
        )


if __name__ == "__main__":
    main()
