"""The prediction-powered Bradley–Terry estimator against ``ppi_py`` and its own limits (lambda = 0, 1); several
judges, prompt clusters and max-t rank-sets (issue 34)."""

from __future__ import annotations

import numpy as np
import ppi_py.ppi
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import norm

from lib.errors import DesignError
from lib.judges.ppi import (
    SkillFit,
    classical_fit,
    design,
    max_t_critical,
    optimal_weights,
    rank_sets,
    rectified_fit,
    skill_fit,
)


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


# ------------------------------------------------------------- several judges (issue 34 item 2)


def kkt_minimum(quad: np.ndarray, lin: np.ndarray) -> float:
    """The exact minimum of ``w' quad w - 2 lin' w`` over ``w >= 0, sum w <= 1``: every face of the feasible
    set (free judges S; the sum constraint active or not), its stationary point, the best feasible one."""
    j, best = len(lin), 0.0
    for mask in range(1, 2**j):
        free = [k for k in range(j) if mask >> k & 1]
        q, c = quad[np.ix_(free, free)], lin[free]
        ones = np.ones(len(free))
        kkt = np.block([[q, ones[:, None]], [ones[None, :], np.zeros((1, 1))]])
        candidates = [np.linalg.lstsq(q, c, rcond=None)[0], np.linalg.lstsq(kkt, np.r_[c, 1.0], rcond=None)[0][:-1]]
        for w_free in candidates:
            if (w_free >= -1e-12).all() and w_free.sum() <= 1 + 1e-12:
                w = np.zeros(j)
                w[free] = w_free
                best = min(best, float(w @ quad @ w - 2 * lin @ w))
    return best


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, (4, 4), elements=st.floats(-2, 2)), st.floats(0.05, 20))
def test_the_judges_weights_are_the_exact_minimum_of_the_covariance_trace(root, ratio):
    # as in a fit: lin the human terms' covariance with each judge's, quad the judges' covariance times 1 + n / N
    cov = root @ root.T + 1e-6 * np.eye(4)
    quad, lin = cov[1:, 1:] * (1 + ratio), cov[0, 1:]
    w = optimal_weights(quad, lin)
    assert (w >= 0).all() and w.sum() <= 1 + 1e-9
    # to a millionth of the covariance trace (a judge copied three times: SLSQP stops that close)
    assert float(w @ quad @ w - 2 * lin @ w) <= kkt_minimum(quad, lin) + 1e-6 * np.trace(cov)


def constant_and_good_judges(seed: int, m: int = 1500, n: int = 250):
    """Items of 5 systems; a good judge (copies the human vote 70% of the time, else a coin) and a judge that
    always answers A (the pair's first system, shown first at random)."""
    x, y, good = binary_items(seed, m=m, copy=0.7)
    yhat = np.column_stack([good, np.ones(m)])
    return x[:n], y[:n], yhat[:n], x[n:], yhat[n:]


def test_a_judge_that_always_answers_a_beside_a_good_one_costs_nothing():
    ratios, covered = [], []
    skills = np.linspace(-1, 1, K)
    for seed in range(100):
        x_l, y, yhat_l, x_u, yhat_u = constant_and_good_judges(seed)
        both = skill_fit(x_l, y, yhat_l, x_u, yhat_u)
        good = skill_fit(x_l, y, yhat_l[:, 0], x_u, yhat_u[:, 0])
        ratios.append(np.trace(both.cov) / np.trace(good.cov))
        low, high = both.interval()
        covered.append((low <= skills - skills.mean()) & (skills - skills.mean() <= high))
        assert both.weights[1] < 0.1 < both.weights[0]  # the constant judge gets (almost) no weight
    assert max(ratios) <= 1 + 1e-9  # never worse than the good judge alone
    assert np.mean(ratios) < 1
    assert np.mean(covered) >= 0.95 - 3 * (0.95 * 0.05 / np.size(covered)) ** 0.5


def test_several_judges_at_fixed_weights_are_one_combined_judge():
    x_l, y, yhat_l, x_u, yhat_u = constant_and_good_judges(5)
    w = np.array([0.5, 0.2])
    theta, cov, used = rectified_fit(x_l, y, yhat_l, x_u, yhat_u, lam=w)
    one = rectified_fit(x_l, y, yhat_l @ w / 0.7, x_u, yhat_u @ w / 0.7, lam=0.7)
    np.testing.assert_allclose(theta, one[0], atol=1e-9)
    np.testing.assert_allclose(cov, one[1], atol=1e-12)
    np.testing.assert_array_equal(used, w)


