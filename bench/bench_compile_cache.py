"""Compile once per machine: whole-process time of a fit (:data:`COMMANDS`: ``rank --sampler laplace``,
or ``fit --sampler numpyro`` with a fixed number of draws) with JAX's persistent compilation cache cold
(empty folder) and warm (the folder a previous process filled), and with the cache off
(``EVAL_JAX_CACHE=0``) for reference; with ``--new-file``, also warm on a new file of the same sizes (the
data set with each trial's or prompt's scores shuffled: the same systems, prompts and cells, other values),
which loads every program the cold run compiled only if the data are arguments of the programs, not
constants in them (issue 35 item 2; ``entries`` then stays the cold run's). Figures, not a test.

Every run is a new ``python -m lib rank|fit`` process on a bundled data set with its own
``EVAL_CACHE_DIR``; a warm run gets a copy of the JAX folder a cold run wrote and nothing else (the
fit cache would answer without compiling). Prints each run's whole-process seconds, the fit's own
``wall_s`` and its ``compile`` phase (``diagnostics.json``), the median of each mode and the ratio
warm / cold.

    python bench/bench_compile_cache.py [--command rank-laplace] [--dataset KEY] [--runs 3]
    python bench/bench_compile_cache.py --command fit-numpyro --runs 1 --new-file
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from lib.cli import EXIT_NOT_CONVERGED
from lib.inference.compile_cache import ENV, KIND
from lib.io.paths import ROOT
from lib.judgments.datasets import DATASETS

COMMANDS: dict[str, tuple[str, list[str], str]] = {
    "rank-laplace": ("rank", ["--sampler", "laplace"], "pandalm_pairwise"),
    "fit-numpyro": (
        "fit",
        ["--sampler", "numpyro", "--chains", "2", "--draws", "300", "--tune", "200"],
        "lamp_rankings",
    ),
}
"""What a run fits, name -> (``python -m lib`` command, its sampler's arguments, the default data set):
Laplace's leaderboard, or the GRM by numpyro with a fixed number of draws (no target ESS)."""


def command(kind: str, key: str, out: Path, path: Path | None = None) -> list[str]:
    """``python -m lib rank|fit`` (:data:`COMMANDS` ``kind``) on the bundled data set ``key`` (or the file
    ``path`` in its format), writing to ``out``."""
    verb, sampler, _ = COMMANDS[kind]
    ds = DATASETS[key]
    columns = ",".join(f"{role}={name}" for role, name in ds.columns.items())
    criterion = ["--criterion", ds.criteria[0]] if len(ds.criteria) > 1 else []
    return [
        *(sys.executable, "-m", "lib", verb, "--input", str(path or ds.path), "--format", ds.fmt),
        *("--columns", columns, *criterion, *sampler, "--out", str(out)),
    ]


def new_file(key: str, path: Path) -> Path:
    """The data set ``key`` with the scores of each trial (else prompt) shuffled (seed 1) written to ``path``:
    a new file of the same sizes (systems, prompts, observed cells), other values."""
    ds = DATASETS[key]
    roles = ds.columns
    score = next(roles[r] for r in ("rank", "score", "choice", "judgment") if r in roles)
    group = roles.get("trial", roles.get("prompt"))
    table = pd.read_csv(ds.path)
    rng = np.random.default_rng(1)
    table[score] = table.groupby(group)[score].transform(lambda x: rng.permutation(x.to_numpy()))
    table.to_csv(path, index=False)
    return path


def run(
    kind: str, key: str, cache: Path, out: Path, *, off: bool = False, path: Path | None = None
) -> tuple[float, float, float]:
    """One whole process: (seconds, the fit's ``wall_s``, its ``compile`` phase in seconds)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_") and k != ENV}
    env["EVAL_CACHE_DIR"] = str(cache)
    if off:
        env[ENV] = "0"
    began = time.perf_counter()
    done = subprocess.run(command(kind, key, out, path), cwd=ROOT, env=env, capture_output=True)
    if done.returncode not in (0, EXIT_NOT_CONVERGED):  # a short fit may not converge: its compile time counts
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)
    seconds = time.perf_counter() - began
    diagnostics = json.loads((out / "diagnostics.json").read_text())
    return seconds, diagnostics["wall_s"], diagnostics["timings"].get("compile", 0.0)


def main(kind: str, key: str, runs: int, new: bool = False) -> None:
    print("$", " ".join(Path(a).name if a == sys.executable else a for a in command(kind, key, Path("OUT"))))
    print(f"load average (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}; a shared machine")
    times: dict[str, list[float]] = {"off": [], "cold": [], "warm": []} | ({"new": []} if new else {})
    print(f"{'run':>4} {'mode':>5} {'process s':>10} {'fit wall_s':>11} {'compile s':>10} {'entries':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs):
            for mode in times:
                cache = Path(tmp) / f"{mode}{i}"
                if mode in ("warm", "new"):  # the JAX folder of this round's cold run, nothing else
                    shutil.copytree(Path(tmp) / f"cold{i}" / KIND, cache / KIND)
                path = new_file(key, Path(tmp) / "new.csv") if mode == "new" else None
                out = Path(tmp) / f"out_{mode}{i}"
                seconds, wall, compiled = run(kind, key, cache, out, off=mode == "off", path=path)
                times[mode].append(seconds)
                n = len(list((cache / KIND).glob("*-cache"))) if (cache / KIND).is_dir() else 0
                print(f"{i + 1:>4} {mode:>5} {seconds:>10.2f} {wall:>11.2f} {compiled:>10.2f} {n:>8}", flush=True)
    med = {mode: statistics.median(t) for mode, t in times.items()}
    print(" ".join(f"median {mode} {s:.2f} s;" for mode, s in med.items()), end=" ")
    print(f"warm / cold {med['warm'] / med['cold']:.2f}, cold / off {med['cold'] / med['off']:.2f}", end="")
    print(f", new file / cold {med['new'] / med['cold']:.2f}" if new else "")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--command", default="rank-laplace", choices=list(COMMANDS))
    parser.add_argument("--dataset", choices=sorted(DATASETS), help="default: the command's (COMMANDS)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--new-file", action="store_true", help="also warm on a new file of the same sizes")
    args = parser.parse_args()
    main(args.command, args.dataset or COMMANDS[args.command][2], args.runs, args.new_file)
