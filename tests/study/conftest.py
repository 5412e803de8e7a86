"""Storage fixtures: every test that takes ``db`` runs on SQLite and on PostgreSQL.

PostgreSQL is a throwaway cluster of Debian's ``postgresql`` binaries (``/usr/lib/postgresql/*/bin``,
installed by ``make test`` through ``scripts/install_postgres.sh``), started once per session on
127.0.0.1 at a free port in a temporary folder (as the ``postgres`` user when the tests run as root:
PostgreSQL refuses to run as root) and removed afterwards; each test gets a database of its own. If
the cluster cannot be started the tests fail, they do not skip: set ``EVAL_SKIP_POSTGRES=1`` to skip
them on a machine without PostgreSQL (docs/studies.md).
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lib.study import db as study_db

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
    monkeypatch.setenv(study_db.DATABASE_ENV, url)
    yield url
    study_db.dispose(url)
