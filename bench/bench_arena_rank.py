"""Arena size against arena-rank, in the same run (issue 19 item 2): figures printed, not a timed test.

The votes of an arena (:func:`lib.ranking.simulate.simulate_arena`: 100 systems x 20,000 prompts x
500,000 votes, 10% ties) are written to one CSV. Then, one after the other, each in its own process:

1. arena-rank 0.1.1 (LMArena's ranking: Bradley–Terry by L-BFGS in JAX, sandwich 95% intervals),
   installed into a throwaway virtual environment of its own (it pins jax 0.8.1 and numpy 2.3.3,
   which cannot live beside the project's stack): pandas reads the CSV, ``PairDataset.from_pandas``
   and ``BradleyTerry.compute_ratings_and_cis``, as its README does;
2. ``python -m lib rank --likelihood votes --sampler laplace`` on the same file, with an empty cache
   folder (``EVAL_CACHE_DIR``: no fit and no compiled program from an earlier run; the fit is written
   to the cache as a user's is).

Printed: each whole-process wall time (interpreter start-up included) and peak memory (the child's
``ru_maxrss``), the ratio rank / arena-rank (target <= 1.0), the load average beside them, ``rank``'s
phase timings when its ``diagnostics.json`` has them, and the accuracy of both leaderboards against
the simulated skills: Pearson correlation (target >= 0.99 for ``rank``) and how many of the true
skills ``rank``'s 95% intervals cover (target >= 90 of 100), with the slope of each estimate on the
true skills (1: the simulated scale). arena-rank's Bradley–Terry ignores the prompts' discriminations
and scores a tie as half a win, and its ratings are Elo points: its slope is not 1 and its intervals
are not checked.

Usage: ``python bench/bench_arena_rank.py [--quick] [--systems K --prompts J --votes N] [--venv DIR]
[--scaling N,N,...]`` (``--quick``: 30 systems x 2,000 prompts x 50,000 votes). ``--scaling`` then runs ``rank``
alone on arenas of N votes each (prompts in proportion, 25 votes a prompt as the default arena) and prints each
one's wall time and peak memory, and both per million votes (linear growth: the same per million; the
command's own limits raised, ``--max-minutes 120 --max-memory 32``). The virtual environment is made once under
the project's cache folder (``lib.io.paths.cache_dir("bench")``) and reused; it needs PyPI the first time.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PEER = "arena-rank==0.1.1"
QUICK = (30, 2_000, 50_000)

PEER_SCRIPT = """
import json, sys
import pandas as pd
from arena_rank.models.bradley_terry import BradleyTerry
from arena_rank.utils.data_utils import PairDataset

votes = pd.read_csv(sys.argv[1], usecols=["system_a", "system_b", "winner"])
dataset = PairDataset.from_pandas(
    votes,
    competitor_cols=["system_a", "system_b"],
    outcome_col="winner",
    outcome_map=lambda w: {"a": 1.0, "b": 0.0}.get(w, 0.5),
)
model = BradleyTerry(n_competitors=len(dataset.competitors))
results = model.compute_ratings_and_cis(dataset, significance_level=0.05)
board = {
    name: [float(r), float(lo), float(hi)]
    for name, r, lo, hi in zip(
        results["competitors"], results["ratings"], results["rating_lower"], results["rating_upper"], strict=True
    )
}
with open(sys.argv[2], "w") as f:
    json.dump(board, f)
