"""Hostile storage of a study (issue 31, items 1, 2, 3 and 11): a database deleted or replaced while in use,
a default database inside the checkout, no backup, a failed write, a database that never answers, URLs and
paths that cannot be used, links written to a folder that takes no file, four ``study extend`` at once.

Each case runs the command (or the library call the app makes) under a time bound and checks the exit
code and the message."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import select
from study_hostile import answer_all, pairwise_study, run

from lib.io.paths import ROOT
from lib.study import db as study_db
from lib.study.adaptive import extend
from lib.study.annotate import open_page, submit
from lib.study.export import export_judgments
from lib.study.models import Assignment
from lib.study.summary import list_studies

PROMPTS = [f"p{i}" for i in range(6)]
SYSTEMS = ["alpha", "beta"]


def winner_a(page):
    return {"fluency": {"winner": "A"}}


@pytest.fixture
def sqlite_db(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'studies.sqlite'}"
    monkeypatch.setenv(study_db.DATABASE_ENV, url)
    yield url, tmp_path / "studies.sqlite"
    study_db.dispose(url)


# 1. A deleted or replaced database, the default's place, backups ------------------------------------------------


def test_a_database_deleted_while_in_use_stops_the_next_write_with_a_clear_error(sqlite_db):
    """Before: six more answers were accepted into the deleted file and lost; a new process found no study."""
    from lib.study.errors import StorageError  # new in issue 31

    url, path = sqlite_db
    created = pairwise_study(url, PROMPTS, SYSTEMS)
    token = created.tokens[0][1]
    page = open_page(token).page
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with pytest.raises(StorageError, match=r"studies.sqlite was deleted while in use.*study backup"):
        submit(token, page.assignment_id, winner_a(page))
    with pytest.raises(StorageError, match="was deleted"):
        list_studies()
    assert not path.exists()  # nothing recreated in its place: the next process must not find an empty database


def test_a_database_replaced_while_in_use_is_refused_and_one_put_back_is_used_again(sqlite_db):
    from lib.study.errors import StorageError  # new in issue 31

    url, path = sqlite_db
    created = pairwise_study(url, PROMPTS, SYSTEMS)
    token = created.tokens[0][1]
    page = open_page(token).page
    away = path.with_name("moved.sqlite")
    path.rename(away)
    shutil.copyfile(away, path)  # another file (a copy) under the same name
    with pytest.raises(StorageError, match="studies.sqlite was replaced by another file while in use"):
        submit(token, page.assignment_id, winner_a(page))
    path.unlink()
    away.rename(path)  # the same file back: writes go on
    assert submit(token, page.assignment_id, winner_a(page)).repeated is False


def test_the_default_database_is_in_the_per_user_data_folder_outside_the_checkout(tmp_path, monkeypatch):
    """Before: ``data/studies/studies.sqlite`` inside the checkout (``git clean -fdx`` removed it)."""
    monkeypatch.delenv(study_db.DATABASE_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    expected = tmp_path / "share" / "efficient-human-eval" / "studies.sqlite"
    assert study_db.database_url() == f"sqlite:///{expected}"
    assert ROOT not in expected.parents
    code, out, err, _ = run(["study", "create", "--demo", "--max-prompts", "2", "--annotators", "3",
                             "--out-link", str(tmp_path / "links.csv")])
    study_db.dispose()
    assert (code, err) == (0, "") and expected.is_file()
    assert f"database: SQLite file {expected}" in out


def test_a_study_file_of_the_old_default_place_is_copied_to_the_new_one(tmp_path, monkeypatch, caplog):
    """A study stored by an earlier release under ``data/studies/`` is not left behind (nothing is lost)."""
    old = tmp_path / "checkout" / "data" / "studies" / "studies.sqlite"
    old.parent.mkdir(parents=True)
    created = pairwise_study(f"sqlite:///{old}", PROMPTS, SYSTEMS)
    answer_all(created.tokens[0][1], winner_a, url=f"sqlite:///{old}")
    before = export_judgments(created.study_id, url=f"sqlite:///{old}")
    study_db.dispose(f"sqlite:///{old}")
    monkeypatch.setattr(study_db, "LEGACY_PATH", old)
    monkeypatch.delenv(study_db.DATABASE_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    new = tmp_path / "share" / "efficient-human-eval" / "studies.sqlite"
    code, out, err, _ = run(["study", "list"])
    try:
        assert (code, err) == (0, "") and len(out.splitlines()) == 2  # the header and study 1
        assert export_judgments(created.study_id).equals(before)
    finally:
        study_db.dispose()
    assert f"copied the studies of {old} to {new}" in caplog.text and old.is_file()  # the old file is left as it was


def test_study_backup_writes_a_consistent_copy_while_the_app_runs(sqlite_db, tmp_path):
    url, _ = sqlite_db
    created = pairwise_study(url, PROMPTS, SYSTEMS)
    answer_all(created.tokens[0][1], winner_a)
    target = tmp_path / "backup.sqlite"
    code, out, err, _ = run(["study", "backup", "--out", str(target)])
    assert (code, err) == (0, "") and f"backup of {tmp_path / 'studies.sqlite'} written to {target}" in out
    copy = f"sqlite:///{target}"
    try:
        assert export_judgments(created.study_id, url=copy).equals(export_judgments(created.study_id))
    finally:
        study_db.dispose(copy)
    code, _, err, _ = run(["study", "backup", "--out", str(target)])
    assert code == 2 and err == f"error: {target}: already exists: a backup is written to a new file only\n"


def test_a_postgresql_database_is_backed_up_with_pg_dump():
    code, _, err, _ = run(["study", "--database", "postgresql+psycopg://u:secret@127.0.0.1:9/x", "backup",
                           "--out", "b.sqlite"])
    assert code == 2 and "pg_dump" in err and "secret" not in err


# 2. A failed write: a plain error, the detail in the operator's log ---------------------------------------------


def test_a_write_the_database_refuses_is_a_storage_error_not_a_driver_traceback(sqlite_db, tmp_path):
    """A read-only database (the issue's ``disk I/O error``): the driver's error becomes StorageError."""
    from lib.study.errors import StorageError  # new in issue 31

    url, path = sqlite_db
    created = pairwise_study(url, PROMPTS, SYSTEMS)
    token = created.tokens[0][1]
    page = open_page(token).page
    study_db.dispose(url)
    read_only = f"sqlite:///file:{path}?mode=ro&uri=true"
    try:
        with pytest.raises(StorageError, match="cannot be used: attempt to write a readonly database") as caught:
            submit(token, page.assignment_id, winner_a(page), url=read_only)
    finally:
        study_db.dispose(read_only)
    assert "readonly" in str(caught.value.__cause__)  # the detail is kept for the operator's log


# 3. A database that accepts and never answers -------------------------------------------------------------------


@pytest.fixture
def silent_server():
    """A TCP server on 127.0.0.1 that accepts every connection and never sends a byte."""
    server = socket.create_server(("127.0.0.1", 0))
    stop, held = threading.Event(), []

    def serve():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def test_the_default_timeout_fails_within_30_seconds(monkeypatch):
    monkeypatch.delenv(study_db.TIMEOUT_ENV, raising=False)
    assert 0 < study_db.DEFAULT_TIMEOUT_S <= 30 and study_db.timeout_s() == study_db.DEFAULT_TIMEOUT_S


@pytest.mark.parametrize("bad", ["0", "-1", "nan", "soon", "100000"])
def test_a_bad_timeout_setting_is_refused(monkeypatch, bad):
    monkeypatch.setenv(study_db.TIMEOUT_ENV, bad)
    code, _, err, _ = run(["study", "--database", "sqlite:///x.sqlite", "list"])
    assert code == 2 and f"{study_db.TIMEOUT_ENV} must be a number of seconds from 1 to 600, not '{bad}'" in err


def test_study_list_on_a_database_that_never_answers_exits_2_within_the_timeout(silent_server, monkeypatch):
    """Before: ``study list``, the Studies page and the annotators' links hung (no connect timeout)."""
    monkeypatch.setenv(study_db.TIMEOUT_ENV, "2")
    url = f"postgresql+psycopg://eval:hunter2@127.0.0.1:{silent_server}/studies"
    code, _, err, seconds = run(["study", "--database", url, "list"], limit=15)
    assert code == 2 and seconds < 10
    assert err.startswith(f"error: the study database postgresql+psycopg://eval:***@127.0.0.1:{silent_server}/studies")
    assert "did not answer within 2 s" in err and "hunter2" not in err


def test_requests_at_once_to_a_database_that_never_answers_do_not_queue(silent_server, monkeypatch):
    """30 annotators opening their links while the database is silent: one waits the timeout, the others
    are told at once, rather than each waiting its turn for a timeout of its own (4 x 2 s here)."""
    from lib.study.errors import StorageError  # new in issue 31

    monkeypatch.setenv(study_db.TIMEOUT_ENV, "2")
    url = f"postgresql+psycopg://eval@127.0.0.1:{silent_server}/studies"
    start = threading.Barrier(4)

    def one(_):
        start.wait()
        began = time.perf_counter()
        with pytest.raises(StorageError, match="did not answer within 2 s"):
            list_studies(url=url)
        return time.perf_counter() - began

    with ThreadPoolExecutor(4) as pool:
        waits = list(pool.map(one, range(4)))
    study_db.dispose(url)
    assert max(waits) < 2 + 2.5  # before: 3.3, 5.3, 7.3, 9.3 s (the engine's lock held through each attempt)


def test_postgresql_sessions_carry_the_statement_timeout_and_sqlite_the_busy_timeout(db, monkeypatch):
    from sqlalchemy import text

    monkeypatch.setenv(study_db.TIMEOUT_ENV, "7")
    study_db.dispose(db)
    with study_db.engine(db).connect() as conn:
        if db.startswith("sqlite"):
            assert conn.execute(text("PRAGMA busy_timeout")).scalar_one() == 7000
        else:
            assert conn.execute(text("SHOW statement_timeout")).scalar_one() == "7s"


# 11. URLs, paths and concurrent extends -------------------------------------------------------------------------


def test_the_common_postgres_spellings_are_accepted(postgres_cluster):
    """Before: ``postgres://`` gave a NoSuchModuleError traceback, ``postgresql://`` asked for psycopg2."""
    import psycopg

    with psycopg.connect(f"{postgres_cluster.replace('+psycopg', '')}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE spellings_{os.getpid()}")
    for scheme in ("postgres", "postgresql"):
        url = f"{postgres_cluster.replace('postgresql+psycopg', scheme)}/spellings_{os.getpid()}"
        code, out, err, _ = run(["study", "--database", url, "list"])
        study_db.dispose(url)
        assert (code, err) == (0, "") and "study_id" in out


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql+nosuchdriver://u:pw@127.0.0.1/x", "'mysql+nosuchdriver' is not a database the studies can use"),
        ("mysql://u:pw@127.0.0.1/x", "'mysql' is not a database the studies can use"),
        ("sqlite:////proc/nope/x.sqlite", "cannot create the folder /proc/nope of the study database"),
        ("not a url", "is not a database URL"),
    ],
)
def test_urls_and_paths_that_cannot_be_used_are_clear_errors(url, message):
    code, _, err, _ = run(["study", "--database", url, "list"])
    assert code == 2 and err.startswith("error: ") and message in err and "pw" not in err


