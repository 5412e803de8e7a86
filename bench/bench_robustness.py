"""How many votes hold the order (issue 36 item 3): ``rank --robustness`` and the bar from outside. Figures printed.

Two files, each ranked by ``python -m lib rank --robustness`` in a process of its own with an empty cache
folder (``EVAL_CACHE_DIR``), as a user would:

1. a held-out-arena-like file: :func:`lib.ranking.simulate.simulate_arena`, 20 systems x 5,000 prompts x 60,000
   votes (10% ties, prompts' discriminations log-SD 0.3), the top pair close (skills 1.00 and 0.95), the others
   spread from 0.8 down to -1.5;
2. the bundled PandaLM votes (5 systems, 2,997 votes of 3 annotators).

Printed for each: ``robustness.csv`` (votes to flip each adjacent pair of the top 5, their share, whether the
refit confirmed it, the gap before, predicted by the influences and refitted, refits spent), the wall time of
``rank`` alone and with ``--robustness``, and the bar: the rows ``robustness.csv`` names for the top pair are
dropped from the file (with pandas) and ``rank`` is run again on what is left: does the pair flip?

Usage: ``python bench/bench_robustness.py [--quick] [--top K]`` (``--quick``: the arena with 6,000 votes).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SKILLS = [1.0, 0.95, *[0.8 - 2.3 * k / 17 for k in range(18)]]
"""The simulated arena's skills (logits): a close top pair over 18 systems spread from 0.8 to -1.5."""


def load() -> str:
    """The load averages (1, 5, 15 minutes) and the number of cores."""
    return f"load {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} cores"


def rank(args: list, folder: Path, name: str) -> tuple[float, Path]:
    """``python -m lib rank ARGS --out folder/name`` with an empty cache: (wall seconds, the output folder)."""
    out = folder / name
    env = {**os.environ, "EVAL_CACHE_DIR": str(folder / f"cache-{name}")}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "lib", "rank", *map(str, args), "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        print(done.stdout, done.stderr, file=sys.stderr)
        raise SystemExit(f"rank failed ({done.returncode})")
    return time.perf_counter() - start, out


def without_rows(path: Path, rows: set[int], to: Path) -> None:
    """The file without its 1-based data rows ``rows`` (pandas' row r - 1: blank lines keep their numbers, as in
    the reader's; a quoted cell over several lines is one row), as a user would drop them."""
    import pandas as pd

    file = pd.read_csv(path, dtype=str, keep_default_na=False, skip_blank_lines=False)
    file.drop(index=[r - 1 for r in rows]).to_csv(to, index=False)


def study(title: str, path: Path, options: list, folder: Path, top: int) -> None:
    """Rank, rank with --robustness, then drop the top pair's rows and rank again: print the figures."""
    import pandas as pd

    print(f"\n{title}; {load()}", flush=True)
    plain_s, plain = rank(["--input", path, *options], folder, f"{path.stem}-plain")
    robust_s, robust = rank(
        ["--input", path, *options, "--robustness", "--robustness-top", top], folder, f"{path.stem}-robust"
    )
    board = pd.read_csv(plain / "leaderboard.csv")
    print(f"rank: {plain_s:.0f} s; rank --robustness --robustness-top {top}: {robust_s:.0f} s; {load()}")
    print(board[["system", "skill_mean", "skill_low", "skill_high", "p_best"]].head(top).to_string(index=False))
    table = pd.read_csv(robust / "robustness.csv", dtype={"dropped_rows": str}, keep_default_na=False)
    shown = table.drop(columns=["dropped_rows", "note"])
    print(shown.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    top_pair = table.iloc[0]
    if top_pair["outcome"] != "flips":
        print(f"top pair: {top_pair['note']}")
        return
    rows = {int(r) for r in top_pair["dropped_rows"].split()}
    fewer = folder / f"{path.stem}-without-top-rows.csv"
    without_rows(path, rows, fewer)
    refit_s, refit = rank(["--input", fewer, *options], folder, f"{path.stem}-refit")
    order = pd.read_csv(refit / "leaderboard.csv")["system"].tolist()
    a, b = top_pair["system_a"], top_pair["system_b"]
    flipped = order.index(b) < order.index(a)
    print(
        f"bar: dropping the {len(rows)} rows robustness.csv names for {a} above {b} and running rank on the rest "
        f"({refit_s:.0f} s): {'FLIPS' if flipped else 'does NOT flip'} ({b} ranked {order.index(b) + 1}, "
        f"{a} {order.index(a) + 1})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the arena with 6,000 votes")
    parser.add_argument("--top", type=int, default=5, help="--robustness-top (default 5: 4 pairs)")
    args = parser.parse_args()

    from lib.judgments.datasets import DATASETS
    from lib.ranking.simulate import simulate_arena

    n_votes = 6_000 if args.quick else 60_000
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        arena = folder / "arena.csv"
        votes, _ = simulate_arena(len(SKILLS), 5_000, n_votes, skills=SKILLS, seed=0)
        votes[["prompt_id", "system_a", "system_b", "winner"]].to_csv(arena, index=False)
        study(
            f"simulated arena: {len(SKILLS)} systems x 5,000 prompts x {n_votes:,} votes, top pair 1.00 / 0.95",
            arena,
            ["--format", "pairwise"],
            folder,
            args.top,
        )
        panda = DATASETS["pandalm_pairwise"]
        columns = ",".join(f"{role}={name}" for role, name in panda.columns.items())
        study(
            f"PandaLM ({panda.path.relative_to(ROOT)})",
            panda.path,
            ["--format", "pairwise", "--columns", columns],
            folder,
            args.top,
        )


if __name__ == "__main__":
    main()
