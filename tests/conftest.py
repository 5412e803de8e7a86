"""Helpers shared by the lib tests, the study databases of the tests, and a per-user data folder of their own.

Study storage: every test that takes ``db`` runs on SQLite and on PostgreSQL. PostgreSQL is a throwaway
cluster of Debian's ``postgresql`` binaries (``/usr/lib/postgresql/*/bin``, installed by ``make test``
through ``scripts/install_postgres.sh``), started once per session on 127.0.0.1 at a free port in a
temporary folder (as the ``postgres`` user when the tests run as root: PostgreSQL refuses to run as
root) and removed afterwards; each test gets a database of its own. If the cluster cannot be started
the tests fail, they do not skip: set ``EVAL_SKIP_POSTGRES=1`` to skip them on a machine without
PostgreSQL (docs/studies.md).
"""

from __future__ import annotations

import glob
import itertools
import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import settings as hypothesis_settings

from lib.judgments.ratings import RatingMatrix
from tests.fake_openai import FakeOpenAI, Responder

# Property tests draw the same examples in every run, as every other test has a fixed seed: a failure repeats,
# and a run does not pass or fail by the examples hypothesis happened to draw (nor by a failing example kept
# in a checkout's .hypothesis folder from an earlier run, which a fresh clone does not have).
hypothesis_settings.register_profile("fixed", derandomize=True, database=None)
hypothesis_settings.load_profile("fixed")


def rating_matrix_from_codes(codes: np.ndarray) -> RatingMatrix:
    """Net ratings -3..3 from category codes (I, J), -1 missing; no named systems (simulated data)."""
    n_comp, n_prompts = codes.shape
    ids = np.array([f"p{j}" for j in range(n_prompts)])
    return RatingMatrix(
        u=np.where(codes >= 0, codes - 3.0, np.nan),
        comparisons=pd.DataFrame({"comparison": [f"c{i}" for i in range(n_comp)], "system_a": "", "system_b": ""}),
        prompt_ids=ids,
        categories=np.arange(-3, 4),
        groups=pd.DataFrame({"prompt_id": ids, "group": ids}),
        n_votes=(codes >= 0).astype(np.int64),
    )


