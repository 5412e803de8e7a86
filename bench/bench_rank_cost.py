"""The leaderboard's cost estimate against the measured cost, on simulated arenas of growing size.

For each number of votes (50 systems, 20,000 prompts, as the arena of issue 17), the votes are
simulated (``lib.ranking.simulate.simulate_arena``), written as a pairwise CSV and ranked by
``python -m lib rank --sampler laplace`` in a subprocess; the estimate the command prints before the
fit (``lib.ranking.budget.estimate_cost``) is set beside the whole process's wall time and peak
resident memory. Figures, not a test.

    python bench/bench_rank_cost.py [N_VOTES ...]     # default 250000 500000 1000000 2000000
"""

from __future__ import annotations

import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from lib.ranking.simulate import simulate_arena


def main(sizes: list[int]) -> None:
    print(f"{'votes':>10} {'estimated':>34} {'measured s':>11} {'peak GB':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sorted(sizes):  # increasing: the children's peak memory is the latest run's
            votes, _ = simulate_arena(50, 20_000, n, seed=1)
            path = Path(tmp) / f"arena_{n}.csv"
            pd.DataFrame(
                {
                    "prompt": votes["prompt_id"],
                    "system_a": votes["system_a"],
                    "system_b": votes["system_b"],
                    "annotator": votes["annotator_id"],
                    "choice": votes["winner"],
                }
            ).to_csv(path, index=False)
            began = time.perf_counter()
            run = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "lib",
                    "rank",
                    "--input",
                    str(path),
                    "--format",
                    "pairwise",
                    "--sampler",
                    "laplace",
                    "--out",
                    str(Path(tmp) / f"out_{n}"),
                ],
                capture_output=True,
                text=True,
                env={"EVAL_CACHE_DIR": str(Path(tmp) / "cache"), "PATH": "/usr/bin:/bin"},
            )
            seconds = time.perf_counter() - began
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024**2
            estimate = re.search(r"estimated: (.*)", run.stdout)
            print(
                f"{n:>10,} {estimate.group(1) if estimate else 'exit ' + str(run.returncode):>34} "
                f"{seconds:>11.1f} {peak:>8.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [250_000, 500_000, 1_000_000, 2_000_000])
