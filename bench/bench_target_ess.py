"""Benchmark: the default ``python -m lib fit`` (numpyro sampled to a target ESS, issue 19 item 3; chains
warmed up from jittered points around the priors' centres, issue 29 item 1 / issue 35 item 2) against the
old defaults on the paper's design: 4 chains x 1000 draws after 500 tuning iterations (``--draws 1000
--tune 500``, the default from 2026-11-22, commit 3737bd7, until the target ESS) and after 1000 (``--tune
1000``, the first default, and issue 35's "4 chains x 1000 x 1000"); the paper's design is 20 comparisons
x 200 prompts x 3 votes, simulated. Then the default on mirt's Science data.

Paper's design: each setting runs in a cache folder of its own, one whole process each: cold (a new user's
first fit: everything compiled), then ``--rounds`` warm rounds (a later process on the same machine: JAX's
persistent compilation cache, issue 19 item 4), the settings one after the other in each round, so that a
shared machine's load falls on all of them alike. Prints each process's whole seconds, its phases, draws
per chain, the lowest bulk and tail ESS, the highest R-hat, divergences and the coverage of the true thetas
by the 95% intervals, then the ratios of the whole-process times (warm: the median over the rounds; target:
at most 1/2, with R-hat at most 1.01, no divergences and bulk ESS at least 400 at the default).

Science (392 persons x 4 items, mirt's reference, ``data/irt_reference``): the default fit's slopes
against mirt's 95% intervals (estimate +- 1.96 SE), with its R-hat, ESS, divergences and seconds.

Run: ``.venv/bin/python bench/bench_target_ess.py [--seed N] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from lib.inference.convergence import RHAT_MAX
from lib.inference.settings import TARGET_ESS
from lib.inference.timings import timings_text
from lib.io.paths import DATA_DIR, ROOT
from lib.irt.simulate import simulate_grm
from lib.judgments.datasets import DATASETS

N_COMPARISONS, N_PROMPTS, N_VOTES = 20, 200, 3
OLD, OLD_1000, NEW = (
    "old default (4 x 1000 draws, 500 tuning)",
    "first default (4 x 1000 draws, 1000 tuning)",
    "default (target ESS)",
)
RUNS = {OLD: ["--draws", "1000", "--tune", "500"], OLD_1000: ["--draws", "1000", "--tune", "1000"], NEW: []}
MOST_RATIO = 0.5
"""Issue 35 item 2: the default's whole process at most half the old default's."""


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


def run(input_args: list[str], extra: list[str], folder: Path, name: str) -> dict:
    """One whole ``python -m lib fit`` process with the cache ``folder``: its seconds, exit status and files."""
    out = folder / name
    env = {**os.environ, "EVAL_CACHE_DIR": str(folder / "cache")}
    argv = [sys.executable, "-m", "lib", "fit", *input_args, "--out", str(out), *extra]
    started = time.perf_counter()
    status = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True).returncode
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "status": status,
        "diagnostics": json.loads((out / "diagnostics.json").read_text()),
        "abilities": pd.read_csv(out / "abilities.csv"),
        "prompts": pd.read_csv(out / "prompts.csv"),
    }


def chains_line(r: dict) -> str:
    d = r["diagnostics"]
    return (
        f"exit {r['status']}, draws per chain {d['draws']} x {d['chains']} chains, stopped: {d['stopped']}, "
        f"min bulk ESS {d['ess_bulk_min']:.0f}, min tail ESS {d['ess_tail_min']:.0f}, "
        f"max R-hat {d['rhat_max']:.4f}, divergences {d['divergences']}, converged {d['converged']}"
    )


def paper_design(seed: int, tmp: Path, rounds: int) -> dict[str, list[dict]]:
    """Every setting cold, then ``rounds`` warm rounds of every setting, on the paper's design; prints each
    run. Returns the runs of each setting and start ("name, cold" or "name, warm"), in the rounds' order."""
    votes, truth = paper_votes(seed)
    csv = tmp / "votes.csv"
    votes.to_csv(csv, index=False)
    runs: dict[str, list[dict]] = {}
    for k, (i, (name, extra)) in itertools.product(range(rounds + 1), enumerate(RUNS.items())):
        start = "cold" if k == 0 else "warm"
        r = run(["--input", str(csv), "--format", "pairwise"], extra, tmp / str(i), f"round{k}")
        runs.setdefault(f"{name}, {start}", []).append(r)
        ab = r["abilities"].set_index("comparison")
        theta = truth.reindex(ab.index)
        covered = int(((ab["hdi_low"] <= theta) & (theta <= ab["hdi_high"])).sum())
        print(f"\npaper's design, {name}, {start}: {r['seconds']:.1f} s whole process (load {os.getloadavg()[0]:.1f})")
        print(
            f"  {chains_line(r)}, 95% intervals cover {covered} of {len(theta)} true thetas, "
            f"corr(theta mean, truth) {np.corrcoef(ab['theta_mean'], theta)[0, 1]:.3f}"
        )
        print(timings_text(r["diagnostics"]["timings"], r["seconds"]))
    return runs


