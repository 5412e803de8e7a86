"""The analyses a simulated study is put through (registered in :data:`lib.planning.design.ANALYSES`).

Each returns, per comparison, whether its 95% interval excludes 0 (the study "detects" the
difference), the estimate (for ranking the systems) and the interval. Intervals are on each
analysis's own scale: logits of theta for ``grm_map``, ``grm_bank`` and ``sign_test`` (logit of the share of
B's wins, which is theta when alpha = 1 and there are no ties), mean score difference for
``t_test``, ``lmm`` and ``lmm_reml``; ``wilcoxon`` gives a test, not an interval (NaN). Each also gives a z
statistic by which a plan calibrates it under the null: the normal quantile of its two-sided p-value with the
estimate's sign (so a threshold on |z| is one on p), for the GRM analyses the EAP over its posterior SD.
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import logit

from lib.planning.design import ANALYSES
from lib.planning.mixed import crossed_ml, crossed_reml
from lib.planning.simulate import Study

ALPHA = 0.05
"""Test size: a difference is detected when its 95% interval excludes 0 (two-sided, 5%)."""
LEVEL = 1 - ALPHA

GRM_CATEGORIES = 7
"""Net ratings spanning more than this many values are rescaled to -3..3, the project's rule for
unequal vote counts (``lib.judgments.ratings.net_ratings``), so that the MAP solver keeps one shape."""


@dataclass
class Result:
    """Per comparison (shape (I,) each): ``excludes_zero`` (bool: detected at the nominal 5% level),
    ``estimate`` (B minus A), the 95% interval ``low`` to ``high`` (NaN without an interval) and ``z``: the
    statistic a threshold calibrated under the null applies to (:func:`lib.planning.power.plan`)."""

    excludes_zero: np.ndarray
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    z: np.ndarray | None = None

    @property
    def width(self) -> np.ndarray:
        """Width of the 95% interval, shape (I,)."""
        return self.high - self.low


def analyse(name: str, study: Study) -> Result:
    """Run the analysis registered as ``name`` (:data:`lib.planning.design.ANALYSES`) on a study."""
    module, function = ANALYSES[name].run.split(":")
    return getattr(importlib.import_module(module), function)(study)


def net_codes(study: Study) -> tuple[np.ndarray, int]:
    """Net rating of every (comparison, prompt) cell as a category index for the GRM.

    Returns
    -------
    codes : ndarray, shape (I, J), int64, 0..K-1
    n_categories : int
        K = 2 n H + 1 for n annotators and categories -H..H, or 7 after rescaling to -3..3
        (halves away from zero) when that is larger.
    """
    assert study.categories is not None, "the GRM analyses need ordered categories"
    half = int(np.max(np.abs(study.categories)))
    n = study.scores.shape[2]
    net = study.scores.sum(axis=2)
    if 2 * n * half + 1 <= GRM_CATEGORIES:
        return (net + n * half).astype(np.int64), 2 * n * half + 1
    top = GRM_CATEGORIES // 2
    scaled = top * net / (n * half)
    return (np.sign(scaled) * np.floor(np.abs(scaled) + 0.5) + top).astype(np.int64), GRM_CATEGORIES


def _grid_result(loglik: np.ndarray) -> Result:
    """Posterior of each theta on the grid (prior N(0, 1)) from its log-likelihood (I, G): EAP, the
    central 95% interval and EAP / posterior SD."""
    from lib.irt.readouts import DEFAULT_GRID, grid_moments, posterior_on_grid

    post = posterior_on_grid(loglik[:, None, :])
    cdf = np.cumsum(post, axis=1)
    tail = (1 - LEVEL) / 2
    low = np.array([np.interp(tail, c, DEFAULT_GRID) for c in cdf])
    high = np.array([np.interp(1 - tail, c, DEFAULT_GRID) for c in cdf])
    mean, sd = grid_moments(post, DEFAULT_GRID)
    return Result((low > 0) | (high < 0), mean, low, high, mean / sd)


def grm_map(study: Study) -> Result:
    """The project's GRM on the net ratings: MAP item parameters (:func:`lib.irt.map.fit_map`), then each
    theta's posterior by quadrature given them. The cutpoints are those ``fit`` chooses for such data
    (:func:`lib.irt.data_checks.auto_cutpoints`): antisymmetric per prompt when the prompts hold enough
    comparisons to inform them, else one shared set (e.g. two systems).

    Treating the estimated alpha and b as known makes this interval too narrow: with no true
    difference it excluded 0 in 13% of studies of 20 comparisons x 50 prompts, not 5%. The plan reports
    that rate and the threshold on ``|z|`` that holds 5% (the 95th percentile of ``|z|`` in null twins of
    the same studies, :func:`lib.planning.power.plan`, ``docs/planner.md``); the interval returned here is
    the nominal one.
    """
    from lib.irt.data_checks import informs_own_thresholds
    from lib.irt.map import fit_map
    from lib.irt.readouts import item_loglik

    codes, n_categories = net_codes(study)
    point = fit_map(
        codes, n_categories, cutpoints="antisymmetric" if informs_own_thresholds(len(codes), n_categories) else "shared"
    )
    return _grid_result(np.stack([item_loglik(row, point.alpha, point.b).sum(axis=0) for row in codes]))


def grm_bank(study: Study) -> Result:
    """The GRM with the item parameters of a calibrated prompt bank (the pilot's, or the stated
    ones): every annotator's judgment enters the likelihood of theta with its prompt's alpha and
    b, and theta's posterior is computed by quadrature (Bock & Mislevy 1982), prior N(0, 1)."""
    from lib.irt.readouts import item_loglik

    assert study.categories is not None and study.b is not None, "the GRM analyses need ordered categories"
    n = study.scores.shape[2]
    codes = np.searchsorted(study.categories, study.scores).transpose(0, 2, 1).reshape(len(study.scores), -1)
    alpha, b = np.tile(study.alpha, n), np.tile(study.b, (n, 1))  # (n J,): annotator-major, as codes
    return _grid_result(np.stack([item_loglik(row, alpha, b).sum(axis=0) for row in codes]))


