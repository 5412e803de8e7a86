"""The prediction-powered Bradley–Terry estimator against ``ppi_py`` and its own limits (lambda = 0, 1)."""

from __future__ import annotations

import numpy as np
import ppi_py.ppi
import pytest
from scipy.stats import norm

from lib.errors import DesignError
from lib.judges.ppi import SkillFit, classical_fit, design, rank_sets, rectified_fit, skill_fit


@pytest.fixture
def ppi_logistic_ci(monkeypatch):
    """``ppi_py.ppi_logistic_ci`` with its numba functions run as Python: numba would compile them for
    about 20 s, far longer than the loops take here (they are looked up in the module at each call)."""
    for name, value in vars(ppi_py.ppi).copy().items():
        if hasattr(value, "py_func"):  # a numba dispatcher
            monkeypatch.setattr(ppi_py.ppi, name, value.py_func)
    return ppi_py.ppi.ppi_logistic_ci


K = 5


def binary_items(seed: int, m: int = 1200, copy: float = 0.7):
    """0/1 human and judge scores on random pairs of K systems (no ties: ppi_py's logistic case)."""
    rng = np.random.default_rng(seed)
    skills = np.linspace(-1, 1, K)
    first = rng.integers(0, K, m)
    second = (first + rng.integers(1, K, m)) % K
    y = (rng.random(m) < 1 / (1 + np.exp(-(skills[first] - skills[second])))).astype(float)
    yhat = np.where(rng.random(m) < copy, y, rng.random(m) < 0.5).astype(float)
    return design(first, second, K), y, yhat


@pytest.mark.parametrize("lam", [0.0, 0.4, 1.0])
def test_fixed_lambda_matches_ppi_py_logistic_interval(ppi_logistic_ci, lam):
    x, y, yhat = binary_items(0)
    n = 200
    theta, cov, used = rectified_fit(x[:n], y[:n], yhat[:n], x[n:], yhat[n:], lam=lam)
    low, high = ppi_logistic_ci(x[:n], y[:n], yhat[:n], x[n:], yhat[n:], alpha=0.05, lam=lam)
    assert used == lam
    np.testing.assert_allclose(theta, (low + high) / 2, atol=1e-6)
    np.testing.assert_allclose(norm.ppf(0.975) * np.sqrt(np.diag(cov)), (high - low) / 2, rtol=1e-6)


def test_tuned_lambda_is_in_the_unit_interval_and_close_to_ppi_py(ppi_logistic_ci):
    x, y, yhat = binary_items(1)
    n = 200
    theta, cov, lam = rectified_fit(x[:n], y[:n], yhat[:n], x[n:], yhat[n:])
    low, high = ppi_logistic_ci(x[:n], y[:n], yhat[:n], x[n:], yhat[n:], alpha=0.05)
    assert 0 < lam < 1
    # ppi_py tunes lambda once more at the tuned estimate; the two answers differ by far less than the interval
    half = (high - low) / 2
    assert np.abs(theta - (low + high) / 2).max() < 0.05 * half.min()
    np.testing.assert_allclose(norm.ppf(0.975) * np.sqrt(np.diag(cov)), half, rtol=0.02)


def test_lambda_zero_is_the_human_only_fit_and_a_useless_judge_gets_little_weight():
    x, y, yhat = binary_items(2, copy=0.0)  # the judge is a coin
    n = 300
    human = classical_fit(x[:n], y[:n], what="human votes")
    ppi = skill_fit(x[:n], y[:n], yhat[:n], x[n:], yhat[n:])
    zero = skill_fit(x[:n], y[:n], yhat[:n], x[n:], yhat[n:], lam=0.0)
    np.testing.assert_allclose(zero.skill, human.skill, atol=1e-8)
    np.testing.assert_allclose(zero.cov, human.cov, atol=1e-10)
    assert ppi.lam < 0.2
    assert np.trace(ppi.cov) < 1.05 * np.trace(human.cov)


def test_skills_sum_to_zero_and_ties_are_half_a_win():
    # Two systems, every item a tie: equal skills. Then one win and one loss per tie item: still equal.
    x = design(np.zeros(40, int), np.ones(40, int), 2)
    fit = classical_fit(x, np.full(40, 0.5), what="votes")
    assert fit.skill.sum() == pytest.approx(0.0, abs=1e-12)
    assert fit.skill == pytest.approx([0.0, 0.0], abs=1e-9)
    x3, y3, _ = binary_items(3)
    assert classical_fit(x3, y3, what="votes").skill.sum() == pytest.approx(0.0, abs=1e-9)


def test_a_system_that_never_loses_gives_no_skill():
    x = design(np.zeros(30, int), np.ones(30, int), 2)
    with pytest.raises(DesignError, match="no finite Bradley–Terry skills"):
        classical_fit(x, np.ones(30), what="human votes")


def test_rank_sets_separate_clear_gaps_and_join_overlaps():
    cov = np.diag([0.01, 0.01, 0.01, 0.01])
    fit = SkillFit(np.array([2.0, 0.05, 0.0, -2.05]), cov, 0.5)
    low, high = rank_sets(fit)
    assert low.tolist() == [1, 2, 2, 4] and high.tolist() == [1, 3, 3, 4]
    wide = SkillFit(fit.skill, np.eye(4) * 100.0, 0.5)
    low, high = rank_sets(wide)
    assert low.tolist() == [1, 1, 1, 1] and high.tolist() == [4, 4, 4, 4]


def test_judge_only_items_that_do_not_link_every_system_still_give_an_estimate():
    x, y, yhat = binary_items(4)
    first_two = (np.abs(x[:, 1:]).sum(axis=1) == 0) & (x[:, 0] != 0)  # items between systems 0 and 1 only
    unl = np.flatnonzero(first_two)[50:]
    lab = np.setdiff1d(np.arange(300), unl)
    with pytest.raises(DesignError):  # plain PPI (lambda = 1) has no finite estimate here
        rectified_fit(x[lab], y[lab], yhat[lab], x[unl], yhat[unl], lam=1.0)
    fit = skill_fit(x[lab], y[lab], yhat[lab], x[unl], yhat[unl])
    assert 0 <= fit.lam < 1 and np.isfinite(fit.cov).all()