def test_links_into_a_folder_that_takes_no_file_are_refused_before_the_study_is_stored(sqlite_db, tmp_path):
    """Before: the study was stored, then writing the links crashed (PermissionError traceback)."""
    folder = Path("/sys") if os.geteuid() == 0 else tmp_path / "read-only"
    if folder != Path("/sys"):
        folder.mkdir()
        folder.chmod(0o555)
    target = folder / "links.csv"
    code, _, err, _ = run(["study", "create", "--demo", "--max-prompts", "2", "--annotators", "3",
                           "--out-link", str(target)])
    assert code == 2 and err.startswith(f"error: {target}: cannot be written (") and not target.exists()
    assert list_studies().empty


def test_four_extends_at_once_all_succeed_with_distinct_pages(db):
    """Before: on PostgreSQL 1 of 4 concurrent ``study extend`` died with an IntegrityError (the same page number)."""
    created = pairwise_study(db, [f"p{i}" for i in range(8)], ["alpha", "beta", "gamma"], annotators=8, per_item=1)
    batch = pd.DataFrame({"system_a": "alpha", "system_b": "beta", "prompt_id": [f"p{i}" for i in range(8)]})
    start = threading.Barrier(4)

    def one(seed):
        start.wait()
        return extend(created.study_id, batch, per_prompt=1, seed=seed)

    with ThreadPoolExecutor(4) as pool:
        done = list(pool.map(one, range(4)))  # before: IntegrityError (annotator_id, page) in one of them
    assert [sum(d.pages.values()) for d in done] == [8, 8, 8, 8] and not any(d.unplaced for d in done)
    with study_db.transaction(db) as session:
        pages = session.execute(select(Assignment.annotator_id, Assignment.page)).all()
    by_person: dict[int, list[int]] = {}
    for person, page in pages:
        by_person.setdefault(person, []).append(page)
    assert sum(map(len, by_person.values())) == 24 + 32
    assert all(sorted(p) == list(range(1, len(p) + 1)) for p in by_person.values())  # no gap, no repeat

