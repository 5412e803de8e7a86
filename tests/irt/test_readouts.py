"""GRM read-outs: information against the log-likelihood's curvature, EAP against a fitted posterior."""

from __future__ import annotations

import numpy as np
import pytest

from lib.irt.readouts import (
    category_probs,
    eap,
    expected_score,
    item_information,
    log_category_probs,
)
from lib.irt.readouts import (
    test_information as total_information,  # not collected as a test
)

THETA = np.linspace(-3, 3, 13)


def random_items(n_items: int, n_categories: int, seed: int = 7):
    """Discriminations (J,) and ordered thresholds (J, K-1) drawn like the model's priors."""
    rng = np.random.default_rng(seed)
    alpha = np.exp(rng.normal(0, 0.5, n_items))
    b = np.sort(rng.normal(0, 1.5, (n_items, n_categories - 1)), axis=1)
    return alpha, b


@pytest.mark.parametrize("n_categories", [2, 4, 7])
def test_information_is_minus_expected_second_derivative_of_loglik(n_categories):
    alpha, b = random_items(5, n_categories)
    h = 1e-3
    logp = [log_category_probs(THETA + d, alpha, b) for d in (-h, 0.0, h)]
    second = (logp[0] - 2 * logp[1] + logp[2]) / h**2  # (n, J, K)
    fisher = -(np.exp(logp[1]) * second).sum(axis=-1)
    np.testing.assert_allclose(item_information(THETA, alpha, b), fisher, rtol=1e-5, atol=1e-9)


def test_two_categories_reduce_to_the_2pl_information():
    alpha, b = random_items(4, 2)
    p = 1 / (1 + np.exp(-alpha * (THETA[:, None] - b[:, 0])))
    np.testing.assert_allclose(item_information(THETA, alpha, b), alpha**2 * p * (1 - p), rtol=1e-12)


def test_shapes_broadcast_over_draws_and_test_information_sums_items():
    alpha, b = random_items(6, 7)
    draws_a, draws_b = np.stack([alpha, 2 * alpha]), np.stack([b, b])
    probs = category_probs(THETA, draws_a, draws_b)
    assert probs.shape == (2, len(THETA), 6, 7)
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, atol=1e-12)
    assert expected_score(THETA, alpha, b, np.arange(-3, 4)).shape == (len(THETA), 6)
    info = item_information(THETA, draws_a, draws_b)
    np.testing.assert_allclose(total_information(THETA, draws_a, draws_b), info.sum(-1))
    np.testing.assert_allclose(total_information(THETA, alpha, b, items=[0, 2]), info[0][:, [0, 2]].sum(-1))


def test_eap_ignores_missing_prompts_and_without_data_returns_the_prior():
    alpha, b = random_items(8, 7)
    codes = np.random.default_rng(8).integers(0, 7, 8)
    partial = codes.copy()
    partial[4:] = -1
    assert eap(partial, alpha, b) == pytest.approx(eap(codes[:4], alpha[:4], b[:4]), abs=1e-12)
    mean, sd = eap(np.full(8, -1), alpha, b)
    assert mean == pytest.approx(0, abs=1e-9) and sd == pytest.approx(1, abs=1e-3)


def test_eap_with_all_prompts_matches_the_fitted_posterior_mean(tmp_path, monkeypatch, codes_to_matrix):
    """E[theta_i | u] = E_items[ E[theta_i | u_i, items] ]: the EAP of each posterior draw of the
    items, averaged, must agree with the sampled posterior mean up to Monte Carlo error."""
    import arviz as az

    from lib.irt.fit import fit_grm
    from lib.irt.settings import FitSettings
    from lib.irt.simulate import simulate_grm

    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    sim = simulate_grm(6, 30, seed=3)
    fit = fit_grm(codes_to_matrix(sim.codes), FitSettings(chains=2, draws=300, tune=300, seed=1), use_cache=False)
    post = fit.idata.posterior
    alpha = post["alpha"].stack(s=("chain", "draw")).transpose("s", "prompt").to_numpy()
    b = post["b"].stack(s=("chain", "draw")).transpose("s", "prompt", "threshold").to_numpy()
    theta = post["theta"]
    mcse = (theta.std(("chain", "draw")) / np.sqrt(az.ess(post, var_names=["theta"])["theta"])).to_numpy()
    for i in range(sim.codes.shape[0]):
        per_draw = [eap(sim.codes[i], alpha[s], b[s])[0] for s in range(len(alpha))]
        assert np.mean(per_draw) == pytest.approx(float(theta.mean(("chain", "draw"))[i]), abs=4 * mcse[i])
