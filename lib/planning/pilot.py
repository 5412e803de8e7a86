"""The planner's one pilot-fit rule (page and command): the graded response model fitted to the pilot's
judgments at the level they were recorded, one vote of one annotator, not the net rating of a cell.

A pilot with 3 workers per item records 3 votes per (comparison, prompt) cell; their sum, the net
rating in -3..3, is what the project's GRM fits, but one simulated annotator must give one vote, so
that "25 prompts x 1 annotator" costs 25 judgments per comparison and has the power of 25 votes.
Pilots whose cells hold one judgment each (ratings, item responses) are fitted on the cells.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from lib.irt.settings import B_PRIOR_SD, LOG_ALPHA_PRIOR_SD, THETA_PRIOR_SD


def pilot_votes(data) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Every vote of a pilot placed in ``data.matrix`` (comparisons, prompts after redundancy merging):
    comparison index i, prompt index j, annotator code k (int64 each, shape (V,)) and value (-1, 0, +1,
    B minus A); None for data without individual votes (ratings, item responses)."""
    from lib.judgments.ratings import orient_votes, select_criterion

    if data.judgments is None:
        return None
    rm = data.matrix
    votes = orient_votes(select_criterion(data.judgments.votes, data.criterion))
    group = dict(zip(rm.groups["prompt_id"].astype(str), rm.groups["group"].astype(str), strict=True))
    prompt = {p: j for j, p in enumerate(rm.prompt_ids.astype(str))}
    comparison = {c: i for i, c in enumerate(rm.comparisons["comparison"].astype(str))}
    i = votes["comparison"].astype(str).map(comparison)
    j = votes["prompt_id"].astype(str).map(group).map(prompt)
    keep = (i.notna() & j.notna()).to_numpy()
    annotator = votes["annotator_id"].astype(str).factorize()[0]
    return (
        i[keep].to_numpy(np.int64),
        j[keep].to_numpy(np.int64),
        annotator[keep].astype(np.int64),
        votes["score"].to_numpy(np.int64)[keep],
    )


def vote_counts(votes: tuple[np.ndarray, ...], shape: tuple[int, int]) -> np.ndarray:
    """Votes of every (comparison, prompt) cell by value (-1, 0, +1): shape (I, J, 3) for ``shape`` (I, J),
    from a pilot's votes as :func:`pilot_votes` gives them."""
    i, j, _, score = votes
    counts = np.zeros((*shape, 3))
    np.add.at(counts, (i, j, score + 1), 1.0)
    return counts


