"""Votes on the same prompt are not independent: prompt-clustered variances and when to call data clustered.

A prompt can favour one system more than its skill says (a prompt x system effect); every vote on
that prompt then leans the same way, and a model that treats votes as independent gives intervals
that are too narrow (with an effect of SD 0.3 logits and 50 votes per prompt the 95% intervals
covered 88% of the simulated skills). The remedy here is the cluster-robust sandwich, which sums the
likelihood's scores within a prompt before taking their outer products (Liang & Zeger 1986;
Cameron & Miller 2015): for Bradley–Terry's maximum likelihood (:func:`lib.ranking.baseline.bradley_terry`)
and, as a "Bayesian sandwich" (Müller 2013, "Risk of Bayesian inference in misspecified models, and
the sandwich covariance matrix", Econometrica 81(5)), for the posterior of the skills
(:func:`prompt_clustering`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy.linalg import eigh
from scipy.special import expit

if TYPE_CHECKING:
    import arviz as az

DESIGN_EFFECT_WARN = 1.1
"""Votes are called clustered by prompt when the design effect (clustered variance of the skills over
the per-vote one, averaged over the systems) exceeds this, and exceeds ``1 + 1 / sqrt(C)`` for C
prompts: the estimate's own noise under independent votes (its 95th percentile was 1.15, 1.07 and 1.05
for 40, 100 and 200 prompts in simulations of 10 systems x 50 votes per prompt; with a prompt x system
effect of SD 0.3 it was 1.17 at the median, ``tests/ranking/test_rank_clusters.py``)."""
CLUSTER_NOTE = (
    "votes on the same prompt are dependent: the skills' variance is {de:.2f} times what independent "
    "votes give (design effect, over {n} prompts; a prompt favours some systems more than their skill "
    "says)."
)
CLUSTER_ADVICE = " Use prompt-clustered intervals."
CLUSTERED_NOTE = " The intervals are prompt-clustered (cluster-robust sandwich)."


def flagged(design_effect: float, n_clusters: int) -> bool:
    """Whether a design effect over ``n_clusters`` prompts says the votes are clustered (:data:`DESIGN_EFFECT_WARN`)."""
    return bool(design_effect > max(DESIGN_EFFECT_WARN, 1 + 1 / np.sqrt(max(n_clusters, 1))))


def cluster_scores(ia: np.ndarray, ib: np.ndarray, score: np.ndarray, cluster: np.ndarray, k: int) -> np.ndarray:
    """``C / (C - 1) sum_c g_c g_c'`` with ``g_c = sum_(v in c) score_v (e_a - e_b)``: the middle of a
    cluster-robust sandwich (Cameron & Miller 2015, "A practitioner's guide to cluster-robust
    inference", J. Human Resources 50(2), eqs. 11-12, with the small-sample factor C / (C - 1)).

    Parameters
    ----------
    ia, ib : ndarray (N,) of int
        The two systems of each observation (``score`` is d loglik / d(s_a - s_b)).
    score : ndarray (N,)
    cluster : ndarray (N,)
        Cluster label of each observation (its prompt).
    k : int
        Number of systems.

    Returns
    -------
    ndarray (k, k)
    """
    codes, labels = pd.factorize(cluster)
    n_clusters = len(labels)
    g = np.zeros((n_clusters, k))
    np.add.at(g, (codes, ia), score)
    np.add.at(g, (codes, ib), -score)
    outer = g.T @ g
    outer *= n_clusters / max(n_clusters - 1, 1)  # in place: no second (k, k) array
    return outer


def subtract_vote_scores(g: np.ndarray, ia: np.ndarray, ib: np.ndarray, score: np.ndarray) -> None:
    """``g -= sum_v score_v^2 (e_a - e_b)(e_a - e_b)'`` in place (g (k, k)): the per-vote
    outer products, :func:`cluster_scores` with each observation a cluster of its own and without the
    small-sample factor, summed into ``g`` directly (the N x k matrix of scores took 12 s and 400 MB for an
    arena's 500,000 votes; k x k arrays of their own took 4 GB each for 10,000 systems)."""
    d2 = score**2
    for rows, cols, sign in ((ia, ia, -1.0), (ib, ib, -1.0), (ia, ib, 1.0), (ib, ia, 1.0)):
        np.add.at(g, (rows, cols), sign * d2)


def positive_part_factor(a: np.ndarray) -> np.ndarray:
    """F (k, p) with ``F F' = (a)_+``, the positive part of the symmetric ``a`` (k, k), from its p positive
    eigenpairs only (LAPACK's MRRR, ``dsyevr``, on ``a``'s own memory: ``a`` is overwritten)."""
    w, v = eigh(a.T, overwrite_a=True, check_finite=False, subset_by_value=(0.0, np.inf), driver="evr")
    return v * np.sqrt(w)


@dataclass
class Clustering:
    """Prompt clustering of a ranking fit's votes (:func:`prompt_clustering`).

    ``design_effect``: the clustered variance of the skills over the model's, averaged over the
    systems whose skill varies (NaN when no draw varies); ``n_prompts``; ``flagged``: :func:`flagged`;
    ``skill_draws`` (S, K): the draws moved about their mean so that their covariance is the clustered one
    (the draws as given when not asked for).
    """

    design_effect: float
    n_prompts: int
    flagged: bool
    skill_draws: np.ndarray


def prompt_clustering(skill: np.ndarray, obs, means: dict[str, np.ndarray], *, transform: bool = True) -> Clustering:
    """The cluster-robust ("Bayesian sandwich") covariance of the skills, clustered by prompt.

    With Sigma the posterior covariance of the skills, ``G_n = sum_v d_v^2 x_v x_v'`` the per-vote
    and ``G_c`` the per-prompt (:func:`cluster_scores`) outer products of the votes' scores ``d_v x_v``
    (``d_v = d loglik_v / d location``, ``x_v = e_B - e_A``, at the posterior means), the clustered
    covariance is ``Sigma + Sigma (G_c - G_n)_+ Sigma``: under independent votes ``G_c`` and ``G_n``
    agree in expectation (both estimate the information) and Sigma is kept; dependence within a prompt
    adds its excess (Müller 2013, eq. 6; negative parts clipped: clustering never narrows an interval).

    Parameters
    ----------
    skill : ndarray (S, K)
        Posterior draws of the skills.
    obs : lib.ranking.model.Observations
        Paired observations (votes or cells).
    means : dict
        Posterior means: ``alpha`` (J,), ``b`` ((C - 1,) shared or (J, C - 1)), optional ``gamma``,
        ``delta`` (pairs,) and ``style`` (features,).
    transform : bool
        Also move the draws to the clustered covariance (``skill_draws``).

    Returns
    -------
    Clustering

    Notes
    -----
    Memory: the design effect needs two (K, K) arrays, ``G_c - G_n`` and LAPACK's eigenvectors of it (its
    positive part is taken from its positive eigenpairs, :func:`positive_part_factor`), and the (C, K)
    per-prompt scores; Sigma is used only through the draws (``diag(Sigma E Sigma)`` from ``Sigma F``,
    (K, p)). Moving the draws (``transform``) needs about eight (K, K) arrays more. Before, the check held
    about twelve (K, K) arrays: 10 GB for 10,000 systems. ``lib.ranking.budget`` counts both.
    """
    k = skill.shape[1]
    mean = skill.mean(axis=0)
    n_prompts = len(np.unique(obs.prompt))
    if len(skill) < 3 or not np.ptp(skill, axis=0).any():  # no spread to widen (a stuck chain is flagged apart)
        return Clustering(float("nan"), n_prompts, False, skill)
    loc = mean[obs.system_b] - mean[obs.system_a]
    if "gamma" in means:
        loc = loc + means["gamma"] * obs.side
    if "delta" in means:
        loc = loc + means["delta"][obs.pair]
    if "style" in means:  # style control's covariates (lib.ranking.model)
        loc = loc + obs.features @ means["style"]
    alpha = means["alpha"][obs.prompt]
    b = np.atleast_2d(means["b"])
    b = b[np.zeros_like(obs.prompt) if len(b) == 1 else obs.prompt]  # (N, C - 1)
    upper = expit(alpha[:, None] * (loc[:, None] - b))  # P(y >= c), c = 1..C-1
    cum = np.column_stack([np.ones(len(loc)), upper, np.zeros(len(loc))])
    rows = np.arange(len(loc))
    lo, hi = cum[rows, obs.code], cum[rows, obs.code + 1]
    with np.errstate(all="ignore"):
        d = alpha * (lo * (1 - lo) - hi * (1 - hi)) / np.maximum(lo - hi, 1e-300)
    with np.errstate(all="ignore"):
        excess = cluster_scores(obs.system_b, obs.system_a, d, obs.prompt, k)  # G_c, then G_c - G_n
        subtract_vote_scores(excess, obs.system_b, obs.system_a, d)
    if not np.isfinite(excess).all():  # means outside the model's range
        return Clustering(float("nan"), n_prompts, False, skill)
    factor = positive_part_factor(excess)  # F F' = (G_c - G_n)_+
    del excess
    centred = skill - mean
    var = np.einsum("sk,sk->k", centred, centred) / (len(skill) - 1)  # diag(Sigma)
    sigma_factor = centred.T @ (centred @ factor) / (len(skill) - 1)  # Sigma F
    varies = var > 1e-12 * var.max()
    clustered_var = var + np.einsum("kp,kp->k", sigma_factor, sigma_factor)  # diag(Sigma + Sigma F F' Sigma)
    design_effect = float(np.mean(clustered_var[varies] / var[varies]))
    draws = skill
    if transform:
        sigma = np.atleast_2d(np.cov(skill, rowvar=False))
        draws = mean + centred @ _transform(sigma, sigma + sigma_factor @ sigma_factor.T)
    return Clustering(design_effect, n_prompts, flagged(design_effect, n_prompts), draws)


def _transform(sigma: np.ndarray, target: np.ndarray) -> np.ndarray:
    """T with ``T' sigma T = target`` for ``target`` in the range of ``sigma`` (both PSD, (K, K)):
    ``sigma^(+1/2) target^(1/2)`` (symmetric roots; the pseudo-inverse on sigma's range, which the
    sum-to-zero or baseline constraint makes singular)."""
    w, v = np.linalg.eigh(sigma)
    keep = w > 1e-12 * w.max()
    inv_root = (v[:, keep] / np.sqrt(w[keep])) @ v[:, keep].T
    wt, vt = np.linalg.eigh(target)
    root = (vt * np.sqrt(np.clip(wt, 0, None))) @ vt.T
    return inv_root @ root


def cluster_by_prompt(idata: az.InferenceData, obs, apply: bool, warnings: list[str]) -> None:
    """Say when the votes are clustered by prompt; with ``apply`` replace the skill draws by the
    prompt-clustered ones (:func:`prompt_clustering`); ``warnings`` (the fit's) gets the notes."""
    post = idata["posterior"]
    skill = post["skill"]
    draws = skill.stack(sample=("chain", "draw")).transpose("sample", "system").to_numpy().astype(np.float64)
    means = {
        n: post[n].mean(("chain", "draw")).to_numpy() for n in ("alpha", "b", "gamma", "delta", "style") if n in post
    }
    result = prompt_clustering(draws, obs, means, transform=apply)
    if result.flagged:
        warnings.append(
            CLUSTER_NOTE.format(de=result.design_effect, n=result.n_prompts) + ("" if apply else CLUSTER_ADVICE)
        )
    if apply:
        shape = (skill.sizes["chain"], skill.sizes["draw"], skill.sizes["system"])
        # the stacked sample order is chain-major, as the reshape expects
        post["skill"] = skill.copy(data=result.skill_draws.reshape(shape).astype(skill.dtype))
        warnings.append(f"design effect {result.design_effect:.2f}." + CLUSTERED_NOTE)
