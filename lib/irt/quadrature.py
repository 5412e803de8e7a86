"""The exact posterior of theta for two systems (one comparison) by quadrature, for calibration checks.

With one comparison, the GRM's posterior of theta given the net ratings u_j of J prompts depends on
the data only through the counts n_k of prompts in each category k, because every prompt has its
own discrimination alpha_j, integrated out prompt by prompt:

- ``shared`` cutpoints: ``p(theta, b | u) ∝ N(theta; 0, 1) p(b) prod_k L_k(theta, b)^n_k`` with
  ``L_k(theta, b) = E_alpha P(u = k | theta, alpha, b)``;
- ``antisymmetric`` (per-prompt) cutpoints: ``p(theta | u) ∝ N(theta; 0, 1) prod_k M_k(theta)^n_k``
  with ``M_k(theta) = E_b L_k(theta, b)`` under b's prior.

The expectations over log alpha ~ N(0, 0.5) use Gauss-Hermite nodes; b's H = (K-1)/2 positive gaps
are integrated on a grid of their logarithms (the model's own parameterisation, so the mass near
b = 0 that tie-free data push towards is resolved), with the prior "ordered b ~ N(0, 2)" of
:mod:`lib.irt.model`; theta on a uniform grid, integrated by Simpson's rule. The grids depend only on
K, so a calibration study of thousands of data sets costs one matrix product.

P(theta > 0) is Simpson's rule on [0, 4] over Simpson's rule on [-4, 4] (error O(h^4)): the sum of the
nodes above 0 plus half the node at 0 (the trapezoid rule, O(h^2)) gave 0.97477 for 26 of 40 tie-free
wins where the integral is 0.97529 (scipy's adaptive ``quad``),
on the wrong side of 0.975, and so 3.85% false detections at one annotator where the exact rate is 8.07%.
:func:`adaptive_p_b_better` is that reference.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
from scipy import integrate
from scipy.integrate import simpson
from scipy.special import expit, logsumexp
from scipy.stats import multinomial

from lib.irt.settings import B_PRIOR_SD, LOG_ALPHA_PRIOR_SD, THETA_PRIOR_SD

THETA_GRID = np.linspace(-4.0, 4.0, 121)
"""theta nodes (logits), one at 0 and an even number of steps on each side (Simpson's rule on [0, 4]);
the prior N(0, 1) leaves 6e-5 outside."""

ALPHA_NODES = 16
"""Gauss-Hermite nodes for log alpha."""

LOG_GAP_RANGE = (-9.0, 2.5)
"""Range of log b-gaps: below, the prior weight exp(y) is under 1e-4 of a unit gap; above, a gap of
12 logits is 6 prior SDs."""


class TwoSystemPosterior:
    """Exact posterior of theta for one comparison, K categories and a cutpoints variant.

    Parameters
    ----------
    n_categories : int
        K (odd), e.g. 3 for one vote per prompt, 7 for three.
    cutpoints : {"shared", "antisymmetric"}
    gap_nodes : int, optional
        Grid points per log gap (default 300 for H = 1, 60 for H = 2, 10 for H = 3; gap_nodes^H
        points in all). With ``focus``, P(theta > 0) of 40-prompt data sets moves by under 0.005
        from 10 to 14 nodes per gap.
    focus : ndarray, shape (K,), optional
        Typical category counts of the data sets to be analysed (``shared`` only). The log-gap grid
        then spans, per gap, the range where a first pass over the whole range finds posterior
        mass above 1e-9 of its largest (widened by one coarse step), so few nodes resolve a
        posterior that 40 prompts make narrow. Data sets far from ``focus`` need their own grid.
    """

    def __init__(
        self, n_categories: int, cutpoints: str, gap_nodes: int | None = None, focus: np.ndarray | None = None
    ) -> None:
        if cutpoints not in ("shared", "antisymmetric") or n_categories % 2 == 0:
            raise ValueError("exact quadrature is for shared or antisymmetric cutpoints and an odd K")
        half = (n_categories - 1) // 2
        nodes = gap_nodes or {1: 300, 2: 60}.get(half, 10)
        ranges = [np.linspace(*LOG_GAP_RANGE, nodes)] * half
        if focus is not None and cutpoints == "shared":
            coarse = TwoSystemPosterior(n_categories, cutpoints, gap_nodes=nodes)
            joint = np.exp(coarse.log_joint(np.asarray(focus, dtype=float)[None])[0])  # (T, G)
            mass = joint.sum(axis=0).reshape([nodes] * half)
            step = ranges[0][1] - ranges[0][0]
            ranges = []
            for d in range(half):
                marginal = mass.sum(axis=tuple(a for a in range(half) if a != d))
                kept = np.linspace(*LOG_GAP_RANGE, nodes)[marginal > 1e-9 * marginal.max()]
                ranges.append(
                    np.linspace(
                        max(kept.min() - step, LOG_GAP_RANGE[0]), min(kept.max() + step, LOG_GAP_RANGE[1]), nodes
                    )
                )
        y = np.array(list(itertools.product(*ranges)))  # (G, H) log gaps
        b = np.cumsum(np.exp(y), axis=1)  # (G, H) positive ordered thresholds
        log_w = (-0.5 * (b / B_PRIOR_SD) ** 2).sum(axis=1) + y.sum(axis=1)  # normal prior x Jacobian
        log_w += sum(np.log(r[1] - r[0]) for r in ranges)  # cell volume: ranges may differ
        self.log_prior_b = log_w
        cuts = np.concatenate([-b[:, ::-1], b], axis=1)  # (G, K-1)
        x, w = np.polynomial.hermite_e.hermegauss(ALPHA_NODES)
        alpha, w = np.exp(LOG_ALPHA_PRIOR_SD * x), w / w.sum()
        theta = THETA_GRID[:, None, None]
        probs = np.zeros((len(THETA_GRID), len(b), n_categories))
        for a, wa in zip(alpha, w, strict=True):
            above = expit(a * (theta - cuts[None]))  # (T, G, K-1): P(u >= k), k = 1..K-1
            upper = np.concatenate([np.ones((*above.shape[:2], 1)), above], axis=2)
            lower = np.concatenate([above, np.zeros((*above.shape[:2], 1))], axis=2)
            probs += wa * (upper - lower)
        self.log_lik = np.log(np.clip(probs, 1e-300, None))  # (T, G, K): log L_k(theta, b)
        self.cutpoints = cutpoints
        self.log_prior_theta = -0.5 * (THETA_GRID / THETA_PRIOR_SD) ** 2
        if cutpoints == "antisymmetric":  # M_k(theta): b integrated out per prompt (prior normalised)
            self.log_marginal = logsumexp(self.log_lik + (log_w - logsumexp(log_w))[None, :, None], axis=1)

    def log_joint(self, counts: np.ndarray) -> np.ndarray:
        """Unnormalised log p(theta, b | counts) on the grids (``shared``), shape (S, T, G)."""
        n_theta, n_b, n_categories = self.log_lik.shape
        loglik = (counts @ self.log_lik.reshape(-1, n_categories).T).reshape(len(counts), n_theta, n_b)
        return loglik + self.log_prior_b + self.log_prior_theta[:, None]

    def log_posterior(self, counts: np.ndarray) -> np.ndarray:
        """Normalised log posterior of theta on :data:`THETA_GRID`.

        Parameters
        ----------
        counts : ndarray, shape (S, K)
            Prompts per category (index 0 = the most negative net rating) of S data sets.

        Returns
        -------
        ndarray, shape (S, T)
        """
        counts = np.asarray(counts, dtype=float)
        if self.cutpoints == "antisymmetric":
            log_post = counts @ self.log_marginal.T + self.log_prior_theta
        else:  # in chunks of data sets: (chunk, T, G) stays under about 20 million numbers
            chunk = max(1, 20_000_000 // self.log_lik[..., 0].size)
            log_post = np.concatenate(
                [logsumexp(self.log_joint(counts[i : i + chunk]), axis=2) for i in range(0, len(counts), chunk)]
            )
        return log_post - logsumexp(log_post, axis=1, keepdims=True)

    def p_b_better(self, counts: np.ndarray) -> np.ndarray:
        """P(theta > 0 | data) of each data set, shape (S,): Simpson's rule on theta >= 0 over Simpson's
        rule on the whole grid (module docstring)."""
        density = np.exp(self.log_posterior(counts))
        above = THETA_GRID >= 0
        return simpson(density[:, above], x=THETA_GRID[above], axis=1) / simpson(density, x=THETA_GRID, axis=1)


def adaptive_p_b_better(n_a: int, n_tie: int, n_b: int) -> float:
    """P(theta > 0) for one comparison, shared cutpoints and three categories, by scipy's adaptive
    quadrature: the reference :class:`TwoSystemPosterior` is checked against (seconds a call).

    Integrates ``N(theta; 0, 1) N(b; 0, 2) L_A^n_a L_tie^n_tie L_B^n_b`` over theta and the threshold
    b > 0 (in b itself, not the class's log gaps) with ``scipy.integrate.quad`` to a relative 1e-8, theta
    on [-8, 8] and b on [0, 16] (8 prior SDs), where ``L_B = E_alpha logistic(alpha (theta - b))`` and
    ``L_A = E_alpha logistic(alpha (-theta - b))`` over log alpha ~ N(0, 0.5) by a 120-node Gauss-Hermite
    rule (equal to ``quad`` over alpha to 1e-15).

    Parameters
    ----------
    n_a, n_tie, n_b : int
        Prompts whose one vote is A better, a tie, B better.

    Returns
    -------
    float
    """
    z, w = np.polynomial.hermite_e.hermegauss(120)
    alpha, w = np.exp(LOG_ALPHA_PRIOR_SD * z), w / w.sum()

    def mean_win(x: float) -> float:
        return float(w @ expit(alpha * x))

    def density(b: float, theta: float) -> float:
        up, down = mean_win(theta - b), mean_win(-theta - b)
        loglik = n_a * math.log(down) + n_b * math.log(up) + (n_tie * math.log1p(-up - down) if n_tie else 0.0)
        shift = (n_a + n_tie + n_b) * math.log(2)  # keeps the integrand near 1
        return math.exp(-0.5 * (theta / THETA_PRIOR_SD) ** 2 - 0.5 * (b / B_PRIOR_SD) ** 2 + loglik + shift)

    def marginal(theta: float) -> float:
        return integrate.quad(density, 0, 8 * B_PRIOR_SD, args=(theta,), epsabs=0, epsrel=1e-8)[0]

    above = integrate.quad(marginal, 0, 8 * THETA_PRIOR_SD, epsabs=0, epsrel=1e-8)[0]
    below = integrate.quad(marginal, -8 * THETA_PRIOR_SD, 0, epsabs=0, epsrel=1e-8)[0]
    return above / (above + below)


def null_detection_rates(
    prompts: int, tie_rates: Sequence[float], levels: Sequence[float], posterior: TwoSystemPosterior | None = None
) -> np.ndarray:
    """How often the shared-cutpoints GRM declares one of two equal systems better, exactly.

    With one vote a prompt the posterior depends only on the counts (A better, tie, B better), so the
    false-detection rate of the rule "P(B better) above ``level`` or below 1 - ``level``" is the sum, over
    every count table, of its multinomial probability under the null (A and B each (1 - tie rate) / 2)
    times whether the rule fires: no Monte Carlo error.

    Parameters
    ----------
    prompts : int
        Prompts, one vote each.
    tie_rates : sequence of float
        P(tie) of a vote, each in [0, 1).
    levels : sequence of float
        Decision levels, each in (0.5, 1).
    posterior : TwoSystemPosterior, optional
        Three categories, shared cutpoints (built when not given).

    Returns
    -------
    ndarray, shape (len(tie_rates), len(levels))
    """
    posterior = posterior or TwoSystemPosterior(3, "shared")
    tables = np.array([(a, prompts - a - b, b) for a in range(prompts + 1) for b in range(prompts + 1 - a)])
    p = posterior.p_b_better(tables)
    fires = np.stack([(p > level) | (p < 1 - level) for level in levels], axis=1)  # (T, L)
    weight = np.stack([multinomial.pmf(tables, prompts, [(1 - t) / 2, t, (1 - t) / 2]) for t in tie_rates])
    return weight @ fires
