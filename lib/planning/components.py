"""Variance components of a study estimated from its pilot's votes: how much prompts and annotators
differ in which system they find better (the random slopes of Card et al. 2020's mixed-effects
simulation), on the planner's scale (logits of one vote).

Moments of the votes' deviations from their expected value under the pilot's fit, ``d = u - mu_ij``
(centred per comparison). Two votes of one cell by different annotators share only the prompt x
comparison effect ``e_ij``, two votes of one annotator on different prompts of a comparison only the
annotator x comparison effect ``a_ik``; so each SD is the one whose expected sum of ``d d'`` over those
pairs, computed from the GRM by quadrature over the shared effect and the other one
(:func:`_shared_moment`), equals the observed sum. A component whose moment is not :data:`NOISE_Z`
standard errors above 0 is 0.

The pilot's fit has no such effects, so its thetas are marginal, flatter than those the effects are
added to: the moments are taken at the thetas the components imply (:func:`conditional_theta`), and the
two are estimated in turn (:data:`ROUNDS`). A few votes per cell detect only large components:
``tests/planning/test_variance_components.py`` measures the estimates; the simulator check shows whether
data simulated with them look like the pilot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_SD = 5.0
"""Largest component the estimate reports (logits): a moment beyond what this SD gives is reported as it."""

QUADRATURE_NODES = 21
"""Gauss-Hermite nodes over a shared effect (:func:`_shared_moment`)."""

ROUNDS = 3
"""Rounds of estimating the components and the thetas they imply (:func:`estimate_components`)."""

NOISE_Z = 2.0
"""A component whose moment is within this many standard errors of 0 is taken as 0: with no such effect the
estimate is noise, and any annotator effect makes every analysis calibrate under the null."""


@dataclass(frozen=True)
class Components:
    """Estimated SDs (logits of one vote; NaN where the pilot cannot tell) and, per component, why not
    or from what (``item_note``, ``annotator_note``)."""

    item_sd: float
    annotator_sd: float
    item_note: str
    annotator_note: str

    def summary(self) -> str:
        """One sentence each, as the command prints and the page shows them."""

        def part(name: str, value: float, note: str) -> str:
            if np.isfinite(value):
                return f"{name} SD {value:.2f} logits ({note})"
            return f"{name} SD not estimated ({note}): 0 unless stated"

        return (
            f"variance components from the pilot: {part('prompt x comparison', self.item_sd, self.item_note)}; "
            f"{part('annotator x comparison', self.annotator_sd, self.annotator_note)}"
        )


def _expected_vote(theta: np.ndarray, alpha: np.ndarray, b: np.ndarray, categories: np.ndarray) -> np.ndarray:
    """Expected vote under the GRM, ``u_0 + sum_c (u_c - u_{c-1}) P(u >= c)``: theta of any shape (...),
    alpha and b broadcasting to it (b with a last axis of K-1 cutpoints)."""
    above = 1.0 / (1.0 + np.exp(-alpha[..., None] * (theta[..., None] - b)))
    return categories[0] + (above * np.diff(categories).astype(float)).sum(axis=-1)


def _shared_moment(
    sd: float,
    other_sd: float,
    index: np.ndarray,
    i: np.ndarray,
    j: np.ndarray,
    theta: np.ndarray,
    alpha: np.ndarray,
    b: np.ndarray,
    categories: np.ndarray,
) -> float:
    """Expected sum over groups of ``sum_{a != b} d_a d_b`` when each group's votes share an effect
    ``e ~ N(0, sd^2)`` and each vote has the other component's effect (SD ``other_sd``) on its own: per
    group ``Var_e(sum_a m_a(e)) - sum_a Var_e(m_a(e))`` with ``m_a(e) = E_o mu_a(theta + e + o)``, by
    Gauss-Hermite quadrature over both (exact for the GRM, no linearisation). Votes are (i, j) pairs,
    ``index`` their group."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(QUADRATURE_NODES)
    weights = weights / weights.sum()
    shifted = theta[:, None] + sd * nodes  # (I, Q)
    m = sum(
        w * _expected_vote(shifted[:, None, :] + other_sd * x, alpha[None, :, None], b[None, :, None, :], categories)
        for x, w in zip(nodes, weights, strict=True)
    )  # (I, J, Q)
    mu = m[i, j]  # (V, Q)

    def variance(x: np.ndarray) -> np.ndarray:
        return x**2 @ weights - (x @ weights) ** 2

    grouped = np.stack([np.bincount(index, column) for column in mu.T], axis=1)  # (G, Q)
    return float(variance(grouped).sum() - variance(mu).sum())


def _matching_sd(observed: float, *args) -> float:
    """The SD whose expected moment (:func:`_shared_moment` with the other ``args``) is the observed one, at
    most :data:`MAX_SD`."""
    from scipy.optimize import brentq  # imported on use: lib.planning.design (the parser's defaults) stays light

    def gap(sd: float) -> float:
        return _shared_moment(sd, *args) - observed

    return MAX_SD if gap(MAX_SD) < 0 else float(brentq(gap, 0.0, MAX_SD, xtol=1e-3))


