"""Fast-mode leave-one-out SE curve on bundled hanna_means (one criterion, 55 comparisons x 96 prompts).

Prints wall seconds (target: under 30 s on the 2-core machine), the mean SE at k = 24 of each
informed strategy against random, and the prompts each needs for the default target SE.
Run: ``.venv/bin/python bench/bench_selection.py [criterion]``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.inputs import bundled_input
from lib.selection.analysis import run
from lib.selection.settings import DEFAULT_TARGET_SE
from lib.selection.strategies import STRATEGIES

K_GRID = [5, 8, 12, 16, 24, 32, 48, 64, 96]


def main(criterion: str = "Relevance") -> None:
    # Merging off, as issue 3 asks, so the curve is over all 96 prompts whatever the merging rule.
    rm = bundled_input("hanna_means", criterion, merge_redundant=False).matrix
    start = time.perf_counter()
    result = run(rm, STRATEGIES, k_grid=K_GRID, n_random=50, seed=0)
    curve = result.curve
    wall = time.perf_counter() - start
    at24 = curve.summary[curve.summary["k"] == 24].set_index("strategy")["se_mean"]
    print(
        f"hanna_means / {criterion}: {rm.shape[0]} comparisons x {rm.shape[1]} prompts, "
        f"{len(STRATEGIES)} strategies, k grid {K_GRID}, 50 random draws"
    )
    print(f"fast-mode curve wall seconds: {wall:.1f} (target < 30)")
    print("mean SE at k = 24:")
    for name, se in at24.items():
        ratio = se / at24["random"]
        print(f"  {name:10s} {se:.3f}  ({ratio:.2f} x random)")
    needed = result.needed(DEFAULT_TARGET_SE).set_index("strategy")["k_needed"]
    print(
        f"prompts needed for SE <= {DEFAULT_TARGET_SE} (k grid above): "
        + ", ".join(f"{name} {k}" for name, k in needed.items())
    )


if __name__ == "__main__":
    main(*sys.argv[1:])
