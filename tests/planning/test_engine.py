"""The Dask engine: embedded and remote clusters give the plan the same numbers."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from lib.engine.cluster import Engine
from lib.errors import SettingsError
from lib.io.paths import ROOT
from lib.planning.design import Assumptions, Design
from lib.planning.power import iter_plan, plan
from tests.conftest import scheduler_address

ASSUMPTIONS = Assumptions(n_systems=3, effect=0.4)
DESIGNS = [Design(p, 2, s, a) for p in (4, 8) for s in ("random", "top_alpha") for a in ("grm_bank", "sign_test")]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def embedded():
    with Engine(n_workers=2) as engine:
        yield engine


def _square(x: int) -> int:
    return x * x


def test_map_yields_every_result_with_its_index_and_reports_progress(embedded):
    seen = []
    results = dict(embedded.map(_square, range(7), progress=lambda done, total: seen.append((done, total)), batch=3))
    assert results == {i: i * i for i in range(7)}
    assert seen[-1] == (7, 7) and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_a_cancelled_plan_keeps_the_designs_already_finished(embedded):
    runs = iter_plan(ASSUMPTIONS, DESIGNS, replicates=4, seed=1, engine=embedded, batch=4)
    first, pairs = next(runs)
    runs.close()  # the user pressed stop
    assert len(first) == 2 and first["power"].between(0, 1).all() and len(pairs) >= 2


def test_the_embedded_cluster_gives_the_numbers_of_this_process(embedded, tmp_path, monkeypatch):
    here = plan(ASSUMPTIONS, DESIGNS, replicates=6, seed=4)
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "other"))  # no cache hit: computed again on the cluster
    there = plan(ASSUMPTIONS, DESIGNS, replicates=6, seed=4, engine=embedded)
    assert there.equals(here)


def test_a_remote_scheduler_with_two_workers_gives_the_same_numbers(embedded, tmp_path, monkeypatch):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    scheduler_file = tmp_path / "scheduler.json"
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--dashboard-address",
                ":0",
                "--scheduler-file",
                str(scheduler_file),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        address = scheduler_address(scheduler_file, processes[0])
        for _ in range(2):
            processes.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "distributed.cli.dask_worker",
                        "--scheduler-file",
                        str(scheduler_file),
                        "--nworkers",
                        "1",
                        "--nthreads",
                        "1",
                        "--no-nanny",
                        "--no-dashboard",
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        with Engine(address) as remote:
            deadline = time.monotonic() + 60
            while remote.workers < 2:
                assert time.monotonic() < deadline, "the workers did not join"
                time.sleep(0.2)
            there = plan(ASSUMPTIONS, DESIGNS, replicates=6, seed=4, engine=remote)
        monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "other"))
        assert there.equals(plan(ASSUMPTIONS, DESIGNS, replicates=6, seed=4, engine=embedded))
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


def test_an_unreachable_scheduler_is_named():
    with pytest.raises(SettingsError, match=r"tcp://127.0.0.1:9"), Engine("tcp://127.0.0.1:9", timeout=2):
        pass


def test_the_nuts_check_runs_its_fits_on_the_cluster_with_the_numbers_of_this_process(embedded):
    from lib.irt.settings import FitSettings
    from lib.planning.nuts import nuts_check

    tiny = FitSettings(chains=2, draws=50, tune=50, seed=3)
    a, design = Assumptions(n_systems=3, effect=1.0), Design(6, 1, "random")
    seen = []  # one study: each fit compiles its model (a worker's and this process's, about 12 s each)
    there = nuts_check(
        a, design, 1, seed=2, settings=tiny, engine=embedded, progress=lambda done, total: seen.append((done, total))
    )
    here = nuts_check(a, design, 1, seed=2, settings=tiny)
    assert seen == [(1, 1)]
    assert there.equals(here)