def _prompt_means(study: Study) -> np.ndarray:
    """Mean judgment over annotators, shape (I, J): the per-prompt B-minus-A difference."""
    return study.scores.mean(axis=2)


def t_test(study: Study) -> Result:
    """Paired t-test of the per-prompt mean difference (Student 1908): the t interval of its mean. Identical
    non-zero differences (e.g. every vote for B) give ``t = inf``: detected, the interval the point."""
    d = _prompt_means(study)
    with warnings.catch_warnings():  # identical differences (tiny designs): NaN interval, handled below
        warnings.simplefilter("ignore", RuntimeWarning)
        test = stats.ttest_1samp(d, 0.0, axis=1)
        ci = test.confidence_interval(LEVEL)
    low, high = np.nan_to_num(ci.low, nan=0.0), np.nan_to_num(ci.high, nan=0.0)  # constant data: no detection
    return Result(
        (low > 0) | (high < 0),
        d.mean(axis=1),
        low,
        high,
        _signed_z(np.nan_to_num(test.pvalue, nan=1.0), d.mean(axis=1)),
    )


def wilcoxon(study: Study) -> Result:
    """Wilcoxon signed-rank test of the per-prompt mean difference (zero differences dropped,
    scipy's default), detected at p < 0.05; no interval."""
    d = _prompt_means(study)
    p_value = np.ones(len(d))
    for i, row in enumerate(d):
        if np.any(row != 0):
            p_value[i] = stats.wilcoxon(row).pvalue
    nan = np.full(len(d), np.nan)
    median = np.median(d, axis=1)
    return Result(p_value < ALPHA, median, nan, nan, _signed_z(p_value, median))


def sign_test(study: Study) -> Result:
    """Exact sign test on every annotator's vote, ties left out: detected when the two-sided
    binomial p < 0.05 (for p0 = 1/2, twice the smaller tail); the estimate and width are the
    logit of B's win share (+1/2 per side) and of its Clopper-Pearson interval (unbounded without
    votes)."""
    k = (study.scores > 0).sum(axis=(1, 2))
    n = k + (study.scores < 0).sum(axis=(1, 2))
    p_value = np.minimum(1.0, 2 * np.minimum(stats.binom.cdf(k, n, 0.5), stats.binom.sf(k - 1, n, 0.5)))
    tail = ALPHA / 2
    low = np.where(k > 0, stats.beta.ppf(tail, k, n - k + 1), 0.0)
    high = np.where(k < n, stats.beta.ppf(1 - tail, k + 1, n - k), 1.0)
    with np.errstate(divide="ignore"):  # a share of 0 or 1: an unbounded interval
        low, high = logit(low), logit(high)
    estimate = logit((k + 0.5) / (n + 1))
    return Result((n > 0) & (p_value < ALPHA), estimate, low, high, _signed_z(np.where(n > 0, p_value, 1.0), estimate))


def _signed_z(p_value: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """The normal quantile of a two-sided p-value with the estimate's sign: the statistic by which a test
    without one of its own is calibrated under the null (a larger |z| is a smaller p)."""
    return np.sign(direction) * stats.norm.isf(np.clip(p_value, 1e-300, 1.0) / 2)


def _wald(mu: np.ndarray, se: np.ndarray, df: np.ndarray) -> Result:
    """Interval ``mu +- t SE`` (t the 97.5% quantile with ``df`` degrees of freedom, the normal one for
    ``inf``) and its test. An SE of 0 with a mean that is not (every judgment the same, e.g. 25 of 25 votes for
    B) is a detection, as the t-test gives it (``t = inf``); before, lmm took it as 'no difference'."""
    quantile = stats.t.ppf(1 - ALPHA / 2, df)
    half = quantile * se
    with np.errstate(divide="ignore", invalid="ignore"):
        p_value = np.where(se > 0, 2 * stats.t.sf(np.abs(mu) / se, df), np.where(mu != 0, 0.0, 1.0))
    return Result(p_value < ALPHA, mu, mu - half, mu + half, _signed_z(p_value, mu))


def lmm(study: Study) -> Result:
    """Linear mixed model per comparison fitted by maximum likelihood (:func:`lib.planning.mixed.crossed_ml`),
    the Wald interval ``mu +- 1.96 SE`` and its test: the analysis of Card et al. 2020's power simulations
    (lme4, ``t > 1.96``) on the paired difference of each annotator's judgments of one prompt. With few
    annotators it is liberal (their variance from 3 people is too small): ``lmm_reml`` is the valid test."""
    return _wald(*np.array([crossed_ml(scores)[:3] for scores in study.scores]).T)


def lmm_reml(study: Study) -> Result:
    """The same mixed model fitted by REML, t interval and test with Satterthwaite's degrees of freedom
    (:func:`lib.planning.mixed.crossed_reml`; lmerTest's default test)."""
    return _wald(*np.array([crossed_reml(scores)[:3] for scores in study.scores]).T)
