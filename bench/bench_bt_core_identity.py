"""Before and after one Bradley–Terry core (issue 32 item 2): every Bradley–Terry number the tool gives on the
bundled data sets, written by one checkout and compared with another's.

``--write DIR`` (run with the checkout to snapshot first on ``PYTHONPATH``) writes, for every bundled data set
with votes and each of its criteria, the baseline (:func:`lib.ranking.baseline.bradley_terry`, plain and
prompt-clustered), the outputs of ``python -m lib rank`` with its defaults (``leaderboard.csv``,
``win_matrix.csv``, ``diagnostics.json`` without its timings), the judges' analysis of PandaLM
(:func:`lib.judges.run.judge_leaderboard`: all human votes, and 15% of them with every verdict), the simulation
bench (:func:`lib.ranking.simulate.bt_laplace` draws, :func:`lib.ranking.simulate.simulate_active_vs_uniform`)
and the judges' simulation (:func:`lib.judges.simulate.coverage_study`).

``--compare BEFORE AFTER`` compares two such folders: every file, every column; text exactly, numbers to a
relative and absolute tolerance of 1e-9 (:data:`TOLERANCE`: the solvers differ in their iterations, not in
what they solve), and prints the largest difference of each file.

Usage::

    git worktree add --detach /tmp/bt-before <commit before the core>
    PYTHONPATH=/tmp/bt-before python bench/bench_bt_core_identity.py --write /tmp/bt-id/before
    PYTHONPATH=$PWD python bench/bench_bt_core_identity.py --write /tmp/bt-id/after
    python bench/bench_bt_core_identity.py --compare /tmp/bt-id/before /tmp/bt-id/after
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

TOLERANCE = 1e-9
"""Relative and absolute tolerance of a number (ratings in Elo points, skills in logits, probabilities)."""
TIMED = ("timings", "wall_s")
"""Keys of ``diagnostics.json`` that hold seconds: left out (they differ between any two runs)."""


def write(out: Path) -> None:
    """Write every Bradley–Terry number of the checkout on ``PYTHONPATH`` to ``out``."""
    from lib.judgments.datasets import DATASETS, load_judgments
    from lib.ranking.baseline import bradley_terry

    out.mkdir(parents=True, exist_ok=True)
    for key, ds in DATASETS.items():
        if ds.fmt in ("ratings", "responses"):
            continue
        votes = load_judgments(key).votes
        for criterion in sorted(votes["criterion"].unique()):
            these = votes[votes["criterion"] == criterion].reset_index(drop=True)
            bradley_terry(these).to_csv(out / f"bt_{key}_{criterion}.csv", index=False)
            bradley_terry(these, cluster="prompt_id").to_csv(out / f"bt_{key}_{criterion}_clustered.csv", index=False)
            _rank(key, criterion, out / f"rank_{key}_{criterion}")
    _judges(out)
    _simulations(out)


def _rank(key: str, criterion: str, folder: Path) -> None:
    """``python -m lib rank`` with its defaults on a bundled data set, in a fresh cache (no earlier fit read)."""
    from lib.judgments.datasets import DATASETS

    ds = DATASETS[key]
    columns = ",".join(f"{role}={column}" for role, column in ds.columns.items())
    command = [sys.executable, "-m", "lib", "rank", "--input", str(ds.path), "--format", ds.fmt]
    command += ["--columns", columns, "--criterion", criterion, "--out", str(folder), "--overwrite"]
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "EVAL_CACHE_DIR": cache}
        subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    diagnostics = json.loads((folder / "diagnostics.json").read_text())
    for name in TIMED:
        diagnostics.pop(name, None)
    (folder / "diagnostics.json").write_text(json.dumps(diagnostics, indent=1, sort_keys=True))


def _judges(out: Path) -> None:
    """The judges' analysis of PandaLM: all human votes, and 15% of them (seed 0) beside every verdict."""
    from lib.inputs import analysis_input
    from lib.io.paths import DATA_DIR
    from lib.io.tables import read_csv
    from lib.judges.read import read_judge_file
    from lib.judges.run import judge_leaderboard, keep_share
    from lib.judgments.datasets import DATASETS

    ds = DATASETS["pandalm_pairwise"]
    humans = analysis_input(read_csv(ds.path, ds.path.name), ds.fmt, ds.columns, file=ds.path.name, matrix=False)
    path = DATA_DIR / "pandalm_pairwise" / "judge_votes_long.csv"
    judges = read_judge_file(read_csv(path, path.name), file=path.name)
    for name, votes in (("all", humans.judgments.votes), ("share15", keep_share(humans.judgments.votes, 0.15))):
        result = judge_leaderboard(votes, judges)
        result.leaderboard.to_csv(out / f"judges_{name}_leaderboard.csv", index=False)
        result.quality.table.to_csv(out / f"judges_{name}_quality.csv", index=False)
        (out / f"judges_{name}_diagnostics.json").write_text(json.dumps(result.diagnostics, indent=1, sort_keys=True))


