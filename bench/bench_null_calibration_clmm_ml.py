"""How often the *simulating* ratings model itself, fitted by maximum likelihood, declares a difference
between two equal systems: the reference for the leaderboard's ratings calibration (issue 16).

The null studies of ``bench/bench_null_calibration_rank.py`` (two systems, no difference, one score a
(prompt, system) cell from :func:`lib.ranking.simulate.simulate_ratings`) are fitted by the cumulative
logit model with a N(0, sigma_eta) prompt effect (alpha_j = 1, the simulator's log alpha_j SD 0.3 left
unmodelled), its marginal likelihood integrated over the prompt effect by Gauss-Hermite quadrature
(40 nodes) and maximised by BFGS; a detection is a Wald |z| above 1.96 (observed information by
central differences); beside it the likelihood-ratio test of gap 0 and a paired t-test on the same
studies. With 40 prompts both
the ML fit and the leaderboard's Bayesian fit exceed 5% (a small-sample property of a 40-cluster
analysis, not of one fit); with more prompts the ML fit comes to nominal.

    python bench/bench_null_calibration_clmm_ml.py [--studies 1000] [--prompts 40 120]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import optimize, stats
from scipy.special import expit

from lib.ranking.simulate import simulate_ratings

NODES, WEIGHTS = np.polynomial.hermite_e.hermegauss(40)  # for a standard normal (weights / sqrt(2 pi))
WEIGHTS = WEIGHTS / WEIGHTS.sum()


def neg_loglik(par: np.ndarray, y: np.ndarray) -> float:
    """Minus the marginal log likelihood of scores ``y`` (J, 2) in 0..C-1 (columns: system A, B) at
    ``par`` = (gap d = s_B - s_A, log sigma_eta, first threshold, log gaps of the next thresholds)."""
    d, sigma = par[0], np.exp(par[1])
    b = np.cumsum(np.r_[par[2], np.exp(par[3:])])
    location = np.array([-d / 2, d / 2])[:, None] + sigma * NODES[None, :]  # (2, Q)
    at_least = expit(location[..., None] - b)  # P(y >= c + 1), (2, Q, C - 1)
    pad = (*at_least.shape[:-1], 1)
    edges = np.concatenate([np.ones(pad), at_least, np.zeros(pad)], -1)
    p = edges[..., :-1] - edges[..., 1:]  # (2, Q, C)
    per_node = p[0][:, y[:, 0]] * p[1][:, y[:, 1]]  # (Q, J)
    return float(-np.log(WEIGHTS @ per_node + 1e-300).sum())


def wald_z_and_lr(y: np.ndarray) -> tuple[float, float]:
    """The ML gap over its standard error (observed information), and the likelihood-ratio statistic of
    gap 0 (chi-squared with 1 df under the null)."""
    x0 = np.r_[0.0, np.log(0.5), -1.5, np.zeros(y.max() - 1)]
    full = optimize.minimize(neg_loglik, x0, args=(y,), method="BFGS")
    null = optimize.minimize(lambda p: neg_loglik(np.r_[0.0, p], y), x0[1:], method="BFGS")
    x = full.x
    step, n = 1e-4, len(x)
    hessian = np.empty((n, n))
    for i in range(n):
        e = np.eye(n)[i] * step
        grad = [optimize.approx_fprime(x + s * e, neg_loglik, 1e-6, y) for s in (1, -1)]
        hessian[:, i] = (grad[0] - grad[1]) / (2 * step)
    z = x[0] / np.sqrt(np.linalg.inv((hessian + hessian.T) / 2)[0, 0])
    return float(z), float(2 * (null.fun - full.fun))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=1000)
    parser.add_argument("--prompts", type=int, nargs="+", default=[40, 120])
    args = parser.parse_args()
    print("prompts | ML Wald false detection +- MC SE | likelihood-ratio test | paired t-test rejection | studies")
    for prompts in args.prompts:
        rejected = []  # (Wald, likelihood ratio, t-test) per study
        for seed in range(args.studies):
            scores, _ = simulate_ratings(2, prompts, 10, raters_per_cell=1, skill_sd=0.0, severity_sd=0.0, seed=seed)
            wide = scores.pivot_table(index="prompt_id", columns="system", values="score")
            y = np.searchsorted(np.sort(scores["score"].unique()), wide.to_numpy()).astype(int)
            z, lr = wald_z_and_lr(y)
            t = stats.ttest_1samp(wide.iloc[:, 1] - wide.iloc[:, 0], 0.0).pvalue
            rejected.append((abs(np.nan_to_num(z)) > 1.96, lr > stats.chi2.ppf(0.95, 1), t < 0.05))
        rates = np.mean(rejected, axis=0)
        se = np.sqrt(rates * (1 - rates) / args.studies)
        cells = [f"{r:.3f} +- {s:.3f}" for r, s in zip(rates, se, strict=True)]
        print(" | ".join([str(prompts), *cells, str(args.studies)]), flush=True)


if __name__ == "__main__":
    main()
