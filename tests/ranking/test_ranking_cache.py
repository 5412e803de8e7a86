"""The on-disk cache of ranking fits: a hit skips sampling, any change of data or settings misses,
a damaged entry is discarded and refitted, an unwritable cache only warns, large per-prompt draws are
kept thinned with the read-outs unchanged."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import lib.inference.laplace
import lib.inference.store
import lib.ranking.marginal
from lib.ranking.fit import RankSettings, fit_ranking
from lib.ranking.run import rank_systems
from lib.ranking.simulate import simulate_arena
from tests.ranking.conftest import laplace_stand_in

SETTINGS = RankSettings(sampler="laplace", draws=50)


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    return tmp_path / "rankings"


@pytest.fixture
def rd(arena):
    return arena(simulate_arena(4, 10, 200, position_bias=0.5, seed=3)[0])


@pytest.fixture
def fits(monkeypatch):
    """Replace the full model's Laplace fit by seeded draws of the model's variables in its own ranges
    (:func:`tests.ranking.conftest.laplace_stand_in`; no compilation: these tests are about the cache) and count
    the fits actually run (a cache hit runs none); the votes' quadrature fit (:mod:`lib.ranking.marginal`, the
    Laplace path of these votes) is counted and run."""
    calls = []
    quadrature = lib.ranking.marginal.sample_marginal

    def counted(*args, **kwargs):
        calls.append(1)
        return quadrature(*args, **kwargs)

    monkeypatch.setattr(lib.ranking.marginal, "sample_marginal", counted)
    monkeypatch.setattr(lib.inference.laplace, "laplace", laplace_stand_in(calls))
    return calls


def refuse_sampling(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("sampled although the fit is cached")

    monkeypatch.setattr(lib.inference.laplace, "laplace", refuse)
    monkeypatch.setattr(lib.ranking.marginal, "sample_marginal", refuse)


def test_the_second_fit_is_read_from_the_cache_without_sampling(monkeypatch, rd, fits):
    first = fit_ranking(rd, SETTINGS)
    assert not first.from_cache
    refuse_sampling(monkeypatch)
    messages = []
    again = fit_ranking(rd, SETTINGS, progress=lambda fraction, message: messages.append((fraction, message)))
    assert again.from_cache and messages[-1] == (1.0, "loaded from cache")
    np.testing.assert_array_equal(again.skill_draws(), first.skill_draws())
    assert set(again.mode) == set(first.mode)
    for name, value in first.mode.items():
        np.testing.assert_array_equal(again.mode[name], value)
    assert again.categories == first.categories and again.data is rd
    assert again.diagnostics.sampler == "laplace" and again.diagnostics.warnings == first.diagnostics.warnings
    assert again.route == first.route == lib.ranking.marginal.NOTE.format(nodes=lib.ranking.marginal.NODES)
    assert np.isnan(again.diagnostics.rhat_max)  # NaN survives the JSON round trip


@pytest.mark.parametrize("change", ["seed", "draws", "baseline", "position_bias", "fixed_alpha", "data"])
def test_a_changed_setting_or_data_misses_the_cache(monkeypatch, arena, rd, fits, change):
    fit_ranking(rd, SETTINGS)
    refuse_sampling(monkeypatch)
    settings, fixed_alpha = SETTINGS, False
    if change == "seed":
        settings = replace(SETTINGS, seed=1)
    elif change == "draws":
        settings = replace(SETTINGS, draws=51)
    elif change == "baseline":
        settings = replace(SETTINGS, baseline="sys000")
    elif change == "position_bias":
        settings = replace(SETTINGS, position_bias=True)
    elif change == "fixed_alpha":
        fixed_alpha = True
    else:  # one vote's winner flipped
        votes = simulate_arena(4, 10, 200, position_bias=0.5, seed=3)[0]
        votes.loc[0, "winner"] = "a" if votes.loc[0, "winner"] != "a" else "b"
        rd = arena(votes)
    with pytest.raises(AssertionError, match="sampled although"):
        fit_ranking(rd, settings, fixed_alpha=fixed_alpha)


@pytest.mark.parametrize("damaged", ["nc", "json"])
def test_a_corrupt_entry_is_discarded_and_refitted(cache, rd, fits, damaged):
    first = fit_ranking(rd, SETTINGS)
    (path,) = cache.glob(f"*.{damaged}")
    path.write_bytes(path.read_bytes()[:40])
    again = fit_ranking(rd, SETTINGS)
    assert len(fits) == 2 and not again.from_cache
    np.testing.assert_allclose(again.skill_draws(), first.skill_draws())
    assert fit_ranking(rd, SETTINGS).from_cache and len(fits) == 2  # written again, whole
    assert not list(cache.glob("*.tmp"))


def test_use_cache_false_neither_reads_nor_writes(cache, rd, fits):
    fit_ranking(rd, SETTINGS, use_cache=False)
    assert not cache.exists() or not any(cache.iterdir())
    fit_ranking(rd, SETTINGS)
    assert not fit_ranking(rd, SETTINGS, use_cache=False).from_cache and len(fits) == 3


def test_an_unwritable_cache_warns_and_still_returns_the_fit(monkeypatch, tmp_path, rd, fits):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")  # the cache folder would lie under a file: mkdir fails even for root
    monkeypatch.setenv("EVAL_CACHE_DIR", str(blocker))
    with pytest.warns(RuntimeWarning, match="could not be saved"):
        fit = fit_ranking(rd, SETTINGS)
    assert fit.skill_draws().shape == (50, 4)
    assert any("could not be saved" in w for w in fit.diagnostics.warnings)


@pytest.mark.filterwarnings("error::RuntimeWarning")  # a stand-in alpha_j below 0 had no log (the cells' fit)
@pytest.mark.parametrize("likelihood", ["votes", "cells"])
def test_read_outs_of_a_thinned_cached_fit_equal_the_fresh_fits(monkeypatch, arena_analysis, fits, likelihood):
    monkeypatch.setattr(lib.inference.store, "THIN_VALUES", 100)  # alpha (and the cells' b) are larger
    data = arena_analysis(simulate_arena(5, 40, 400, seed=4)[0])
    settings = replace(SETTINGS, likelihood=likelihood)
    fresh = rank_systems(data, settings, n_next=5)
    cached = rank_systems(data, settings, n_next=5)
    assert not fresh.fit.from_cache and cached.fit.from_cache and len(fits) == 1
    post, before = cached.fit.idata["posterior"], fresh.fit.idata["posterior"]
    for name in ["alpha", "b"] if likelihood == "cells" else ["alpha"]:
        assert post[name].dims == before[name].dims and post[name].shape == before[name].shape
        assert len(np.unique(post[name].to_numpy()[0, :, 0])) < settings.draws  # kept thinned
        # the means as the read-outs take them: summed in float64 (the votes' alpha draws are float32)
        means = [p[name].mean(("chain", "draw"), dtype=np.float64) for p in (post, before)]
        np.testing.assert_allclose(*means, atol=1e-12)
    np.testing.assert_array_equal(cached.fit.skill_draws(), fresh.fit.skill_draws())
    pd.testing.assert_frame_equal(cached.leaderboard, fresh.leaderboard)
    pd.testing.assert_frame_equal(cached.win_matrix, fresh.win_matrix)
    pd.testing.assert_frame_equal(cached.next_batch, fresh.next_batch, check_exact=False, rtol=1e-9)


def test_a_thinned_variable_of_float32_draws_keeps_its_float64_mean():
    """The votes' alpha draws are float32 (:func:`lib.ranking.marginal.lognormal_draws`): the cache keeps their mean
    summed in float64, and the restored draws have that mean to float64's rounding (a float32 sum is off by 1e-7
    relative: the read-outs of a cached fit would not be the fresh fit's)."""
    import xarray as xr

    from lib.inference.store import restored, thinned

    draws = np.exp(np.random.default_rng(2).normal(0, 0.5, (1, 4000, 300))).astype(np.float32)
    posterior = xr.Dataset({"alpha": (("chain", "draw", "prompt"), draws)}, coords={"chain": [0], "draw": range(4000)})
    exact = draws.astype(np.float64).mean(axis=(0, 1))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lib.inference.store, "THIN_VALUES", 100_000)
        kept = thinned(posterior, "prompt")
    assert kept["alpha__thinned"].dtype == np.float32 and kept.sizes["alpha__draw"] == 334  # every 13th draw
    np.testing.assert_allclose(kept["alpha__mean"], exact, rtol=1e-13)
    back = restored(kept)["alpha"]
    assert back.shape == draws.shape
    np.testing.assert_allclose(back.to_numpy().mean(axis=(0, 1)), exact, rtol=1e-12)