def _simulations(out: Path) -> None:
    """The simulation bench's Bradley–Terry: Laplace draws, the active-against-uniform study, the judges' one."""
    from lib.judges.simulate import coverage_study
    from lib.ranking.simulate import bt_laplace, simulate_active_vs_uniform, simulate_arena

    votes, truth = simulate_arena(6, 40, 400, seed=3)
    draws = bt_laplace(votes, truth["systems"], draws=200, seed=1)
    pd.DataFrame(draws, columns=truth["systems"]).to_csv(out / "sim_bt_laplace.csv", index=False)
    sim = simulate_active_vs_uniform(6, 40, start=30, batch=10, max_votes=600, seed=5)
    sim.trace.to_csv(out / "sim_active_trace.csv", index=False)
    coverage_study(4, seed=2).to_csv(out / "sim_judges_coverage.csv", index=False)


def compare(before: Path, after: Path) -> bool:
    """Print each file's largest difference; True when every file of ``before`` is in ``after`` and agrees."""
    ok = True
    for path in sorted(p for p in before.rglob("*") if p.is_file()):
        other = after / path.relative_to(before)
        if not other.exists():
            print(f"MISSING {path.relative_to(before)}")
            ok = False
            continue
        largest, same = _differences(path, other)
        ok &= same
        name = path.relative_to(before)
        print(f"{'same' if same else 'DIFFERENT':9} {name!s:55} largest difference {largest:.2e}")
    return ok


def _differences(a: Path, b: Path) -> tuple[float, bool]:
    """The largest absolute difference of two CSV or JSON files' numbers, and whether they agree."""
    if a.suffix == ".json":
        x, y = _flat(json.loads(a.read_text())), _flat(json.loads(b.read_text()))
        if x.keys() != y.keys():
            return float("inf"), False
        left, right = pd.Series(x, dtype=object), pd.Series(y, dtype=object)
        return _columns(left.to_frame(), right.to_frame())
    left, right = pd.read_csv(a), pd.read_csv(b)
    if list(left.columns) != list(right.columns) or left.shape != right.shape:
        return float("inf"), False
    return _columns(left, right)


def _columns(left: pd.DataFrame, right: pd.DataFrame) -> tuple[float, bool]:
    largest, same = 0.0, True
    for column in left.columns:
        u, v = left[column], right[column]
        numbers = pd.to_numeric(u, errors="coerce"), pd.to_numeric(v, errors="coerce")
        if numbers[0].notna().sum() == u.notna().sum() and u.notna().any():
            x, y = numbers[0].to_numpy(float), numbers[1].to_numpy(float)
            both = np.isfinite(x) & np.isfinite(y)
            same &= bool(np.array_equal(np.isfinite(x), np.isfinite(y)))
            same &= bool(np.allclose(x[both], y[both], rtol=TOLERANCE, atol=TOLERANCE))
            largest = max(largest, float(np.abs(x[both] - y[both]).max(initial=0.0)))
        else:
            same &= bool(((u.isna() & v.isna()) | (u.astype(str) == v.astype(str))).all())
    return largest, same


def _flat(value, prefix: str = "") -> dict:
    """A nested JSON value as ``{path: leaf}``."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _flat(item, f"{prefix}{key}.").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in _flat(item, f"{prefix}{i}.").items()}
    return {prefix.rstrip("."): value}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", type=Path, metavar="DIR")
    group.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.write:
        write(args.write)
        print(f"wrote {args.write}")
    elif not compare(*args.compare):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