def conditional_theta(
    theta: np.ndarray, alpha: np.ndarray, b: np.ndarray, categories: np.ndarray, n: np.ndarray, sd: float
) -> np.ndarray:
    """Thetas that give, with judgment effects of SD ``sd`` (prompt and annotator together), the mean
    judgment the pilot's fit gives without them.

    The pilot's fit has no such effects, so its theta is a marginal one: flatter than the theta to which
    the simulator adds them (a study simulated from it would show smaller differences than the pilot).
    For each comparison i, ``sum_j n_ij E_z mu_j(t + sd z) = sum_j n_ij mu_j(theta_i)`` is solved for
    ``t`` (bisection; the expected vote increases in t).

    Parameters
    ----------
    theta : ndarray, shape (I,)
    alpha : ndarray, shape (J,)
    b : ndarray, shape (J, K-1)
    categories : ndarray, shape (K,)
    n : ndarray, shape (I, J)
        Judgments per cell (the weights).
    sd : float
        SD of the judgment's effects, logits.

    Returns
    -------
    ndarray, shape (I,)
    """
    if sd <= 0:
        return theta
    nodes, weights = np.polynomial.hermite_e.hermegauss(QUADRATURE_NODES)
    weights = weights / weights.sum()
    target = (n * _expected_vote(theta[:, None], alpha, b, categories)).sum(axis=1)
    low, high = np.full(len(theta), -3 * MAX_SD - 10.0), np.full(len(theta), 3 * MAX_SD + 10.0)
    for _ in range(60):  # bisection: 2^-60 of the bracket
        mid = (low + high) / 2
        mean = _expected_vote(mid[:, None, None] + sd * nodes, alpha[:, None], b[:, None, :], categories) @ weights
        above = (n * mean).sum(axis=1) > target
        high, low = np.where(above, mid, high), np.where(above, low, mid)
    return (low + high) / 2


def estimate_components(
    votes: tuple[np.ndarray, ...] | None, theta: np.ndarray, alpha: np.ndarray, b: np.ndarray, categories: np.ndarray
) -> Components:
    """Prompt x comparison and annotator x comparison SDs of a pilot (module docstring).

    The moments are computed at the thetas the components imply (:func:`conditional_theta`), which
    depend on the components: :data:`ROUNDS` rounds of the two.

    Parameters
    ----------
    votes : tuple of ndarray, or None
        The pilot's votes as :func:`lib.planning.pilot.pilot_votes` gives them (i, j, annotator, value),
        None for a pilot without individual votes.
    theta : ndarray, shape (I,)
    alpha : ndarray, shape (J,)
    b : ndarray, shape (J, K-1)
        The pilot's fit (logits of one vote).
    categories : ndarray, shape (K,)
        Vote values, e.g. -1, 0, 1.

    Returns
    -------
    Components
    """
    if votes is None:
        why = "one judgment per (comparison, prompt): prompt effects and judgment noise cannot be told apart"
        return Components(np.nan, np.nan, why, why)
    i, j, k, value = votes
    d = value - _expected_vote(theta[i], alpha[j], b[j], categories)
    d = d - (np.bincount(i, d) / np.bincount(i))[i]  # centred per comparison: theta's fit error cancels
    n = np.zeros((len(theta), len(alpha)))
    np.add.at(n, (i, j), 1.0)
    groups = {
        "item": (i * len(alpha) + j, "(comparison, prompt) cells", "votes"),
        "annotator": (i * (k.max() + 1) + k, "(comparison, annotator) pairs", "prompts"),
    }
    found = {}
    for name, (group, what, unit) in groups.items():
        _, index = np.unique(group, return_inverse=True)
        top = np.bincount(index, d) ** 2 - np.bincount(index, d**2)  # per group, sum over a != b of d_a d_b
        pairs = int((np.bincount(index) >= 2).sum())
        z = top.sum() / np.sqrt(np.sum(top**2)) if pairs else np.nan
        found[name] = (index, top.sum(), pairs, z, what, unit)
    sds = {name: 0.0 for name in groups}
    truth = theta
    for _ in range(ROUNDS):
        for name, (index, observed, pairs, z, *_) in found.items():
            if pairs and z > NOISE_Z:
                other = sds["annotator" if name == "item" else "item"]
                sds[name] = _matching_sd(observed, other, index, i, j, truth, alpha, b, categories)
        truth = conditional_theta(theta, alpha, b, categories, n, float(np.hypot(sds["item"], sds["annotator"])))

    def note(name: str) -> tuple[float, str]:
        _, _, pairs, z, what, unit = found[name]
        if not pairs:
            return np.nan, f"no {what} with two {unit}"
        if not z > NOISE_Z:
            return 0.0, f"{pairs} {what} with two {unit} or more; the moment is {z:.1f} SE from 0, so 0"
        return sds[name], f"{pairs} {what} with two {unit} or more, the moment {z:.1f} SE from 0"

    (item_sd, item_note), (annotator_sd, annotator_note) = note("item"), note("annotator")
    return Components(item_sd, annotator_sd, item_note, annotator_note)
