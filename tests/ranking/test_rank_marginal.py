"""The votes likelihood with each prompt's alpha integrated out by quadrature (issue 35 item 1,
:mod:`lib.ranking.marginal`): its Hessian is the exact one, its nodes are enough, and the default fit of an
arena's votes agrees with NUTS on the full model (skills, their intervals, each prompt's alpha)."""

from __future__ import annotations

import numpy as np
import pytest

from lib.ranking import marginal
from lib.ranking.fit import RankSettings, fit_ranking, rank_settings
from lib.ranking.model import learns_alpha_spread, observations
from lib.ranking.simulate import simulate_arena
from tests.ranking.conftest import arena_input, laplace_stand_in


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))


@pytest.fixture(scope="module")
def small():
    """6 systems x 100 prompts x 1,500 votes with ties, alpha spread 0.3 (learnt)."""
    return arena_input(simulate_arena(6, 100, 1500, log_alpha_sd=0.3, seed=0)[0])


@pytest.fixture(scope="module")
def nuts(small, tmp_path_factory):
    """NUTS on the full model (alpha_j as free variables)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EVAL_CACHE_DIR", str(tmp_path_factory.mktemp("nuts")))
        fit = fit_ranking(small, RankSettings(sampler="numpyro", chains=2, draws=600, tune=300, seed=1))
    assert fit.diagnostics.ess_bulk_min > 150 and fit.diagnostics.rhat_max < 1.02
    return fit


def _hessian_by_differences(model, theta, eps=1e-5):
    return np.array(
        [
            (model.value_grad(theta + eps * e)[1] - model.value_grad(theta - eps * e)[1]) / (2 * eps)
            for e in np.eye(len(theta))
        ]
    )


@pytest.mark.parametrize(
    "options", [{}, {"baseline": 2, "position_bias": True, "weights": True}, {"tie_rate": 0.0, "learnt": False}]
)
def test_the_hessian_is_exact(options):
    """The log-sum-exp's Hessian (node-weighted vote Hessians + each prompt's covariance over nodes) equals the
    differences of the gradient, which JAX takes of the quadrature sum itself; without the covariance it is
    larger (what the first Newton steps use)."""
    votes = simulate_arena(5, 40, 400, tie_rate=options.get("tie_rate", 0.1), seed=2, position_bias=0.3)[0]
    obs = observations(arena_input(votes))
    if options.get("weights"):
        obs.weight = np.random.default_rng(0).uniform(0.2, 1.0, len(obs.code))
    model = marginal.Marginal(
        obs,
        baseline=options.get("baseline"),
        position_bias=options.get("position_bias", False),
        learnt=options.get("learnt", True),
    )
    theta = model.start() + 0.2 * np.random.default_rng(1).standard_normal(model.layout.reduced)
    model.adapt(theta + 0.1)  # each prompt's own nodes, held while the Hessian is taken
    exact = _hessian_by_differences(model, theta)
    np.testing.assert_allclose(model.hessian(theta), exact, atol=1e-5 * np.abs(exact).max())
    assert np.linalg.eigvalsh(model.hessian(theta, exact=False) - exact).min() > -1e-6


def test_the_nodes_are_enough(small):
    """With 15 nodes or 30 the mode and the posterior SDs agree to 1e-11 posterior SDs (7 nodes: 1e-5)."""
    obs = observations(small)
    fits = [
        marginal.Marginal(obs, baseline=None, position_bias=False, learnt=True, nodes=k).fit()
        for k in (marginal.NODES, 2 * marginal.NODES)
    ]
    sd = [np.sqrt(np.diag(np.linalg.inv(f.precision))) for f in fits]
    np.testing.assert_array_less(np.abs(fits[0].mode - fits[1].mode), 1e-9 * sd[1])
    np.testing.assert_array_less(np.abs(sd[0] / sd[1] - 1), 1e-9)


def test_each_prompt_s_nodes_are_centred_at_its_conditional_mode():
    """The conditional mode of each z_j (:func:`lib.ranking.marginal_loops.modes`) is the root of its derivative
    (brentq's, to 1e-15) to the Newton steps' tolerance (1e-10), for 300 prompts of 25 votes: steps that gain less
    than the value's rounding are taken (refused, 21 of the 300 stopped up to 2e-8 from it, each after thousands
    of passes over its votes)."""
    from scipy.optimize import brentq

    from lib.ranking.marginal_loops import _conditional, modes

    rng = np.random.default_rng(0)
    t, n = rng.normal(0.3, 1.0, (300, 25)).ravel(), 25
    starts, ties, w = np.arange(0, t.size + 1, n), np.full(300, 2.0), np.ones(t.size)
    centre, scale = np.zeros(300), np.zeros(300)
    modes(t, w, starts, ties, 0.5, 0.5, centre, scale, 1.0)
    root = [
        brentq(lambda z, j=j: _conditional(j * n, (j + 1) * n, 2.0, 0.5, t, w, 0.5, z)[1], -8, 8, xtol=1e-15)
        for j in range(300)
    ]
    np.testing.assert_allclose(centre, root, rtol=0, atol=1.5e-10)  # Newton stops at a step below 1e-10


class _FixedNodes(marginal.Marginal):
    """The quadrature at the prior's nodes for every prompt (no adaptation)."""

    def adapt(self, theta):
        pass


