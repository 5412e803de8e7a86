"""The vectorised R-hat and ESS (lib.inference.chain_stats) give arviz's numbers, parameter by parameter."""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.inference.chain_stats import chain_stats, stacked, stacked_columns


def ar1(rng, chains: int, draws: int, n: int, phi: float) -> np.ndarray:
    """AR(1) draws (chain, draw, n) with coefficient ``phi``: autocorrelated as a Markov chain's."""
    x = np.zeros((chains, draws, n))
    noise = rng.normal(size=(chains, draws, n))
    x[:, 0] = noise[:, 0]
    for t in range(1, draws):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    return x


def arviz_stats(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """arviz's rank R-hat, bulk and tail ESS of each parameter of (chain, draw, n) draws, one at a time."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = [x[:, :, k] for k in range(x.shape[2])]
        return (
            np.array([float(az.rhat(v, method="rank")) for v in one]),
            np.array([float(az.ess(v, method="bulk")) for v in one]),
            np.array([float(az.ess(v, method="tail")) for v in one]),
        )


def assert_as_arviz(x: np.ndarray) -> None:
    stats, (rhat, bulk, tail) = chain_stats(x), arviz_stats(x)
    for ours, theirs in ((stats.rhat, rhat), (stats.ess_bulk, bulk), (stats.ess_tail, tail)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, equal_nan=True)


def edge_cases() -> np.ndarray:
    """Constant draws, a chain apart, a NaN, two values only (ties), one with large values."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 60, 5))
    x[:, :, 0] = 2.0
    x[1, :, 1] += 3.0
    x[0, 5, 2] = np.nan
    x[:, :, 3] = rng.integers(0, 2, size=(4, 60))
    x[:, :, 4] = 1e6 + rng.normal(size=(4, 60))
    return x


@pytest.mark.parametrize(
    "x",
    [
        np.random.default_rng(0).normal(size=(4, 100, 6)),  # independent draws
        ar1(np.random.default_rng(1), 4, 201, 5, 0.9),  # autocorrelated, an odd number of draws
        ar1(np.random.default_rng(2), 2, 57, 4, 0.99),  # barely moving
        ar1(np.random.default_rng(4), 4, 80, 4, -0.7),  # antithetic
        np.random.default_rng(5).integers(0, 3, size=(4, 40, 4)).astype(float),  # discrete: ties in the ranks
        ar1(np.random.default_rng(6), 1, 80, 3, 0.5),  # one chain: R-hat undefined, ESS defined
        np.random.default_rng(7).normal(size=(2, 3, 2)),  # too few draws: all undefined
        edge_cases(),
    ],
    ids=["iid", "ar0.9", "ar0.99", "antithetic", "discrete", "one-chain", "three-draws", "edges"],
)
def test_chain_stats_are_arviz_numbers(x):
    assert_as_arviz(x)


@settings(max_examples=25, deadline=None)
@given(
    chains=st.integers(1, 4),
    draws=st.integers(4, 60),
    phi=st.floats(-0.9, 0.99),
    seed=st.integers(0, 2**32 - 1),
)
def test_chain_stats_are_arviz_numbers_for_any_chains(chains, draws, phi, seed):
    assert_as_arviz(ar1(np.random.default_rng(seed), chains, draws, 3, phi))


def test_stacked_lays_every_element_of_every_variable_side_by_side():
    post = az.from_dict(posterior={"a": np.zeros((2, 5, 3)), "b": np.ones((2, 5, 2, 4))}).posterior
    x = stacked(post, ["b", "a"])
    assert x.shape == (2, 5, 11) and (x[..., :8] == 1).all() and (x[..., 8:] == 0).all()
    assert stacked(post).shape == (2, 5, 11)
    with pytest.raises(ValueError, match="chain, draw, parameter"):
        chain_stats(np.zeros((5, 3)))


def posterior_of_three(rng) -> az.InferenceData:
    """Autocorrelated draws of alpha (2, constant: left out of checks), skill (system A-C: A a baseline, left
    out) and b (prompt x threshold), each element with its own autocorrelation and the first chain off by its
    own shift: every element's R-hat and ESS differ."""
    n = 2 + 3 + 4
    x = np.stack([ar1(rng, 4, 60, 1, phi)[..., 0] for phi in np.linspace(0.1, 0.8, n)], axis=-1)
    x[0] += np.linspace(0.0, 0.6, n)
    return az.from_dict(
        posterior={"alpha": np.ones((4, 60, 2)), "skill": x[..., 2:5], "b": x[..., 5:].reshape(4, 60, 2, 2)},
        coords={"system": ["A", "B", "C"], "prompt": ["p1", "p2"], "threshold": [1, 2]},
        dims={"alpha": ["prompt"], "skill": ["system"], "b": ["prompt", "threshold"]},
    )


def test_the_columns_of_a_selection_give_its_own_numbers():
    post = posterior_of_three(np.random.default_rng(8)).posterior
    names, drop = ["b", "skill"], {"system": ["A"]}  # another order than the posterior's, a label left out
    columns = stacked_columns(post, names, drop)
    assert columns.tolist() == [5, 6, 7, 8, 3, 4]
    taken = chain_stats(stacked(post)).take(columns)
    own = chain_stats(stacked(post[names].drop_sel(drop), names))
    for ours, theirs in ((taken.rhat, own.rhat), (taken.ess_bulk, own.ess_bulk), (taken.ess_tail, own.ess_tail)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_a_check_handed_over_is_read_and_none_handed_is_computed(monkeypatch):
    """The sampler's last check (``Draws.stats``, of every variable) spares the diagnostics computing it; their
    numbers are those computed; with none handed (a fixed number of draws, other samplers) they compute it."""
    import lib.inference.convergence as convergence
    from lib.inference.diagnostics import diagnose

    idata = posterior_of_three(np.random.default_rng(8))
    computed = []
    compute = convergence.chain_stats
    monkeypatch.setattr(convergence, "chain_stats", lambda x: computed.append(x.shape) or compute(x))
    names, drop = ["skill", "b"], {"system": ["A"]}
    own = diagnose(idata, "numpyro", 0.0, names, drop)
    assert computed == [(4, 60, 6)]
    handed = diagnose(idata, "numpyro", 0.0, names, drop, stats=compute(stacked(idata.posterior)))
    assert computed == [(4, 60, 6)]  # read, not computed again
    worst = [(d.rhat_max, d.ess_bulk_min, d.ess_tail_min) for d in (own, handed)]
    np.testing.assert_allclose(worst[1], worst[0], rtol=1e-12)
    assert own.rhat_max > 1.01 and handed.warnings == own.warnings  # the shifted chain fails both alike