def _neg_log_posterior(x: np.ndarray, counts: np.ndarray, shared: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """Minus the log posterior of the vote-level GRM and its gradient.

    Three categories with antisymmetric cutpoints -b, +b (the project's default, theta = 0 is no
    preference): ``P(u >= 0) = logistic(alpha_j (theta_i + b))``, ``P(u >= 1) = logistic(alpha_j
    (theta_i - b))`` (Samejima 1969). Priors as the project's GRM (``lib.irt.model``): theta ~ N(0, 1),
    log alpha ~ N(0, 0.5), b ~ N(0, 2) truncated to b > 0, parametrised by log b (its Jacobian added).
    One b is shared by every prompt, and one alpha by the prompts ``shared`` marks (bool, (J,)): with
    a few votes per prompt, a threshold or a discrimination of its own is fitted to that prompt's few
    votes and the joint mode then stretches theta (3 comparisons x 3 votes per prompt, true 1.6: 2.54
    with both per prompt, 1.87 with b shared). ``x`` = (theta (I), log alpha of each prompt not
    shared, then the shared one, log b); ``counts`` (I, J, 3).
    """
    n_i, n_j = counts.shape[:2]
    shared = np.zeros(n_j, dtype=bool) if shared is None else shared
    own = np.flatnonzero(~shared)
    index = np.full(n_j, len(own))  # the shared alpha is the last one
    index[own] = np.arange(len(own))
    n_a = len(own) + 1
    theta, log_alphas, log_b = x[:n_i], x[n_i : n_i + n_a], x[n_i + n_a]
    alpha, b = np.exp(log_alphas)[index], np.exp(log_b)
    hi = alpha * (theta[:, None] + b)
    lo = alpha * (theta[:, None] - b)
    gap = np.maximum(hi - lo, 1e-12)
    neg, tie, pos = counts[..., 0], counts[..., 1], counts[..., 2]
    loglik = (
        neg * log_expit(-hi) + pos * log_expit(lo) + tie * (log_expit(hi) + log_expit(-lo) + np.log(-np.expm1(-gap)))
    )
    ratio = 1.0 / np.expm1(gap)
    g_hi = -neg * expit(hi) + tie * (expit(-hi) + ratio)
    g_lo = pos * expit(-lo) - tie * (expit(lo) + ratio)
    logp = (
        loglik.sum()
        - 0.5 * np.sum((theta / THETA_PRIOR_SD) ** 2)
        - 0.5 * np.sum((log_alphas / LOG_ALPHA_PRIOR_SD) ** 2)
        - 0.5 * (b / B_PRIOR_SD) ** 2
        + log_b
    )
    per_prompt = alpha * (g_hi * (theta[:, None] + b) + g_lo * (theta[:, None] - b)).sum(axis=0)
    grad = np.concatenate(
        [
            (alpha * (g_hi + g_lo)).sum(axis=1) - theta / THETA_PRIOR_SD**2,
            np.bincount(index, per_prompt, minlength=n_a) - log_alphas / LOG_ALPHA_PRIOR_SD**2,
            [b * np.sum(alpha * (g_hi - g_lo)) - (b / B_PRIOR_SD) ** 2 + 1.0],
        ]
    )
    return -float(logp), -grad


def _fit(counts: np.ndarray, shared: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """MAP (theta, alpha per prompt, b) and the contraction of every alpha parameter."""
    n_i, n_j = counts.shape[:2]
    n_a = int((~shared).sum()) + 1
    x0 = np.concatenate([np.zeros(n_i + n_a), [np.log(0.5)]])
    x = minimize(
        _neg_log_posterior, x0, args=(counts, shared), jac=True, method="L-BFGS-B", options={"maxiter": 5000}
    ).x
    # curvature in each log alpha given the others: a prompt's alpha enters only its own cells (diagonal)
    step = 1e-5
    shifted = x.copy()
    shifted[n_i : n_i + n_a] += step
    curvature = (_neg_log_posterior(shifted, counts, shared)[1] - _neg_log_posterior(x, counts, shared)[1])[
        n_i : n_i + n_a
    ] / step
    contraction = 1.0 - 1.0 / np.maximum(curvature, 1e-12) / LOG_ALPHA_PRIOR_SD**2
    index = np.full(n_j, n_a - 1)
    index[~shared] = np.arange(n_a - 1)
    return x[:n_i], np.exp(x[n_i : n_i + n_a])[index], float(np.exp(x[n_i + n_a])), contraction[index]


def fit_votes(counts: np.ndarray) -> dict[str, np.ndarray]:
    """MAP of the vote-level GRM (:func:`_neg_log_posterior`) by L-BFGS.

    First every prompt has its alpha; the prompts whose alpha that fit does not inform (contraction of
    log alpha below :data:`lib.irt.contraction.UNINFORMED_BELOW`) then share one alpha, and the model is
    refitted: no prompt is credited with a discrimination its votes do not show (``top_alpha`` ranks
    only the informed ones), and the joint mode does not stretch theta. The scale is then set so that
    the geometric mean of alpha is 1.

    Parameters
    ----------
    counts : ndarray, shape (I, J, 3)
        Votes per cell for A better, tie, B better (:func:`vote_counts`).

    Returns
    -------
    dict
        ``theta`` (I,), ``alpha`` (J,), ``b`` (J, 2) as cutpoints (-b, +b) (one b for all),
        ``informed`` (J,): the prompts with an alpha of their own, and ``alpha_contraction`` (J,) of
        the first fit: 1 - var / prior var of log alpha, the variance from the curvature of the log
        posterior in log alpha given the other parameters (understating the posterior variance a little).
    """
    from lib.irt.contraction import UNINFORMED_BELOW

    n_j = counts.shape[1]
    *_, contraction = _fit(counts, np.zeros(n_j, dtype=bool))
    informed = contraction >= UNINFORMED_BELOW
    theta, alpha, b, _ = _fit(counts, ~informed)
    # only alpha x theta and alpha x b are identified: the scale is the priors' choice; fix it so that the
    # geometric mean alpha is 1, as for stated assumptions (median alpha 1), so theta is in logits of one
    # vote on a typical prompt (the likelihood is unchanged)
    scale = float(np.exp(np.mean(np.log(alpha))))
    theta, alpha, b = theta * scale, alpha / scale, b * scale
    return {
        "theta": theta,
        "alpha": alpha,
        "b": np.stack([np.full(n_j, -b), np.full(n_j, b)], axis=1),
        "informed": informed,
        "alpha_contraction": contraction,
    }


def cell_contraction(codes: np.ndarray, n_categories: int, point) -> np.ndarray:
    """Contraction of each prompt's log alpha (shape (J,)) for a pilot fitted on its cells (MAP
    ``point`` of :func:`lib.irt.map.fit_map`, ``codes`` (I, J), -1 missing): from the curvature of the
    log posterior in log alpha given the other parameters, by central differences."""
    from lib.irt.readouts import category_probs

    observed = codes >= 0
    index = np.where(observed, codes, 0)

    def loglik(log_alpha):
        probs = category_probs(point.theta, np.exp(log_alpha), point.b)  # (I, J, K)
        picked = np.take_along_axis(probs, index[..., None], axis=-1)[..., 0]
        return np.where(observed, np.log(np.maximum(picked, 1e-300)), 0.0).sum(axis=0)

    step = 1e-3
    log_alpha = np.log(point.alpha)
    curvature = -(loglik(log_alpha + step) - 2 * loglik(log_alpha) + loglik(log_alpha - step)) / step**2
    variance = 1.0 / np.maximum(curvature + 1.0 / LOG_ALPHA_PRIOR_SD**2, 1e-12)
    return 1.0 - variance / LOG_ALPHA_PRIOR_SD**2