def science(tmp: Path) -> None:
    """The default fit of mirt's Science data against mirt's 95% intervals of the slopes."""
    ref = json.loads((DATA_DIR / "irt_reference" / "reference_estimates.json").read_text())["Science_GRM_mirt"]
    ds = DATASETS["science_mirt"]
    columns = ",".join(f"{role}={name}" for role, name in ds.columns.items())
    r = run(["--input", str(ds.path), "--format", ds.fmt, "--columns", columns], [], tmp / "science", "default")
    alpha = r["prompts"].set_index("prompt_id")["alpha_mean"]
    print(f"\nmirt's Science data, {NEW}: {r['seconds']:.1f} s whole process\n  {chains_line(r)}")
    inside = 0
    for item in ("Comfort", "Work", "Future", "Benefit"):
        a, se = ref[item]["a1"], ref[item]["SE_Louis"]["a1"]
        ok = a - 1.96 * se <= alpha[item] <= a + 1.96 * se
        inside += ok
        print(f"  alpha {item}: {alpha[item]:.3f}, mirt {a:.3f} +- {1.96 * se:.3f}: {'inside' if ok else 'OUTSIDE'}")
    print(f"  {inside} of 4 slopes inside mirt's 95% intervals")
    print(timings_text(r["diagnostics"]["timings"], r["seconds"]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=1, help="warm rounds of every setting (the median is compared)")
    args = ap.parse_args()
    print(f"load average (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        results = paper_design(args.seed, tmp, args.rounds)
        science(tmp)
    print(f"\nload average (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for start, baseline in itertools.product(("cold", "warm"), (OLD, OLD_1000)):
        olds, news = results[f"{baseline}, {start}"], results[f"{NEW}, {start}"]
        ratios = [new["seconds"] / old["seconds"] for old, new in zip(olds, news, strict=True)]
        d = news[-1]["diagnostics"]  # a seed's draws are the same in every round
        checks = (
            d["rhat_max"] <= RHAT_MAX
            and d["divergences"] == 0
            and min(d["ess_bulk_min"], d["ess_tail_min"]) >= TARGET_ESS
        )
        print(
            f"\nwhole process, {start}: default / {baseline} {np.median(ratios):.2f} (the median of the rounds': "
            + ", ".join(f"{n['seconds']:.1f} s / {o['seconds']:.1f} s" for o, n in zip(olds, news, strict=True))
            + f"; target: at most {MOST_RATIO}); the default's "
            f"R-hat <= {RHAT_MAX}, no divergences, bulk and tail ESS >= {TARGET_ESS}: {'yes' if checks else 'NO'}"
        )


if __name__ == "__main__":
    main()
