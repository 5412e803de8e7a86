"""The analyses a simulated study is put through (registered in :data:`lib.planning.design.ANALYSES`).

Each returns, per comparison, whether its 95% interval excludes 0 (the study "detects" the
difference), the estimate (for ranking the systems) and the interval. Intervals are on each
analysis's own scale: logits of theta for ``grm_map``, ``grm_bank`` and ``sign_test`` (logit of the share of
B's wins, which is theta when alpha = 1 and there are no ties), mean score difference for
``t_test``; ``wilcoxon`` gives a test, not an interval (NaN).
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import logit

from lib.planning.design import ANALYSES
from lib.planning.simulate import Study

ALPHA = 0.05
"""Test size: a difference is detected when its 95% interval excludes 0 (two-sided, 5%)."""
LEVEL = 1 - ALPHA

GRM_CATEGORIES = 7
"""Net ratings spanning more than this many values are rescaled to -3..3, the project's rule for
unequal vote counts (``lib.ratings.net_ratings``), so that the MAP solver keeps one shape."""


@dataclass
class Result:
    """Per comparison (shape (I,) each): ``excludes_zero`` (bool), ``estimate`` (B minus A), the
    95% interval ``low`` to ``high`` (NaN without an interval) and, for the GRM, ``z``: the estimate
    over its posterior SD, the statistic that calibration under the null thresholds
    (:data:`lib.planning.design.Analysis.null_calibrated`)."""

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
    """The project's GRM on the net ratings: MAP item parameters (:func:`lib.irt.fit.fit_map`,
    antisymmetric cutpoints), then each theta's posterior by quadrature given them.

    Treating the estimated alpha and b as known makes this interval too narrow: with no true
    difference it excluded 0 in 13% of studies of 20 comparisons x 50 prompts, not 5%. The plan
    therefore calibrates it by simulation under the null (:func:`lib.planning.power.plan`): a
    detection is ``|z|`` above the 95th percentile of ``|z|`` in null twins of the same studies
    (``docs/planner.md``); the interval returned here is the uncalibrated one.
    """
    from lib.irt.fit import fit_map
    from lib.irt.readouts import item_loglik

    codes, n_categories = net_codes(study)
    point = fit_map(codes, n_categories)
    return _grid_result(np.stack([item_loglik(row, point.alpha, point.b).sum(axis=0) for row in codes]))


def grm_bank(study: Study) -> Result:
    """The GRM with the item parameters of a calibrated prompt bank (the pilot's, or the stated
    ones): every annotator's judgment enters the likelihood of theta with its prompt's alpha and
    b, and theta's posterior is computed by quadrature (Bock & Mislevy 1982), prior N(0, 1)."""
    from lib.irt.readouts import item_loglik

    n = study.scores.shape[2]
    codes = np.searchsorted(study.categories, study.scores).transpose(0, 2, 1).reshape(len(study.scores), -1)
    alpha, b = np.tile(study.alpha, n), np.tile(study.b, (n, 1))  # (n J,): annotator-major, as codes
    return _grid_result(np.stack([item_loglik(row, alpha, b).sum(axis=0) for row in codes]))


def _prompt_means(study: Study) -> np.ndarray:
    """Mean judgment over annotators, shape (I, J): the per-prompt B-minus-A difference."""
    return study.scores.mean(axis=2)


def t_test(study: Study) -> Result:
    """Paired t-test of the per-prompt mean difference (Student 1908): the t interval of its mean."""
    d = _prompt_means(study)
    with warnings.catch_warnings():  # identical differences (tiny designs): NaN interval, handled below
        warnings.simplefilter("ignore", RuntimeWarning)
        ci = stats.ttest_1samp(d, 0.0, axis=1).confidence_interval(LEVEL)
    low, high = np.nan_to_num(ci.low, nan=0.0), np.nan_to_num(ci.high, nan=0.0)  # constant data: no detection
    return Result((low > 0) | (high < 0), d.mean(axis=1), low, high)


def wilcoxon(study: Study) -> Result:
    """Wilcoxon signed-rank test of the per-prompt mean difference (zero differences dropped,
    scipy's default), detected at p < 0.05; no interval."""
    d = _prompt_means(study)
    detected = np.zeros(len(d), dtype=bool)
    for i, row in enumerate(d):
        if np.any(row != 0):
            detected[i] = stats.wilcoxon(row).pvalue < ALPHA
    nan = np.full(len(d), np.nan)
    return Result(detected, np.median(d, axis=1), nan, nan)


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
    return Result((n > 0) & (p_value < ALPHA), logit((k + 0.5) / (n + 1)), low, high)
