"""The linear mixed model of one comparison's judgments on a fully crossed table (every annotator judges
every prompt): ``x_jk = mu + p_j + r_k + e_jk`` with crossed random prompt and annotator effects, fitted by
maximum likelihood (:func:`crossed_ml`, lme4's ``lmer(REML = FALSE)``, Card et al. 2020's analysis) or by
REML with Satterthwaite's degrees of freedom for the mean (:func:`crossed_reml`, lmerTest's default test).

On a fully crossed table both likelihoods depend on the data through three sums of squares only (prompts,
annotators, residual), whose expectations are ``l_P = s2_e + n s2_p``, ``l_R = s2_e + J s2_r`` and
``l_E = s2_e`` (Searle, Casella & McCulloch 1992, ch. 4), so each fit is a problem in three numbers solved
exactly here (checked against statsmodels' MixedLM in ``tests/planning/test_mixed_model.py``). The
variance of the mean is ``l_0 / (J n)`` with ``l_0 = l_P + l_R - l_E``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq

ZERO = 1e-12
"""A sum of squares at most this share of the table's total is 0 (votes that agree exactly leave rounding
residue only)."""

_SCAN = 64
"""Points of the log grid on which the ML stationarity equation is scanned for its roots."""


class CrossedFit(NamedTuple):
    """A fit of the crossed model: the mean ``mu`` (B minus A), its standard error ``se``, the degrees of
    freedom of ``mu / se`` (``inf``: a Wald z) and the variance components (residual, prompt, annotator)."""

    mu: float
    se: float
    df: float
    residual: float
    prompt: float
    annotator: float


def _sums(scores: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Grand mean, sums of squares (prompts, annotators, residual) and their degrees of freedom."""
    n_j, n_k = scores.shape
    mu = float(scores.mean())
    by_prompt, by_annotator = scores.mean(axis=1), scores.mean(axis=0)
    ss = np.array(
        [
            n_k * float(((by_prompt - mu) ** 2).sum()),
            n_j * float(((by_annotator - mu) ** 2).sum()),
            float(((scores - by_prompt[:, None] - by_annotator[None, :] + mu) ** 2).sum()),
        ]
    )
    ss[ss <= ZERO * max(ss.sum(), np.finfo(float).tiny)] = 0.0
    return mu, ss, np.array([n_j - 1, n_k - 1, (n_j - 1) * (n_k - 1)], dtype=float)


def _fit(mu: float, levels: np.ndarray, df_mean: float, shape: tuple[int, int]) -> CrossedFit:
    """The fit from the expected mean squares ``levels`` = (l_P, l_R, l_E)."""
    n_j, n_k = shape
    l_p, l_r, l_e = levels
    l_0 = max(l_p + l_r - l_e, 0.0)
    return CrossedFit(
        mu, float(np.sqrt(l_0 / (n_j * n_k))), df_mean, float(l_e), float(l_p - l_e) / n_k, float(l_r - l_e) / n_j
    )


def _one_way(scores: np.ndarray, ddof: int) -> CrossedFit:
    """One prompt or one annotator: prompt (or annotator) and residual cannot be told apart; the mean's variance
    is the judgments' variance over their number (``ddof`` 0: ML, a Wald z; 1: the t-test's)."""
    x = scores.ravel()
    var = float(((x - x.mean()) ** 2).sum() / (len(x) - ddof)) if len(x) > ddof else 0.0
    dof = np.inf if ddof == 0 else len(x) - 1.0
    return CrossedFit(float(x.mean()), float(np.sqrt(var / len(x))), dof, var, 0.0, 0.0)


def crossed_ml(scores: np.ndarray) -> CrossedFit:
    """The crossed model fitted by maximum likelihood (lme4's ``lmer(REML = FALSE)``), Wald z (``df`` inf).

    ``-2 log L = sum_X (df_X log l_X + SS_X / l_X) + log l_0`` over X = prompts, annotators, residual, with
    ``l_P, l_R >= l_E > 0`` (a variance of 0 is allowed, as lmer's singular fits). For a given ``l_0 = c`` each
    ``l_X`` solves a quadratic, so the interior maximum is a root of one equation in c, found on a grid and
    refined (Brent); the faces where a variance is 0 have closed forms; the best is kept. When the annotators
    agree exactly on every prompt (no residual) the likelihood grows without bound as ``l_E`` goes to 0: its
    limit is returned (statsmodels fails there with log(0)).

    Parameters
    ----------
    scores : ndarray, shape (J, n), float
        Judgment of annotator k on prompt j (B minus A), every cell filled.

    Returns
    -------
    CrossedFit
        ``se`` is ``sqrt(l_0 / (J n))`` at the maximum, 0 when every judgment is the same. With one prompt or
        one annotator: the one-way model (prompt or annotator and residual cannot be told apart).
    """
    scores = np.asarray(scores, dtype=float)
    if min(scores.shape) < 2:
        return _one_way(scores, ddof=0)
    mu, ss, df = _sums(scores)
    if not ss.any():
        return CrossedFit(mu, 0.0, np.inf, 0.0, 0.0, 0.0)
    return _fit(mu, _ml_levels(ss, df), np.inf, scores.shape)


