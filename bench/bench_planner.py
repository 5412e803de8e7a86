"""The study planner on Dask: 1,000 simulated studies of a 20-comparison x 50-prompt design, each
analysed by the project's GRM at its MAP point (``grm_map``, which also analyses every study's null
twin for its calibration, so two MAP fits per study), and the speed-up of 2 workers over 1.

Prints wall seconds (target: <= 60 s for the 1,000 studies on the 2-core machine) with and without
the one-off costs (starting the cluster, each worker compiling its MAP solver), and the 2-vs-1
worker speed-up on warm workers (target >= 1.7x). Other processes on the machine lower both.
Run: ``.venv/bin/python bench/bench_planner.py [studies]``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.engine.cluster import Engine
from lib.planning.design import Assumptions, Design
from lib.planning.power import iter_plan

ASSUMPTIONS = Assumptions(n_systems=7, comparisons=20, effect=0.3)
DESIGN = Design(50, 1, "random", "grm_map")


def _studies(engine: Engine, replicates: int, seed: int, batch: int) -> float:
    """Wall seconds to simulate and analyse ``replicates`` studies (in a fresh plan cache: never a hit)."""
    with tempfile.TemporaryDirectory() as cache:
        os.environ["EVAL_CACHE_DIR"] = cache
        start = time.perf_counter()
        rows = list(iter_plan(ASSUMPTIONS, [DESIGN], replicates=replicates, seed=seed, engine=engine, batch=batch))
        wall = time.perf_counter() - start
    row = rows[0][0].iloc[0]
    print(
        f"    power at |z| > {row['critical_z']:.2f} {row['calibrated_power']:.3f} "
        f"+- {row['calibrated_power_mc_se']:.3f} "
        f"(calibration factor {row['calibration_factor']:.2f}); at the nominal level {row['power']:.3f}, whose "
        f"intervals excluded 0 in {row['false_detection']:.1%} of null comparisons"
    )
    return wall


def main(studies: int = 1000) -> None:
    print(
        f"{studies} studies of {DESIGN.prompts} prompts x 20 comparisons x {DESIGN.annotators} annotator, "
        f"analysis {DESIGN.analysis}"
    )
    probe = max(studies // 4, 50)
    per_study = {}
    for workers in (1, 2):
        start = time.perf_counter()
        with Engine(n_workers=workers) as engine:
            started = time.perf_counter() - start
            # Small tasks first, so that every worker compiles its MAP solver before the timing.
            warm = _studies(engine, 4 * workers, seed=99, batch=1)
            print(f"  {workers} worker(s): cluster start {started:.1f} s, warm-up (compile) {warm:.1f} s")
            per_study[workers] = _studies(engine, probe, seed=0, batch=25) / probe
            print(f"  {workers} worker(s): {per_study[workers] * 1000:.0f} ms per study ({probe} warm studies)")
            if workers == 2:
                wall = _studies(engine, studies, seed=1, batch=25)
                print(
                    f"  2 workers: {studies} studies in {wall:.1f} s warm, {wall + started + warm:.1f} s "
                    "with cluster start and compile (target <= 60 s)"
                )
    print(f"speed-up of 2 workers over 1: {per_study[1] / per_study[2]:.2f}x (target >= 1.7x)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
