"""Issue 17: every cache entry is checked against the request and its own parts before use.

A GRM or ranking .nc swapped under a kept .json, draws edited to NaN, a plan entry of another
analysis or with power inf / SE NaN, and any entry replaced by a folder or a FIFO are misses (removed,
recomputed, never an exception or a hang); a full disk never takes the process down, the result is
returned with a warning.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import lib.inference.laplace
import lib.io.cache
from lib.io.cache import digest, netcdf_bytes
from lib.io.paths import ROOT
from lib.irt.fit import fit_grm, load_cached
from lib.irt.settings import FitSettings
from lib.planning.design import Assumptions, Design
from lib.planning.power import plan
from lib.ranking.fit import RankSettings, fit_ranking
from lib.ranking.simulate import simulate_arena
from tests.ranking.conftest import laplace_stand_in

MAP = FitSettings(sampler="map")


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def two_data_sets(codes_to_matrix):
    """Two rating matrices with the same labels and shape, different ratings."""
    rng = np.random.default_rng(7)
    low, high = rng.integers(0, 4, size=(5, 8)), rng.integers(3, 7, size=(5, 8))
    return codes_to_matrix(low), codes_to_matrix(high)


def _theta(fit) -> np.ndarray:
    return fit.idata.posterior["theta"].to_numpy()


def _within(seconds: float, work):
    """``work()``'s result, failing (not hanging) when it takes longer than ``seconds``."""
    box = []
    thread = threading.Thread(target=lambda: box.append(work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"a damaged cache entry blocked for more than {seconds} s"
    return box[0]


def test_a_grm_posterior_swapped_under_its_metadata_is_a_miss(cache, two_data_sets):
    a, b = two_data_sets
    fit_a, fit_b = fit_grm(a, MAP), fit_grm(b, MAP)
    assert np.abs(_theta(fit_a) - _theta(fit_b)).max() > 0.5
    shutil.copyfile(cache / "fits" / f"{fit_b.cache_key}.nc", cache / "fits" / f"{fit_a.cache_key}.nc")
    assert load_cached(a, MAP) is None
    assert not (cache / "fits" / f"{fit_a.cache_key}.json").exists()
    np.testing.assert_allclose(_theta(fit_grm(a, MAP)), _theta(fit_a))


def test_a_grm_entry_with_non_finite_draws_is_a_miss_even_with_a_matching_hash(cache, two_data_sets):
    a, _ = two_data_sets
    fit = fit_grm(a, MAP)
    idata = fit.idata.copy()
    idata.posterior["theta"][..., 0] = np.nan
    raw = netcdf_bytes(idata)
    nc, meta = cache / "fits" / f"{fit.cache_key}.nc", cache / "fits" / f"{fit.cache_key}.json"
    nc.write_bytes(raw)
    meta.write_text(json.dumps(dict(json.loads(meta.read_text()), nc_sha256=digest(raw))))
    assert load_cached(a, MAP) is None and not nc.exists()


@pytest.mark.parametrize("part", ["nc", "json"])
@pytest.mark.parametrize("replacement", ["folder", "fifo"])
def test_a_grm_entry_replaced_by_a_folder_or_fifo_is_a_miss_at_once(cache, two_data_sets, part, replacement):
    a, _ = two_data_sets
    fit = fit_grm(a, MAP)
    path = cache / "fits" / f"{fit.cache_key}.{part}"
    path.unlink()
    path.mkdir() if replacement == "folder" else os.mkfifo(path)
    assert _within(10, lambda: load_cached(a, MAP)) is None
    assert not path.exists()


@pytest.fixture
def laplace_draws(monkeypatch):
    """Laplace fits replaced by draws in the model's own ranges, different for every fit (these tests are about the
    cache; :func:`tests.ranking.conftest.laplace_stand_in`)."""
    calls: list = []
    monkeypatch.setattr(lib.inference.laplace, "laplace", laplace_stand_in(calls, per_call=True))
    return calls


def test_a_ranking_posterior_swapped_under_its_metadata_is_a_miss(cache, arena_data, laplace_draws):
    settings = RankSettings(sampler="laplace", draws=50)
    a, b = (arena_data(simulate_arena(4, 10, 200, seed=s)[0]) for s in (3, 4))
    # alpha_j = 1: the full model's Laplace fit, which the fixture replaces (the votes' quadrature fit is not)
    fit_a, fit_b = fit_ranking(a, settings, fixed_alpha=True), fit_ranking(b, settings, fixed_alpha=True)
    folder = cache / "rankings"
    shutil.copyfile(folder / f"{fit_b.cache_key}.nc", folder / f"{fit_a.cache_key}.nc")
    again = fit_ranking(a, settings, fixed_alpha=True)
    assert not again.from_cache and len(laplace_draws) == 3
    assert not np.allclose(again.skill_draws(), fit_b.skill_draws())


@pytest.fixture
def arena_data():
    from lib.inputs import analysis_input
    from lib.io.tables import read_csv
    from lib.ranking.data import ranking_data

    columns = {
        "prompt": "prompt_id",
        "system_a": "system_a",
        "system_b": "system_b",
        "annotator": "annotator_id",
        "choice": "winner",
    }

    def read(votes):
        table = read_csv(votes.to_csv(index=False).encode(), "arena.csv")
        return ranking_data(analysis_input(table, "pairwise", columns, file="arena.csv", merge_redundant=False))

    return read


PLAN = {"replicates": 5, "seed": 2}
ASSUMED = Assumptions(n_systems=3, effect=0.5)
T_TEST, SIGN_TEST = [Design(6, 1, "random", "t_test")], [Design(6, 1, "random", "sign_test")]


def _new_entries(folder: Path, before: set[Path]) -> list[Path]:
    return sorted(set(folder.glob("*")) - before)


def test_a_plan_entry_of_another_analysis_is_not_returned_for_a_t_test(cache):
    folder = cache / "plans"
    t_test = plan(ASSUMED, T_TEST, **PLAN)
    (mine,) = _new_entries(folder, set())
    plan(ASSUMED, SIGN_TEST, **PLAN)
    (other,) = _new_entries(folder, {mine})
    shutil.copyfile(other, mine)
    again = plan(ASSUMED, T_TEST, **PLAN)
    assert list(again["analysis"]) == ["t_test"]
    assert again.equals(t_test)


@pytest.mark.parametrize("edit", [{"power": "inf"}, {"power_mc_se": "nan"}, {"power": "1.5"}])
def test_a_plan_entry_with_impossible_values_is_a_miss_even_with_a_matching_hash(cache, edit):
    import pandas as pd

    first = plan(ASSUMED, T_TEST, **PLAN)
    (path,) = (cache / "plans").glob("*")
    entry = json.loads(path.read_text())
    table = pd.read_csv(__import__("io").StringIO(entry["csv"]), keep_default_na=False, na_values=[""])
    for column, value in edit.items():
        table[column] = table[column].astype(object)
        table.loc[0, column] = value
    entry["csv"] = table.to_csv(index=False)
    entry["csv_sha256"] = digest(entry["csv"].encode())
    path.write_text(json.dumps(entry))
    again = plan(ASSUMED, T_TEST, **PLAN)
    assert again.equals(first) and np.isfinite(again["power"]).all()


@pytest.mark.parametrize("replacement", ["folder", "fifo"])
def test_a_plan_entry_replaced_by_a_folder_or_fifo_is_a_miss(cache, replacement):
    first = plan(ASSUMED, T_TEST, **PLAN)
    (path,) = (cache / "plans").glob("*")
    path.unlink()
    path.mkdir() if replacement == "folder" else os.mkfifo(path)
    again = _within(30, lambda: plan(ASSUMED, T_TEST, **PLAN))
    assert again.equals(first) and path.is_file()


def test_too_little_free_space_skips_the_cache_with_a_warning_and_keeps_the_fit(cache, monkeypatch, two_data_sets):
    a, _ = two_data_sets
    monkeypatch.setattr(lib.io.cache.shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(10**9, 10**9, 10**6))
    with pytest.warns(RuntimeWarning, match="MB free on the disk"):
        fit = fit_grm(a, MAP)
    assert np.isfinite(_theta(fit)).all()
    assert any("not kept" in w for w in fit.diagnostics.warnings)
    assert not list(cache.glob("fits/*"))


FULL_DISK = textwrap.dedent("""
    import resource, signal, sys
    import numpy as np
    sys.path[:0] = [sys.argv[1], sys.argv[1] + "/tests"]
    from conftest import rating_matrix_from_codes
    from lib.irt.fit import fit_grm
    from lib.irt.settings import FitSettings
    rm = rating_matrix_from_codes(np.random.default_rng(0).integers(0, 7, size=(8, 10)))
    fit_grm(rm, FitSettings(sampler="map"), use_cache=False)  # compiled code is written before the limit
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a full disk: writes fail with EFBIG past the limit
    resource.setrlimit(resource.RLIMIT_FSIZE, (4_000, 4_000))
    fit = fit_grm(rm, FitSettings(sampler="map"))
    print("theta", np.isfinite(fit.idata.posterior["theta"].to_numpy()).all())
    print("\\n".join(fit.diagnostics.warnings))
""")


def test_a_disk_that_fills_during_the_cache_write_never_crashes_and_the_fit_is_returned(cache):
    """Before: h5netcdf failed half-way and the process died in its close (exit 139)."""
    env = dict(os.environ, EVAL_CACHE_DIR=str(cache), PYTHONFAULTHANDLER="")
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(ROOT)], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "theta True" in done.stdout and "could not be saved in the cache" in done.stdout
    assert not [p for p in (cache / "fits").glob("*") if p.suffix == ".nc"]
