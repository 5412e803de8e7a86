"""The ratings' quadrature fit against NUTS and against the full model's Laplace fit, in the same run (issue 35).

Three simulated ratings studies (:func:`lib.ranking.simulate.simulate_ratings`, raters without severity):

- ``unpaired``: 4 systems x 40 prompts, one system a prompt, two scores a cell (alpha_j free: 2-D quadrature), the
  design of ``tests/ranking/test_rank_laplace_nuts.py``, where skills and prompt effects are told apart only
  through sigma_eta;
- ``paired``: 4 systems x 40 prompts, every system on every prompt, two scores a cell (2-D);
- ``one_a_cell``: the same with one score a cell (alpha_j = 1: 1-D quadrature over eta_j).

Each is fitted by the default Laplace fit (:mod:`lib.ranking.marginal_ratings`), by the full model's MAP + Laplace
(:func:`lib.inference.laplace.sample_laplace`: eta_j and alpha_j Gaussian at the globals' marginal mode, what the
default was before) and by NUTS on the full model (numpyro, 4 chains x 2,000 draws). Printed, per variable: each
fit's posterior means and SDs, and each Laplace fit's largest distance from NUTS's means in NUTS's Monte-Carlo SEs
(SD / sqrt(ESS)) and in NUTS's posterior SDs, and its largest SD ratio; the wall seconds of the two Laplace fits
(the full model's: JAX compiling included, as a user's first fit) and their ratio, with the load average (the
machine may be shared). Figures, not a test.

    python bench/bench_ratings_quadrature.py [CASE ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CASES = {
    "unpaired": {"raters_per_cell": 2, "unpaired": True},
    "paired": {"raters_per_cell": 2, "unpaired": False},
    "one_a_cell": {"raters_per_cell": 1, "unpaired": False},
}
VARIABLES = ("skill", "b", "sigma_eta", "eta", "alpha")


def _moments(post, name: str) -> tuple[np.ndarray, np.ndarray]:
    x = post[name].stack(s=("chain", "draw")).to_numpy()
    return np.atleast_1d(x.mean(-1)), np.atleast_1d(x.std(-1))


def run(case: str) -> None:
    """Fit one case three ways and print the figures."""
    from lib.inference.laplace import sample_laplace
    from lib.inference.progress import Tracker
    from lib.ranking.data import ranking_data
    from lib.ranking.fit import RankSettings, _observations, _problem, fit_ranking
    from lib.ranking.model import one_score_a_cell
    from lib.ranking.simulate import simulate_ratings
    from tests.ranking.test_ranking_annotators import ratings_input

    scores, _ = simulate_ratings(4, 40, 6, severity_sd=0.0, seed=3, **CASES[case])
    rd = ranking_data(ratings_input(scores))
    settings = RankSettings(draws=4000, seed=1, annotator_effect=False)
    obs = _observations(rd, settings)
    began = time.perf_counter()
    quadrature = fit_ranking(rd, settings, use_cache=False).idata.posterior
    quadrature_s = time.perf_counter() - began
    began = time.perf_counter()
    problem = _problem(obs, settings, one_score_a_cell(obs))
    full = sample_laplace(problem, settings, Tracker(1, time.perf_counter())).idata.posterior
    full_s = time.perf_counter() - began
    nuts = fit_ranking(
        rd,
        RankSettings(sampler="numpyro", chains=4, draws=2000, tune=1000, seed=1, annotator_effect=False),
        use_cache=False,
    )
    ess, rhat = nuts.diagnostics.ess_bulk_min, nuts.diagnostics.rhat_max
    print(f"\n== {case}: {len(obs.code)} scores, alpha_j {'= 1' if one_score_a_cell(obs) else 'free'}")
    print(f"NUTS: smallest bulk ESS {ess:.0f}, largest R-hat {rhat:.3f}")
    for name in VARIABLES:
        mean_n, sd_n = _moments(nuts.idata.posterior, name)
        print(f"{name}: NUTS mean {np.round(mean_n[:6], 3)} sd {np.round(sd_n[:6], 3)}")
        for label, post in (("quadrature", quadrature), ("full Laplace", full)):
            mean, sd = _moments(post, name)
            if (sd_n == 0).all():
                print(f"  {label:12s} constant {np.round(mean[:3], 3)}")
                continue
            mcse = (np.abs(mean - mean_n) / (sd_n / np.sqrt(ess))).max()
            in_sd = (np.abs(mean - mean_n) / sd_n).max()
            ratio = sd / sd_n
            print(
                f"  {label:12s} mean {np.round(mean[:6], 3)} sd {np.round(sd[:6], 3)}; from NUTS's means at most "
                f"{mcse:.1f} MC SEs, {in_sd:.2f} SDs; SD / NUTS's {ratio.min():.2f}-{ratio.max():.2f}"
            )
    load = os.getloadavg()
    print(
        f"wall: quadrature {quadrature_s:.2f} s, full model's Laplace {full_s:.2f} s "
        f"(ratio {quadrature_s / full_s:.2f}); load average {load[0]:.1f} {load[1]:.1f} on 2 cores (shared machine)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=list(CASES), metavar="CASE", help=f"of {', '.join(CASES)}")
    args = parser.parse_args()
    if unknown := set(args.cases) - set(CASES):
        parser.error(f"unknown cases {sorted(unknown)}")
    os.environ["EVAL_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench_ratings_quadrature")
    for case in args.cases:
        run(case)


if __name__ == "__main__":
    main()
