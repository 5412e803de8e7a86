"""Benchmark: fit the paper's synthetic design (20 comparisons x 200 prompts) with every sampler.

Prints wall seconds, min bulk ESS, max R-hat, divergences and effective samples per second, with
the ratio against PyMC's own NUTS sampler measured in the same run. Run: ``make bench`` or
``.venv/bin/python bench/bench_samplers.py [--draws N --tune N --chains N]``.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd

from lib.irt.fit import fit_grm
from lib.irt.settings import SAMPLERS, FitSettings
from lib.irt.simulate import simulate_grm
from lib.judgments.ratings import RatingMatrix


def paper_design(seed: int = 0) -> tuple[RatingMatrix, np.ndarray]:
    sim = simulate_grm(20, 200, seed=seed)
    ids = np.array([f"p{j}" for j in range(200)])
    rm = RatingMatrix(
        u=sim.codes - 3.0,
        comparisons=pd.DataFrame({"comparison": [f"c{i}" for i in range(20)], "system_a": "a", "system_b": "b"}),
        prompt_ids=ids,
        categories=np.arange(-3, 4),
        groups=pd.DataFrame({"prompt_id": ids, "group": ids}),
        n_votes=np.full((20, 200), 3),
    )
    return rm, sim.theta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chains", type=int, default=FitSettings.chains)
    ap.add_argument("--draws", type=int, default=FitSettings.draws)
    ap.add_argument("--tune", type=int, default=FitSettings.tune)
    ap.add_argument("--samplers", default=",".join(SAMPLERS))
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    rm, truth = paper_design()
    rows = []
    for sampler in args.samplers.split(","):
        settings = FitSettings(sampler=sampler, chains=args.chains, draws=args.draws, tune=args.tune)
        fit = fit_grm(rm, settings, use_cache=False)
        d = fit.diagnostics
        theta = fit.idata.posterior["theta"].mean(("chain", "draw")).to_numpy()
        rows.append(
            {
                "sampler": sampler,
                "wall_s": d.wall_s,
                "ess_bulk_min": d.ess_bulk_min,
                "rhat_max": d.rhat_max,
                "divergences": d.divergences,
                "ess_per_s": d.ess_bulk_min / d.wall_s,
                "corr_theta_truth": np.corrcoef(theta, truth)[0, 1],
            }
        )
        print(f"{sampler}: {d.wall_s:.1f} s", flush=True)
    table = pd.DataFrame(rows).set_index("sampler")
    if "pymc" in table.index:
        table["ess_per_s_vs_pymc"] = table["ess_per_s"] / table.loc["pymc", "ess_per_s"]
    print(
        f"\n20 comparisons x 200 prompts, {args.chains} chains x {args.draws} draws "
        f"({args.tune} tuning), antisymmetric cutpoints"
    )
    print(table.round(3).to_string())


if __name__ == "__main__":
    main()