def _ml_levels(ss: np.ndarray, df: np.ndarray) -> np.ndarray:
    """(l_P, l_R, l_E) maximising the ML likelihood (:func:`crossed_ml`); with no residual (``SS_E = 0``), the
    limit as ``l_E`` goes to 0."""
    ss_p, ss_r, ss_e = ss
    df_p, df_r, df_e = df

    def free(ss_x: float, df_x: float, c):  # root of df/l - ss/l^2 + 1/c = 0 (0 without SS); c scalar or array
        return 2 * ss_x / (df_x + np.sqrt(df_x**2 + 4 * ss_x / c))

    def residual(c):  # root of df/l - ss/l^2 - 1/c = 0 near SS/df (it needs c >= 4 SS / df^2)
        return 2 * ss_e / (df_e + np.sqrt(np.maximum(df_e**2 - 4 * ss_e / c, 0.0))) if df_e > 0 else 0.0 * c

    def gap(c):  # 0 where the three roots give back l_0 = c: a stationary point
        return free(ss_p, df_p, c) + free(ss_r, df_r, c) - residual(c) - c

    low = 4 * ss_e / df_e**2 if ss_e > 0 else 1e-12 * ss.sum() / df.sum()
    grid = np.geomspace(low, 2 * (ss_p / df_p + ss_r / df_r) + 2 * low, _SCAN)  # gap < 0 beyond the top
    values = gap(grid)
    candidates = []
    for k in np.flatnonzero(np.sign(values[:-1]) != np.sign(values[1:])):
        c = brentq(gap, grid[k], grid[k + 1], xtol=1e-15 * grid[k + 1], rtol=4 * np.finfo(float).eps)
        levels = np.array([free(ss_p, df_p, c), free(ss_r, df_r, c), float(residual(c))])
        if levels[0] >= levels[2] and levels[1] >= levels[2]:
            candidates.append(levels)
    if ss_e > 0:  # faces: a variance of 0 ties l_P (or l_R, or both) to l_E; l_0 is then the other level
        pooled_p, pooled_r = (ss_p + ss_e) / (df_p + df_e), (ss_r + ss_e) / (df_r + df_e)
        l_p, l_r = ss_p / (df_p + 1), ss_r / (df_r + 1)
        candidates += [np.array([pooled_p, l_r, pooled_p])] if l_r >= pooled_p else []
        candidates += [np.array([l_p, pooled_r, pooled_r])] if l_p >= pooled_r else []
        candidates.append(np.full(3, ss.sum() / (df.sum() + 1)))

    def minus2(levels: np.ndarray) -> float:  # -2 log L; a level 0 (no SS: the limit) leaves out its term
        l_p, l_r, l_e = levels
        terms = sum(d * np.log(lv) + s / lv for d, s, lv in zip(df, ss, levels, strict=True) if lv > 0)
        return float(terms + np.log(l_p + l_r - l_e))

    return min(candidates, key=minus2)


def crossed_reml(scores: np.ndarray) -> CrossedFit:
    """The crossed model fitted by REML, with Satterthwaite's degrees of freedom for ``mu / se`` (lmerTest's
    default test of a mixed model's coefficient).

    REML drops the mean's term from :func:`crossed_ml`'s likelihood, so each level is its mean square
    ``SS_X / df_X``, except that ``l_P`` and ``l_R`` may not fall below ``l_E``: a mean square below the
    residual's is pooled with it (a variance of 0; weighted by degrees of freedom, smallest first). The variance
    of the mean, ``l_0 / (J n)``, is a combination of the pooled mean squares, and its degrees of freedom are
    Satterthwaite's (1946): ``l_0^2 / sum_B (c_B L_B)^2 / df_B`` over the pooled blocks B with coefficients
    ``c_B`` (+1 for prompts and annotators, -1 for the residual). In Card et al. 2020's high-variance design
    with no difference, at 100 items x 10 workers it declares a difference in 5.1% of 1,000 studies where the
    ML Wald z does in 9%; at 3 workers in 7.7% (ML: 17%): 2 degrees of freedom for the workers' variance, and
    an estimate of it that is 0 in some studies (``tests/planning/test_mixed_model.py``).

    Parameters
    ----------
    scores
        As in :func:`crossed_ml`.

    Returns
    -------
    CrossedFit
        With one prompt or one annotator: the one-sample t-test of the judgments (df = J n - 1).
    """
    scores = np.asarray(scores, dtype=float)
    if min(scores.shape) < 2:
        return _one_way(scores, ddof=1)
    mu, ss, df = _sums(scores)
    block = {2}  # the residual's block, and the levels pooled into it
    for x in sorted((0, 1), key=lambda k: ss[k] / df[k]):
        if ss[x] / df[x] < ss[list(block)].sum() / df[list(block)].sum():
            block.add(x)
    levels = ss / df
    levels[list(block)] = ss[list(block)].sum() / df[list(block)].sum()
    coefficient = np.array([1.0, 1.0, -1.0])
    blocks = [[x] for x in (0, 1) if x not in block] + [sorted(block)]
    terms = [(coefficient[b].sum() * levels[b[0]]) ** 2 / df[b].sum() for b in blocks]
    fit = _fit(mu, levels, np.inf, scores.shape)
    l_0 = fit.se**2 * scores.size
    dof = l_0**2 / sum(terms) if sum(terms) > 0 else df.sum()
    return fit._replace(df=float(dof))
