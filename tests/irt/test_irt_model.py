"""The GRM's log-likelihood, cutpoints and MAP fit (fast: no sampling)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from lib.errors import SettingsError
from lib.irt.map import fit_map
from lib.irt.model import build_grm
from lib.irt.readouts import log_category_probs
from lib.irt.simulate import simulate_grm


def evaluate(model, names, point):
    """Values of model variables at a point of the (transformed) value variables."""
    outs = model.replace_rvs_by_values([model[n] for n in names])
    fn = model.compile_fn(outs, inputs=model.value_vars, point_fn=True, on_unused_input="ignore")
    return [np.asarray(v) for v in fn(point)]


@pytest.mark.parametrize("cutpoints", ["antisymmetric", "shared", "free"])
def test_stable_loglik_equals_the_sum_of_category_log_probabilities(cutpoints):
    sim = simulate_grm(6, 9, seed=3)
    codes = sim.codes.copy()
    codes[0, :3] = -1  # missing cells contribute nothing
    model = build_grm(codes, 7, cutpoints=cutpoints)
    point = model.initial_point()
    rng = np.random.default_rng(0)
    point = {k: v + rng.normal(0, 0.3, v.shape) for k, v in point.items()}
    loglik, theta, alpha, b = (np.asarray(v) for v in evaluate(model, ["loglik", "theta", "alpha", "b"], point))
    # readouts: (n_theta, J, K) for each comparison's own theta
    logp = np.stack([log_category_probs(theta[[i]], alpha, b)[0] for i in range(6)])
    i, j = np.nonzero(codes >= 0)
    assert_allclose(loglik, logp[i, j, codes[i, j]].sum(), rtol=1e-10)


def test_antisymmetric_cutpoints_mirror_so_theta_zero_is_no_preference():
    model = build_grm(simulate_grm(3, 4, seed=1).codes, 7)
    point = model.initial_point()
    point["b_log_gap"] = np.random.default_rng(2).normal(size=point["b_log_gap"].shape)
    (b,) = evaluate(model, ["b"], point)
    assert_allclose(b, -b[:, ::-1])
    assert (np.diff(b, axis=1) > 0).all()


def test_shared_cutpoints_are_one_antisymmetric_set_for_every_prompt():
    model = build_grm(simulate_grm(3, 4, seed=1).codes, 7, cutpoints="shared")
    point = model.initial_point()
    assert point["b_log_gap"].shape == (1, 3)
    point["b_log_gap"] = np.random.default_rng(2).normal(size=(1, 3))
    (b,) = evaluate(model, ["b"], point)
    assert b.shape == (4, 6) and (b == b[0]).all()
    assert_allclose(b, -b[:, ::-1])


def test_antisymmetric_needs_an_odd_number_of_categories():
    with pytest.raises(SettingsError, match="odd number"):
        build_grm(np.zeros((2, 2), dtype=np.int64), 4)
    with pytest.raises(SettingsError, match="unknown cutpoints"):
        build_grm(np.zeros((2, 2), dtype=np.int64), 3, cutpoints="symmetric")


def test_map_recovers_abilities_on_the_paper_design():
    sim = simulate_grm(20, 200, seed=0)
    point = fit_map(sim.codes, 7)
    assert np.corrcoef(point.theta, sim.theta)[0, 1] > 0.95
    assert np.corrcoef(np.log(point.alpha), np.log(sim.alpha))[0, 1] > 0.5


def test_map_with_zero_weight_leaves_a_comparison_at_the_prior():
    sim = simulate_grm(8, 40, seed=4)
    w = np.ones(8)
    w[2] = 0.0
    point = fit_map(sim.codes, 7, weights=w)
    assert abs(point.theta[2]) < 1e-3  # L-BFGS tolerance
    assert abs(fit_map(sim.codes, 7).theta[2]) > 1e-2