def scheduler_address(scheduler_file: Path, scheduler: subprocess.Popen, seconds: float = 60) -> str:
    """The address a Dask scheduler started with ``--scheduler-file`` writes there, once the file is whole: it
    exists before it is written (on a loaded machine a read found it empty), so it is read until it parses.
    Fails the test if the scheduler stops or ``seconds`` pass first."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return json.loads(scheduler_file.read_text())["address"]
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            assert scheduler.poll() is None, "the scheduler stopped"
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.1)


@pytest.fixture(autouse=True, scope="session")
def _own_cache_dir(tmp_path_factory):
    """Fits, rankings and plans made by tests go to a temporary folder, never the repository's .cache
    (a test that wants a fresh cache sets ``EVAL_CACHE_DIR`` itself); JAX's compiled programs go to one
    folder for the whole run (:func:`_share_compiled_programs`)."""
    if "EVAL_CACHE_DIR" not in os.environ:
        cache = tmp_path_factory.mktemp("cache")
        os.environ["EVAL_CACHE_DIR"] = str(cache)
        _share_compiled_programs(tmp_path_factory, cache)
        yield
        del os.environ["EVAL_CACHE_DIR"]
    else:
        yield


COMPILED_ENV = "EVAL_TEST_COMPILED"
"""Environment variable: the folder of compiled JAX programs for every pytest run that has it (``make test``
sets one for its runs); unset, each run has its own (:func:`_share_compiled_programs`)."""


_compiled: list[Path] = []  # the run's folder, once made


def share_compiled_programs(cache: Path) -> None:
    """Give a fit cache folder of a process a test starts (the app's servers of the browser tests) the run's
    compiled JAX programs (:func:`_share_compiled_programs`): its ``jax`` folder is the run's."""
    from lib.inference.compile_cache import KIND

    if _compiled and not (cache / KIND).exists():
        cache.mkdir(parents=True, exist_ok=True)
        (cache / KIND).symlink_to(_compiled[0], target_is_directory=True)


def _share_compiled_programs(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> None:
    """Compile each JAX program once per run: JAX's persistent compilation cache
    (:mod:`lib.inference.compile_cache`) in one folder for both pytest-xdist processes and the commands
    tests start with this cache folder or link to it (:func:`share_compiled_programs`), turned on before
    any test as the first numpyro fit of a process turns it on. Without it each process compiled what the
    other had compiled, and a process kept the folder of whichever test fitted first. Tests of the cache
    itself start processes with folders of their own (tests/test_compile_cache.py).
    """
    from lib.inference import compile_cache

    if os.environ.get(COMPILED_ENV):  # make test's three runs (computing, browser, timed) share one folder
        shared = Path(os.environ[COMPILED_ENV])
    else:
        run = tmp_path_factory.getbasetemp()
        if os.environ.get("PYTEST_XDIST_WORKER"):
            run = run.parent  # the run's folder: each process has its own below it
        shared = run / "compiled"
    shared.mkdir(parents=True, exist_ok=True)
    _compiled.append(shared)
    (cache / compile_cache.KIND).symlink_to(shared, target_is_directory=True)
    compile_cache.enable()


@pytest.fixture(autouse=True, scope="session")
def _one_blas_thread_a_process():
    """Under pytest-xdist (``make test``: one process a core) numpy's and scipy's OpenBLAS get one
    thread a process, in the processes tests start too (commands, Dask workers, the app's server).
    Their default, a thread a core, could only contend for cores other processes keep busy, and
    OpenBLAS's threads wait for each other: on this 2-core machine under the suite's load an L-BFGS
    MAP fit took 12x longer, a 200 x 200 Cholesky factor and product 100x. A run without xdist (the
    timed tests, a developer's run of one file) keeps the machine's default, as a user's would."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        from threadpoolctl import threadpool_limits

        os.environ["OPENBLAS_NUM_THREADS"] = "1"  # libraries loaded later, and the processes tests start
        threadpool_limits(limits=1, user_api="blas")  # the ones loaded already
    yield


@pytest.fixture
def codes_to_matrix():
    """:func:`rating_matrix_from_codes`, for tests that fit simulated codes."""
    return rating_matrix_from_codes


@pytest.fixture
def fake_openai() -> Iterator[Callable[[Responder], FakeOpenAI]]:
    """Start fake OpenAI-compatible servers on 127.0.0.1: ``fake_openai(respond)`` returns a running
    :class:`tests.fake_openai.FakeOpenAI`; every one is stopped after the test."""
    started: list[FakeOpenAI] = []

    def start(respond: Responder) -> FakeOpenAI:
        started.append(FakeOpenAI(respond))
        return started[-1]

    yield start
    for server in started:
        server.close()


@pytest.fixture(autouse=True, scope="session")
def _own_user_data_folder(tmp_path_factory):
    """The per-user data folder (``$XDG_DATA_HOME``, where the default study database lives) is a
    temporary one: no test, and no process a test starts, writes to the real one of whoever runs them."""
    os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("user_data"))
    yield


SKIP_ENV = "EVAL_SKIP_POSTGRES"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_owner(args: list[str], owner: str | None) -> list[str]:
    return ["runuser", "-u", owner, "--", *args] if owner else args


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[str]:
    """A PostgreSQL cluster on 127.0.0.1: yields its server URL (without database); removed at the end."""
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"{SKIP_ENV}=1: PostgreSQL tests skipped on this machine")
    binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if not binaries:
        pytest.fail("PostgreSQL is not installed: run `bash scripts/install_postgres.sh` (or set EVAL_SKIP_POSTGRES=1)")
    bindir = Path(binaries[-1]).parent
    owner = "postgres" if os.geteuid() == 0 else None
    folder = Path(tempfile.mkdtemp(prefix="eval-pg-"))
    if owner:
        entry = pwd.getpwnam(owner)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    data, port = folder / "data", _free_port()
    run = dict(check=True, capture_output=True, text=True, timeout=120)
    try:
        subprocess.run(
            _as_owner(
                [str(bindir / "initdb"), "-D", str(data), "-U", "eval", "--auth=trust", "-E", "UTF8", "--no-sync"],
                owner,
            ),
            **run,
        )
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100"
        subprocess.run(
            _as_owner(
                [str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start"],
                owner,
            ),
            **run,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as err:
        log = (folder / "log").read_text() if (folder / "log").exists() else ""
        shutil.rmtree(folder, ignore_errors=True)
        pytest.fail(f"PostgreSQL could not be started: {err}\n{getattr(err, 'stderr', '')}\n{log}")
    try:
        yield f"postgresql+psycopg://eval@127.0.0.1:{port}"
    finally:
        subprocess.run(
            _as_owner([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"], owner),
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(folder, ignore_errors=True)


_numbers = itertools.count()


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path, monkeypatch) -> Iterator[str]:
    """A fresh, empty study database (its URL, also in ``EVAL_DATABASE_URL``), on each backend."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'studies.sqlite'}"
    else:
        import psycopg

        server = request.getfixturevalue("postgres_cluster")
        name = f"test_{os.getpid()}_{next(_numbers)}"
        with psycopg.connect(f"{server.replace('+psycopg', '')}/postgres", autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        url = f"{server}/{name}"
    monkeypatch.setenv("EVAL_DATABASE_URL", url)
    yield url
    from lib.study import db as study_db

    study_db.dispose(url)
