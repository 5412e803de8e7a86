"""The on-disk fit cache heals itself: damaged, mismatched, concurrent, read-only and bounded."""

import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import lib.inference.store as store_module
import lib.irt.fit as fit_module
from lib.irt.fit import fit_grm, fit_key, load_cached, load_latest, save
from lib.irt.settings import FitSettings
from lib.irt.simulate import simulate_grm
from tests.conftest import rating_matrix_from_codes

MAP = FitSettings(sampler="map")


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    return tmp_path / "fits"


@pytest.fixture
def rm():
    return rating_matrix_from_codes(simulate_grm(5, 30, seed=5).codes)


def entry(cache, fit):
    return cache / f"{fit.cache_key}.nc", cache / f"{fit.cache_key}.json"


@pytest.mark.parametrize("damaged", ["nc", "json"])
def test_a_truncated_entry_is_a_miss_and_is_removed(cache, rm, damaged):
    fit = fit_grm(rm, MAP)
    path = cache / f"{fit.cache_key}.{damaged}"
    path.write_bytes(path.read_bytes()[:40])
    assert load_cached(rm, MAP) is None
    assert not any(p.exists() for p in entry(cache, fit))
    again = fit_grm(rm, MAP)  # recomputed and saved again
    np.testing.assert_allclose(again.idata.posterior["theta"], fit.idata.posterior["theta"])
    assert load_cached(rm, MAP) is not None


def test_a_truncated_latest_pointer_is_a_miss_and_is_removed(cache, rm):
    fit_grm(rm, MAP, remember=True)
    (pointer,) = cache.glob("latest-*.json")
    pointer.write_text('{"cutpoints": "antisym')
    assert load_latest(rm) is None
    assert not pointer.exists()


def test_an_entry_of_other_data_under_the_key_is_a_miss(cache, rm):
    other = rating_matrix_from_codes(simulate_grm(5, 30, seed=6).codes)
    mine, theirs = fit_grm(rm, MAP), fit_grm(other, MAP)
    for src, dst in zip(entry(cache, theirs), entry(cache, mine), strict=True):
        shutil.copy(src, dst)
    assert load_cached(rm, MAP) is None
    assert not any(p.exists() for p in entry(cache, mine))
    assert load_cached(other, MAP) is not None


def test_concurrent_saves_of_one_key_do_not_collide(cache, rm):
    fit = fit_grm(rm, MAP, use_cache=False)
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: save(fit, rm), range(20)))  # raises if any save failed
    assert load_cached(rm, MAP) is not None
    assert not list(cache.glob("*.tmp"))


def test_an_unwritable_cache_warns_and_still_returns_the_fit(tmp_path, monkeypatch, rm):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")  # cache_dir() lies under a file: mkdir fails even for root
    monkeypatch.setenv("EVAL_CACHE_DIR", str(blocker))
    with pytest.warns(RuntimeWarning, match="could not be saved"):
        fit = fit_grm(rm, MAP, remember=True)
    assert fit.idata.posterior["theta"].shape == (1, 1, 5)
    assert any("could not be saved" in w for w in fit.diagnostics.warnings)


def test_the_cache_keeps_only_the_newest_entries(cache, rm, monkeypatch):
    monkeypatch.setattr(store_module, "CACHE_MAX_ENTRIES", 3)
    keys = []
    for seed in range(5):
        fit = fit_grm(rm, FitSettings(sampler="map", seed=seed))
        keys.append(fit.cache_key)
        os.utime(cache / f"{fit.cache_key}.nc", (1e9 + seed, 1e9 + seed))  # distinct ages
    save(fit, rm)  # prune again with the ages set
    assert sorted(p.stem for p in cache.glob("*.nc")) == sorted(keys[-3:])
    assert sorted(p.stem for p in cache.glob("*.json")) == sorted(keys[-3:])
    monkeypatch.setattr(store_module, "CACHE_MAX_BYTES", 1)  # the newest entry is always kept
    save(fit, rm)
    assert [p.stem for p in cache.glob("*.nc")] == [keys[-1]]


def test_only_remembered_fits_become_the_latest(rm):
    fit_grm(rm, MAP)  # an internal fit, e.g. prompt selection's calibration
    assert load_latest(rm) is None
    mine = fit_grm(rm, FitSettings(sampler="map", seed=1), remember=True)
    fit_grm(rm, FitSettings(sampler="map", seed=2))
    assert load_latest(rm).cache_key == mine.cache_key
    assert mine.cache_key == fit_key(rm, mine.settings)


def test_the_cache_entry_stores_data_key_and_settings_as_valid_json(cache, rm):
    fit = fit_grm(rm, MAP)
    stored = json.loads(entry(cache, fit)[1].read_text(), parse_constant=lambda c: pytest.fail(c))
    assert stored["request"]["settings"]["sampler"] == "map" and stored["diagnostics"]["rhat_max"] is None
    assert stored["request"]["data"] == fit_module.data_key(rm)