# ------------------------------------------------------------- prompt clusters (issue 34 item 6)


def prompts_with_every_pair(rng, n_prompts: int, tau: float):
    """Each prompt carries every pair of K systems; a prompt moves each system by N(0, tau^2) logits."""
    skills = np.linspace(-1, 1, K)
    a, b = np.triu_indices(K, 1)
    low, high = np.tile(a, n_prompts), np.tile(b, n_prompts)
    prompt = np.repeat(np.arange(n_prompts), len(a))
    shift = rng.normal(0, tau, (n_prompts, K))
    gap = skills[low] - skills[high] + shift[prompt, low] - shift[prompt, high]
    y = (rng.random(len(gap)) < 1 / (1 + np.exp(-gap))).astype(float)
    yhat = np.where(rng.random(len(y)) < 0.6, y, rng.random(len(y)) < 0.5).astype(float)
    return design(low, high, K), y, yhat, prompt


def test_the_human_only_clustered_covariance_is_statsmodels_cluster_robust_sandwich():
    import statsmodels.api as sm

    x, y, _, prompt = prompts_with_every_pair(np.random.default_rng(0), 60, 1.0)
    theta, cov, _ = rectified_fit(
        x, y, y, np.zeros((0, K - 1)), np.zeros(0), lam=0.0, clusters_l=prompt, clusters_u=prompt[:0]
    )
    glm = sm.GLM(y, x, family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": prompt, "use_correction": False}
    )
    np.testing.assert_allclose(theta, glm.params, atol=1e-8)
    np.testing.assert_allclose(cov * (60 - 1) / 60, glm.cov_params(), rtol=1e-6)


def test_prompt_clustered_intervals_hold_when_a_prompt_moves_every_pair():
    rng = np.random.default_rng(11)
    a, b = np.triu_indices(K, 1)
    # the population Bradley–Terry skills under the prompt effects: the fit to each pair's exact win rate
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    gap = np.linspace(-1, 1, K)[a] - np.linspace(-1, 1, K)[b]
    rate = (1 / (1 + np.exp(-(gap[:, None] + np.sqrt(2) * nodes[None, :])))) @ weights / weights.sum()
    truth = classical_fit(design(a, b, K), rate, what="rates").skill
    covered = {"clustered": [], "independent": []}
    for _ in range(150):
        x, y, yhat, prompt = prompts_with_every_pair(rng, 80, 1.0)
        n = 300  # 30 prompts with human votes, 50 with the judge's only
        for name, (cl, cu) in {"clustered": (prompt[:n], prompt[n:]), "independent": (None, None)}.items():
            fit = skill_fit(x[:n], y[:n], yhat[:n], x[n:], yhat[n:], clusters_l=cl, clusters_u=cu)
            low, high = fit.interval()
            covered[name].append((low <= truth) & (truth <= high))
    se = 3 * (0.95 * 0.05 / np.size(covered["clustered"])) ** 0.5
    assert np.mean(covered["clustered"]) >= 0.95 - se
    assert np.mean(covered["independent"]) < 0.95 - se  # items taken as independent: too narrow


# ------------------------------------------------------------- max-t rank-sets (issue 34 item 4)


def test_the_max_t_critical_value_is_tukeys_for_independent_equal_variances():
    from scipy.stats import studentized_range

    for k in (2, 4, 8):
        tukey = studentized_range.ppf(0.95, k, np.inf) / np.sqrt(2)
        assert max_t_critical(np.eye(k) * 0.3) == pytest.approx(tukey, abs=0.01)  # 3 x its error


@settings(max_examples=10, deadline=None)
@given(arrays(np.float64, (6, 6), elements=st.floats(-1, 1)))
def test_max_t_rank_sets_are_never_wider_than_bonferronis(root):
    cov = root @ root.T + 0.01 * np.eye(6)
    fit = SkillFit(np.linspace(-0.5, 0.5, 6), cov, 0.0)
    bonferroni = norm.ppf(1 - 0.05 / (2 * 15))
    assert max_t_critical(cov) <= bonferroni
    low, high = rank_sets(fit)
    b_low, b_high = rank_sets(fit, z=bonferroni)
    assert (low >= b_low).all() and (high <= b_high).all()
