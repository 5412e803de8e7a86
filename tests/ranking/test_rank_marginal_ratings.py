"""The ratings likelihood with each prompt's effect eta_j and discrimination alpha_j integrated out by adaptive
Gauss-Hermite quadrature (issue 35 item 1, :mod:`lib.ranking.marginal_ratings`): its gradient and Hessian are the
exact ones, its nodes are enough, it agrees with many fixed nodes at the prior's scale, and the default fit of
ratings takes it and gives the full model's variables. Against NUTS on the full model: the validation test of
``tests/ranking/test_rank_laplace_nuts.py`` and ``bench/bench_ratings_quadrature.py``."""

from __future__ import annotations

import numpy as np
import pytest

from lib.ranking import marginal_ratings
from lib.ranking.data import ranking_data
from lib.ranking.fit import RankSettings, fit_ranking
from lib.ranking.model import observations, one_score_a_cell
from lib.ranking.simulate import simulate_ratings
from tests.ranking.test_ranking_annotators import ratings_input


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))


@pytest.fixture(scope="module")
def two_a_cell():
    """5 systems x 30 prompts, two scores a (prompt, system) cell: alpha_j free (2-D quadrature)."""
    scores, _ = simulate_ratings(5, 30, 6, raters_per_cell=2, severity_sd=0.0, seed=3)
    return ranking_data(ratings_input(scores))


@pytest.fixture(scope="module")
def one_a_cell():
    """4 systems x 30 prompts, one score a cell: alpha_j = 1 (1-D quadrature over eta_j)."""
    scores, _ = simulate_ratings(4, 30, 6, raters_per_cell=1, severity_sd=0.0, seed=5)
    return ranking_data(ratings_input(scores))


def _differences(f, theta, eps):
    return np.array([(f(theta + eps * e) - f(theta - eps * e)) / (2 * eps) for e in np.eye(len(theta))])


@pytest.mark.parametrize("case", ["two_a_cell", "one_a_cell"])
def test_the_gradient_and_hessian_are_exact(case, request):
    """The log-sum-exp's gradient and Hessian (node-weighted score Hessians + each prompt's covariance over nodes,
    through the ordered thresholds' and log sigma_eta's transforms) equal the differences of the value and of the
    gradient; without the covariance the Hessian is larger. One with a baseline."""
    obs = observations(request.getfixturevalue(case))
    fixed = one_score_a_cell(obs)
    assert fixed == (case == "one_a_cell")
    model = marginal_ratings.RatingsMarginal(obs, baseline=1 if fixed else None, fixed_alpha=fixed)
    theta = model.start() + 0.2 * np.random.default_rng(1).standard_normal(model.layout.reduced)
    model.adapt(theta + 0.1)  # each prompt's own nodes, held while the derivatives are taken

    def grad(t):
        return model.evaluate(t, 1).grad

    exact = _differences(grad, theta, 1e-5)
    np.testing.assert_allclose(model.evaluate(theta, 3).hess, exact, atol=1e-6 * np.abs(exact).max())
    value = _differences(lambda t: model.evaluate(t, 0).value, theta, 1e-6)
    np.testing.assert_allclose(grad(theta), value, atol=1e-6 * np.abs(value).max())
    assert np.linalg.eigvalsh(model.evaluate(theta, 2).hess - exact).min() > -1e-6


class _FixedNodes(marginal_ratings.RatingsMarginal):
    """The quadrature at the prior's nodes for every prompt (no adaptation)."""

    def adapt(self, theta):
        pass


@pytest.mark.parametrize("case", ["two_a_cell", "one_a_cell"])
def test_the_adaptive_nodes_agree_with_many_fixed_nodes_and_with_more_of_their_own(case, request):
    """15 adaptive nodes a dimension against 25 and against 40 at the prior's scale (1,600 a prompt in two
    dimensions): the mode, the posterior SDs and each prompt's posterior mean of (w_j, z_j) given the rest within
    1e-4 of their SDs (measured: 5e-6 at most; 15 nodes at the prior's scale are 1.7e-3 off in two dimensions)."""
    obs = observations(request.getfixturevalue(case))
    fixed = one_score_a_cell(obs)
    fits = [
        model(obs, baseline=None, fixed_alpha=fixed, nodes=k).fit()
        for model, k in (
            (_FixedNodes, 40),
            (marginal_ratings.RatingsMarginal, 15),
            (marginal_ratings.RatingsMarginal, 25),
        )
    ]
    reference = fits[0]
    sd = np.sqrt(np.diag(np.linalg.inv(reference.precision)))
    local_sd = np.sqrt(np.diagonal(reference.cov, axis1=1, axis2=2))
    for fit in fits[1:]:
        np.testing.assert_array_less(np.abs(fit.mode - reference.mode), 1e-4 * sd)
        np.testing.assert_array_less(np.abs(np.sqrt(np.diag(np.linalg.inv(fit.precision))) / sd - 1), 1e-4)
        np.testing.assert_array_less(np.abs(fit.mean - reference.mean), 1e-4 * local_sd)


@pytest.mark.parametrize("case", ["two_a_cell", "one_a_cell"])
def test_the_default_fit_of_ratings_takes_the_quadrature_and_gives_the_full_models_variables(case, request):
    """The Laplace fit (the default) of ratings integrates eta_j (and alpha_j) out, says so, builds no PyMC model,
    and gives the variables and dims of the full model's posterior; alpha_j = 1 where each cell holds one score."""
    rd = request.getfixturevalue(case)
    fit = fit_ranking(rd, RankSettings(draws=300, annotator_effect=False))
    note = fit.route  # said with the method, not among the warnings
    assert note.startswith(marginal_ratings.NOTE[:60]) and note not in fit.diagnostics.warnings
    post = fit.idata.posterior
    assert {str(k): post[k].dims[2:] for k in post.data_vars} == {
        "skill": ("system",),
        "alpha": ("prompt",),
        "b": ("threshold",),
        "sigma_eta": (),
        "eta": ("prompt",),
    }
    assert fit.mode is not None and set(fit.mode) == set(post.data_vars)
    assert np.all(np.diff(post["b"].to_numpy(), axis=-1) > 0)  # ordered in every draw
    np.testing.assert_allclose(post["skill"].sum("system"), 0.0, atol=1e-9)
    if case == "one_a_cell":
        assert "15 nodes a prompt" in note and "alpha_j integrated" not in note
        np.testing.assert_array_equal(post["alpha"], 1.0)
    else:
        assert "15 x 15 nodes" in note and post["alpha"].std() > 0


def test_annotator_severities_are_not_integrated_here(two_a_cell):
    obs = observations(two_a_cell)
    fit, note = marginal_ratings.laplace_fit(obs, RankSettings(annotator_effect=True), fixed_alpha=False)
    assert fit is None and "annotator severities" in note