def test_sharp_posteriors_of_alpha_are_integrated_by_adaptive_nodes():
    """4 systems x 5 prompts x 400 votes: each log alpha_j's posterior SD is 0.08-0.11, and 15 nodes at
    the prior's scale (0.8 apart at the centre) miss it; 15 nodes centred and scaled at each prompt's conditional
    mode (adaptive Gauss-Hermite) agree with 200 at the prior's scale (0.2 apart): mode, SDs and each alpha_j's
    posterior mean within 1e-3 of the reference's SDs (measured: 1e-6), where the fixed 15 nodes are off by more than
    0.2 SD."""
    obs = observations(arena_input(simulate_arena(4, 5, 2000, log_alpha_sd=0.5, seed=3)[0]))
    assert learns_alpha_spread(obs)
    fits = [
        model(obs, baseline=None, position_bias=False, learnt=True, nodes=k).fit()
        for model, k in ((_FixedNodes, 200), (marginal.Marginal, marginal.NODES), (_FixedNodes, marginal.NODES))
    ]
    reference, adaptive, fixed = fits
    sd = [np.sqrt(np.diag(np.linalg.inv(f.precision))) for f in fits]
    alpha = [marginal.alpha_readouts(f) for f in fits]
    np.testing.assert_array_less(np.abs(adaptive.mode - reference.mode), 1e-3 * sd[0])
    np.testing.assert_array_less(np.abs(sd[1] / sd[0] - 1), 1e-3)
    np.testing.assert_array_less(np.abs(alpha[1][0] - alpha[0][0]), 1e-3 * alpha[0][1])
    # measured: fixed 15 nodes off by 0.26-0.48 SDs in each variable's mode, 62% in an SD, 1.6 SDs in an alpha_j
    assert (np.abs(fixed.mode - reference.mode) / sd[0]).max() > 0.2
    assert np.abs(sd[2] / sd[0] - 1).max() > 0.2
    assert (np.abs(alpha[2][0] - alpha[0][0]) / alpha[0][1]).max() > 0.5


def test_alpha_draws_are_float32_log_normal_with_the_readouts_moments():
    """Each prompt's alpha_j draws (:func:`marginal._posterior`) are float32 (an arena's 20,000,000: 80 MB) and their
    logs have the read-outs' mean and SD (:func:`marginal.alpha_readouts`) within 4 Monte-Carlo SEs (sd / sqrt(S),
    sd / sqrt(2 S)); the same seed gives the same draws whatever the threads' timing."""
    obs = observations(arena_input(simulate_arena(4, 30, 600, log_alpha_sd=0.5, seed=5)[0]))
    fit = marginal.Marginal(obs, baseline=None, position_bias=False, learnt=True).fit()
    draws = 4000
    alpha = [marginal._posterior(obs, fit, draws, np.random.default_rng(7)).idata.posterior["alpha"] for _ in range(2)]
    assert alpha[0].dtype == np.float32 and alpha[0].shape == (1, draws, len(obs.prompts))
    np.testing.assert_array_equal(alpha[0], alpha[1])
    mean, sd = marginal.alpha_readouts(fit)
    logs = np.log(alpha[0].to_numpy()[0].astype(np.float64))
    np.testing.assert_array_less(np.abs(logs.mean(0) - mean), 4 * sd / np.sqrt(draws))
    np.testing.assert_array_less(np.abs(logs.std(0) - sd), 4 * sd / np.sqrt(2 * draws))