"""


def peer_python(venv: Path) -> Path:
    """The Python of a virtual environment holding :data:`PEER`, made (``python -m venv``, pip) if missing."""
    python = venv.resolve() / "bin" / "python"
    if python.exists() and subprocess.run([python, "-c", "import arena_rank"], capture_output=True).returncode == 0:
        return python
    print(f"making a virtual environment for {PEER} in {venv} (once) ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", venv], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", PEER], check=True)
    return python


def measured(command: list, env: dict | None = None) -> tuple[float, float]:
    """Run ``command`` in the repository to completion: (wall seconds, peak resident memory in GB).

    Raises
    ------
    subprocess.CalledProcessError
        The command failed (its stderr is printed).
    """
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=ROOT)
        _, status, usage = os.wait4(child.pid, 0)  # the child's own resource usage, peak memory included
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode:
            err.seek(0)
            print(err.read(), file=sys.stderr)
            raise subprocess.CalledProcessError(child.returncode, command)
        return wall, usage.ru_maxrss / 2**20


def accuracy(truth, estimate, low=None, high=None) -> str:
    """Pearson correlation of an estimate with the true skills, the slope of the estimate on them (1: same
    scale), and how many true skills [low, high] covers."""
    import numpy as np

    r = float(np.corrcoef(truth, estimate)[0, 1])
    text = f"correlation with the true skills {r:.4f}, slope {np.polyfit(truth, estimate, 1)[0]:.3f}"
    if low is not None:
        covered = int(((low <= truth) & (truth <= high)).sum())
        text += f", 95% intervals cover {covered} of {len(truth)} true skills"
    return text


def load() -> str:
    """The load averages (1, 5, 15 minutes) and the number of cores."""
    return f"load {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} cores"


def main() -> None:
    from lib.io.paths import cache_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=100)
    parser.add_argument("--prompts", type=int, default=20_000)
    parser.add_argument("--votes", type=int, default=500_000)
    parser.add_argument("--quick", action="store_true", help="30 systems x 2,000 prompts x 50,000 votes")
    parser.add_argument("--venv", type=Path, default=cache_dir("bench") / PEER.replace("==", "-"))
    parser.add_argument("--scaling", default="", help="votes of further arenas ranked alone, e.g. 2000000,10000000")
    args = parser.parse_args()
    systems, prompts, n_votes = QUICK if args.quick else (args.systems, args.prompts, args.votes)

    import numpy as np
    import pandas as pd

    from lib.ranking.simulate import simulate_arena

    python = peer_python(args.venv)
    with tempfile.TemporaryDirectory() as folder:
        csv, out = Path(folder) / "arena.csv", Path(folder) / "out"
        votes, truth = simulate_arena(systems, prompts, n_votes, seed=0)
        votes.to_csv(csv, index=False)
        true_skill = pd.Series(truth["skill"], index=truth["systems"])
        print(
            f"arena: {systems} systems x {prompts:,} prompts x {n_votes:,} votes "
            f"({csv.stat().st_size / 2**20:.0f} MB CSV); {load()}",
            flush=True,
        )

        peer_wall, peer_gb = measured([python, "-c", PEER_SCRIPT, csv, Path(folder) / "peer.json"])
        peer_board = json.loads((Path(folder) / "peer.json").read_text())
        peer_rating = np.array([peer_board[s][0] for s in true_skill.index])
        print(f"{PEER}: {peer_wall:.1f} s, peak memory {peer_gb:.2f} GB; {load()}")
        print(f"  {accuracy(true_skill.to_numpy(), peer_rating)}", flush=True)

        env = {**os.environ, "EVAL_CACHE_DIR": str(Path(folder) / "cache")}
        command = [sys.executable, "-m", "lib", "rank", "--input", csv, "--format", "pairwise"]
        command += ["--likelihood", "votes", "--sampler", "laplace", "--out", out]
        ours_wall, ours_gb = measured(command, env=env)
        print(f"python -m lib rank: {ours_wall:.1f} s, peak memory {ours_gb:.2f} GB; {load()}")
        board = pd.read_csv(out / "leaderboard.csv").set_index("system").loc[true_skill.index]
        low, high = board["skill_low"].to_numpy(), board["skill_high"].to_numpy()
        print(f"  {accuracy(true_skill.to_numpy(), board['skill_mean'].to_numpy(), low, high)}")
        timings = json.loads((out / "diagnostics.json").read_text()).get("timings")
        if timings:
            print("  phases: " + ", ".join(f"{phase} {seconds:.1f} s" for phase, seconds in timings.items()))
        print(f"ratio rank / arena-rank: {ours_wall / peer_wall:.2f} (target <= 1.0)", flush=True)
        sizes = [(n_votes, ours_wall, ours_gb)]
        for size in [int(v) for v in args.scaling.split(",") if v]:
            sizes.append((size, *_rank_alone(systems, max(1, size * prompts // n_votes), size, Path(folder))))
        for size, wall, gb in sizes[1:]:
            print(
                f"{size:,} votes: {wall:.1f} s, peak memory {gb:.2f} GB; per million votes {wall / size * 1e6:.1f} s, "
                f"{gb / size * 1e6:.2f} GB (at {n_votes:,}: {sizes[0][1] / n_votes * 1e6:.1f} s, "
                f"{sizes[0][2] / n_votes * 1e6:.2f} GB); {load()}",
                flush=True,
            )


def _rank_alone(systems: int, prompts: int, n_votes: int, folder: Path) -> tuple[float, float]:
    """``rank``'s whole-process wall time and peak memory on a simulated arena of these sizes (empty cache)."""
    from lib.ranking.simulate import simulate_arena

    csv, out = folder / f"arena_{n_votes}.csv", folder / f"out_{n_votes}"
    simulate_arena(systems, prompts, n_votes, seed=1)[0].to_csv(csv, index=False)
    env = {**os.environ, "EVAL_CACHE_DIR": str(folder / f"cache_{n_votes}")}
    command = [sys.executable, "-m", "lib", "rank", "--input", csv, "--format", "pairwise"]
    command += ["--likelihood", "votes", "--sampler", "laplace", "--out", out, "--max-minutes", "120"]
    wall, gb = measured([*command, "--max-memory", "32"], env=env)
    csv.unlink()
    return wall, gb


if __name__ == "__main__":
    main()