@pytest.mark.validation
def test_the_default_fit_of_votes_agrees_with_nuts_on_the_full_model(small, nuts):
    """Skills' means and SDs within three Monte-Carlo SEs of NUTS's (at NUTS's smallest bulk ESS n: 1/sqrt(n) SDs
    for a mean, 1/sqrt(2 n) of an SD); each prompt's posterior mean of alpha within 0.4 of NUTS's posterior SDs
    of it: it is taken given the skills and sigma_alpha at their mode, and sigma_alpha's posterior is skewed on
    100 prompts (the mode 0.25, NUTS's mean 0.13), which moves the alphas' shrinkage (measured: at most 0.33 SD).
    """
    fit = fit_ranking(small, rank_settings())
    assert fit.route == marginal.NOTE.format(nodes=marginal.NODES)
    sd, ess = nuts.skill_draws().std(0), nuts.diagnostics.ess_bulk_min
    np.testing.assert_array_less(np.abs(fit.skill_draws().mean(0) - nuts.skill_draws().mean(0)), 3 * sd / np.sqrt(ess))
    np.testing.assert_array_less(np.abs(fit.skill_draws().std(0) / sd - 1), 3 / np.sqrt(2 * ess))
    alpha = [f.idata.posterior["alpha"] for f in (fit, nuts)]
    mean = [a.mean(("chain", "draw")).to_numpy() for a in alpha]
    np.testing.assert_array_less(np.abs(mean[0] - mean[1]), 0.4 * alpha[1].std(("chain", "draw")).to_numpy())


def test_where_it_does_not_apply_the_full_model_is_fitted_and_said(small, monkeypatch):
    """The full model's Laplace solver is reached (a stand-in, :func:`tests.ranking.conftest.laplace_stand_in`: its
    numbers are checked where it is fitted, e.g. ``tests/ranking/test_ranking_fit.py``, compiled once there)."""
    import lib.inference.laplace

    obs = observations(small)
    assert learns_alpha_spread(obs)
    assert marginal.not_applicable(obs, intransitivity=False, fixed_alpha=False) is None
    assert "nothing to integrate" in marginal.not_applicable(obs, intransitivity=False, fixed_alpha=True)
    given: list = []
    monkeypatch.setattr(lib.inference.laplace, "laplace", laplace_stand_in(given))
    fit = fit_ranking(small, RankSettings(draws=200), fixed_alpha=True)
    assert len(given) == 1 and "alpha" in given[0] and "sigma_alpha" not in given[0]  # the full model, alpha_j = 1
    assert fit.route == marginal.FALLBACK_NOTE.format(reason="alpha_j = 1 for every prompt: nothing to integrate")
    assert not any("does not apply" in w for w in fit.diagnostics.warnings)  # said with the method instead


def test_nodes_that_do_not_settle_fall_back_to_the_full_model_and_say_why(monkeypatch, small):
    """One placement of the nodes (ADAPT_ROUNDS 1): the mode moves from the warm start (alpha_j = 1), so the nodes are
    not at the mode they integrate around. The quadrature says so (ExactFitError); the fit takes the full model's
    Laplace path (its solver replaced by a stand-in, :func:`tests.ranking.conftest.laplace_stand_in`: no
    compilation) and says why with the method, not among the warnings."""
    import lib.inference.laplace
    from lib.errors import ExactFitError

    monkeypatch.setattr(marginal, "ADAPT_ROUNDS", 1)
    with pytest.raises(ExactFitError, match=r"the nodes did not settle: after 1 placements the mode still moved") as e:
        marginal.Marginal(observations(small), baseline=None, position_bias=False, learnt=True).fit()
    route = e.value.problem
    assert route.startswith("MAP + Laplace of the full model")
    given: list = []
    monkeypatch.setattr(lib.inference.laplace, "laplace", laplace_stand_in(given))
    fit = fit_ranking(small, RankSettings(draws=50))
    assert len(given) == 1 and {"alpha", "sigma_alpha"} <= set(given[0])  # the full model, alpha_j its variables
    assert fit.route == route and not any("did not settle" in w for w in fit.diagnostics.warnings)
