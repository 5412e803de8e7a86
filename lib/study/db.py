"""The study database: ``EVAL_DATABASE_URL`` when set (e.g. a team's PostgreSQL), else a SQLite file in the
user's data folder.

The default file is ``studies.sqlite`` in the per-user data folder (``$XDG_DATA_HOME/efficient-human-eval``,
else ``~/.local/share/efficient-human-eval`` on Linux; platformdirs' ``user_data_path``): outside the
checkout, so ``git clean`` or a new clone cannot remove it. A file left by an earlier release at
``data/studies/studies.sqlite`` is copied there (SQLite's online backup) the first time, and left in place.

The schema is versioned by Alembic (``lib/study/migrations``): :func:`engine` upgrades a database to
the newest revision the first time a process opens it, so a new release migrates an existing study
file or server in place. SQLite runs in WAL mode and starts every transaction with ``BEGIN IMMEDIATE``
(a writer waits for another up to the timeout instead of failing on an upgraded read lock), with
foreign keys enforced. A SQLite file is opened without permission to create it again, and every
transaction first checks that the file is still the one opened: a file deleted or replaced while the
app runs stops the next write with :class:`~lib.study.errors.StorageError` (before, answers went on
into the deleted file and were lost).

Every wait is bounded by :func:`timeout_s` (``EVAL_DATABASE_TIMEOUT``, default 15 s): PostgreSQL's
``connect_timeout`` and ``statement_timeout``, SQLite's busy timeout and the wait for a pooled connection.
A database error other than a repeated answer (the unique constraints) becomes StorageError, whose
message names the database (never its password) and the reason.
"""

from __future__ import annotations

import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import cast
from urllib.parse import quote, unquote

from sqlalchemy import URL, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session

from lib.errors import OutputError
from lib.io.paths import DATA_DIR
from lib.study.errors import StorageError, StudyError

log = logging.getLogger(__name__)

APP_NAME = "efficient-human-eval"
"""The folder of the project's files in the per-user data folder."""

DATABASE_ENV = "EVAL_DATABASE_URL"
"""Environment variable naming the database (a SQLAlchemy URL, e.g. ``postgresql+psycopg://...``)."""

LEGACY_PATH = DATA_DIR / "studies" / "studies.sqlite"
"""Where releases before issue 31 kept the default SQLite file (inside the checkout)."""

TIMEOUT_ENV = "EVAL_DATABASE_TIMEOUT"
"""Environment variable: the seconds any wait on the database may last (connect, statement, lock)."""

DEFAULT_TIMEOUT_S = 15.0
"""Seconds a database may take to connect or to answer a statement, and a SQLite writer may wait for
another, before the request fails: short enough that a database that never answers is reported within
30 s (issue 31; `study list` on a loaded 2-core machine adds about 5 s of start-up), long enough for
dozens of annotators writing at once (each write takes milliseconds)."""

MAX_TIMEOUT_S = 600.0

POSTGRESQL = "postgresql+psycopg"
"""The project's PostgreSQL driver (psycopg 3); ``postgres://`` and ``postgresql://`` are read as it."""

_SPELLINGS = {"postgres": POSTGRESQL, "postgresql": POSTGRESQL, "postgres+psycopg": POSTGRESQL, POSTGRESQL: POSTGRESQL}
_SQLITE = {"sqlite", "sqlite+pysqlite"}

RETRY_AFTER_S = 5.0
"""Seconds a database that could not be opened is reported at once, without a new attempt: the requests
made meanwhile (annotators opening their links) fail at once instead of each waiting a timeout of its own
in turn."""

MIGRATIONS = Path(__file__).parent / "migrations"

_engines: dict[str, Engine] = {}
_failed: dict[str, tuple[float, StorageError]] = {}
_lock = threading.Lock()


def default_path() -> Path:
    """The default SQLite file: ``studies.sqlite`` in the per-user data folder (see the module's text)."""
    from platformdirs import user_data_path

    return user_data_path(APP_NAME, appauthor=False) / "studies.sqlite"


def database_url() -> str:
    """The database's URL: ``$EVAL_DATABASE_URL``, else ``sqlite:///`` :func:`default_path`."""
    return os.environ.get(DATABASE_ENV) or f"sqlite:///{default_path()}"


def timeout_s() -> float:
    """``$EVAL_DATABASE_TIMEOUT`` seconds, else :data:`DEFAULT_TIMEOUT_S`.

    Raises
    ------
    StudyError
        A value that is not a number of seconds from 1 to :data:`MAX_TIMEOUT_S`.
    """
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 1 <= value <= MAX_TIMEOUT_S:  # NaN fails too
        raise StudyError(f"{TIMEOUT_ENV} must be a number of seconds from 1 to {MAX_TIMEOUT_S:g}, not '{raw}'")
    return value


def parse_url(url: str) -> URL:
    """``url`` as SQLAlchemy's URL, PostgreSQL's common spellings mapped onto the project's driver.

    Raises
    ------
    StudyError
        Not a URL, or a database other than SQLite and PostgreSQL (the ones the migrations are tested on).
    """
    try:
        parsed = make_url(url)
    except Exception as err:  # SQLAlchemy's ArgumentError: the URL is the user's input
        raise StudyError(f"the study database ({DATABASE_ENV} or --database) is not a database URL: {err}") from None
    if parsed.drivername in _SPELLINGS:
        return parsed.set(drivername=POSTGRESQL)
    if parsed.drivername not in _SQLITE:
        raise StudyError(
            f"'{parsed.drivername}' is not a database the studies can use: give sqlite:///FILE or "
            f"{POSTGRESQL}://USER:PASSWORD@HOST:PORT/DBNAME (postgres:// and postgresql:// are read as the latter)"
        )
    return parsed


def sqlite_path(parsed: URL) -> Path | None:
    """The file of a SQLite URL (plain or ``file:`` URI form), None for another database.

    Raises
    ------
    StudyError
        An in-memory database: every connection would see a database of its own.
    """
    if parsed.get_backend_name() != "sqlite":
        return None
    name = parsed.database or ""
    if parsed.query.get("uri") == "true" and name.startswith("file:"):
        name = unquote(name.removeprefix("file:").split("?")[0])
    if not name or ":memory:" in name or parsed.query.get("mode") == "memory":
        raise StudyError("an in-memory SQLite database cannot hold a study; name a file")
    return Path(name)


def describe(url: str | None = None) -> str:
    """Where the studies are, for people: ``SQLite file PATH`` or the URL without its password.

    Raises
    ------
    StudyError
        A URL that cannot be used (:func:`parse_url`).
    """
    parsed = parse_url(url or database_url())
    path = sqlite_path(parsed)
    return f"SQLite file {path}" if path is not None else parsed.render_as_string(hide_password=True)


def backup_advice(url: str | None = None) -> str:
    """How to back up the database (Markdown with code): ``study backup`` for SQLite, ``pg_dump`` for PostgreSQL.

    Raises
    ------
    StudyError
        A URL that cannot be used (:func:`parse_url`).
    """
    if sqlite_path(parse_url(url or database_url())) is not None:
        return "back it up with `python -m lib study backup --out FILE` (a consistent copy while the app runs)"
    return "back it up with `pg_dump -Fc DBNAME > studies.dump` (restore with `pg_restore -d DBNAME`)"


def engine(url: str | None = None) -> Engine:
    """The engine of ``url`` (default :func:`database_url`), created and migrated once per process.

    Parameters
    ----------
    url : str, optional
        A SQLAlchemy URL (SQLite or PostgreSQL). A SQLite file and its folder are created when missing.

    Raises
    ------
    StudyError
        A URL that cannot be used (:func:`parse_url`), an in-memory SQLite database, a bad
        :data:`TIMEOUT_ENV`.
    StorageError
        A folder that cannot be created, a database that cannot be reached within the timeout or
        cannot be migrated (the reason kept); for :data:`RETRY_AFTER_S` after such a failure, the same
        error at once.
    """
    url = url or database_url()
    with _lock:
        if url not in _engines:
            until, err = _failed.get(url, (-math.inf, None))
            if err is not None and time.monotonic() < until:
                raise type(err)(str(err)) from err.__cause__
            try:
                _engines[url] = _open(url)
            except StorageError as failure:  # not a setting's error: that one is told afresh each time
                _failed[url] = (time.monotonic() + RETRY_AFTER_S, failure)
                raise
            _failed.pop(url, None)
        return _engines[url]


def _open(url: str) -> Engine:
    parsed = parse_url(url)
    seconds = timeout_s()
    path = sqlite_path(parsed)
    if path is not None:
        eng = _sqlite_engine(parsed, path, seconds)
    else:
        eng = create_engine(
            parsed,
            pool_pre_ping=True,
            pool_timeout=seconds,
            connect_args={
                "connect_timeout": max(2, math.ceil(seconds)),  # libpq's least
                "options": f"-c statement_timeout={round(seconds * 1000)}",
            },
        )
    try:
        migrate(eng)
    except (DBAPIError, PoolTimeout) as err:
        eng.dispose()
        raise StorageError(_cannot(parsed, err, seconds)) from err
    except StudyError:
        eng.dispose()
        raise
    return eng


def _sqlite_engine(parsed: URL, path: Path, seconds: float) -> Engine:
    """A SQLite engine that never creates its file again once it exists, and refuses a file deleted or
    replaced since (checked before each connection and each transaction)."""
    if parsed.query.get("uri") != "true":  # a file: URI of the user's is opened as they wrote it
        _create_file(path)
        parsed = URL.create("sqlite", database=f"file:{quote(str(path))}", query={"mode": "rw", "uri": "true"})
    eng = create_engine(parsed, pool_timeout=seconds)
    _sqlite_transactions(eng, round(seconds * 1000))
    _same_file_guard(eng, path)
    return eng


def _create_file(path: Path) -> None:
    """The SQLite file and its folder, made once (the default one from an earlier release's file if there is one).

    Raises
    ------
    StorageError
        The folder or the file cannot be made, or the earlier file cannot be copied.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise StorageError(
            f"cannot create the folder {path.parent} of the study database ({err.strerror or err}); choose "
            f"another place with {DATABASE_ENV}=sqlite:///FILE"
        ) from None
    if path.exists():
        return
    try:
        if path == default_path() and LEGACY_PATH.is_file():
            _adopt_legacy(path)
        path.touch()  # an empty file is an empty SQLite database
    except (OSError, sqlite3.Error) as err:
        raise StorageError(f"cannot create the study database {path} ({err})") from None


def _adopt_legacy(path: Path) -> None:
    """Copy the studies an earlier release kept inside the checkout to the default file (online backup,
    into a partial file renamed when complete)."""
    partial = path.with_name(f".{path.name}.partial")
    source, target = sqlite3.connect(LEGACY_PATH), sqlite3.connect(partial)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()
    partial.replace(path)
    log.warning(
        "copied the studies of %s to %s: the default study database is now in the per-user data folder, "
        "outside the checkout (the old file is left in place)",
        LEGACY_PATH,
        path,
    )


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def _same_file_guard(eng: Engine, path: Path) -> None:
    """Refuse every new connection and every transaction once the file at ``path`` is not the one opened."""
    opened = _identity(path)

    def check(*_args) -> None:
        now = _identity(path)
        if now is None:
            raise StorageError(
                f"the study database {path} was deleted while in use: nothing more is stored until it is back; "
                "restore it (from a copy made by `python -m lib study backup`) and restart the app"
            )
        if now != opened:
            raise StorageError(
                f"the study database {path} was replaced by another file while in use: nothing more is stored; "
                "put the file back, or restart the app to use the new one"
            )

    event.listen(eng, "do_connect", check)
    event.listen(eng, "begin", check)


def _sqlite_transactions(eng: Engine, busy_ms: int) -> None:
    """WAL, the busy timeout, foreign keys and ``BEGIN IMMEDIATE`` on every SQLite connection (the
    driver's own implicit BEGIN is switched off so that SQLAlchemy's is the one issued)."""

    @event.listens_for(eng, "connect")
    def _connect(dbapi_connection, _record) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(eng, "begin")
    def _begin(conn) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def _cannot(parsed: URL, err: Exception, seconds: float) -> str:
    """The operator's message for a database error: where, and why (a timeout said as such)."""
    orig = getattr(err, "orig", None) or err
    timed_out = isinstance(err, PoolTimeout) or type(orig).__name__ in {"ConnectionTimeout", "QueryCanceled"}
    if timed_out or "database is locked" in str(orig):
        why = f"it did not answer within {seconds:g} s (set {TIMEOUT_ENV} to wait longer)"
    else:
        why = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
    path = sqlite_path(parsed)
    where = str(path) if path is not None else parsed.render_as_string(hide_password=True)
    return f"the study database {where} cannot be used: {why}"


def migrate(eng: Engine) -> None:
    """Upgrade the database of ``eng`` to the newest schema revision (Alembic ``upgrade head``)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with eng.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def dispose(url: str | None = None) -> None:
    """Close and forget the engine of ``url`` (tests; a server restart does the same)."""
    url = url or database_url()
    with _lock:
        eng = _engines.pop(url, None)
        _failed.pop(url, None)
    if eng is not None:
        eng.dispose()


@contextmanager
def transaction(url: str | None = None) -> Iterator[Session]:
    """A session in one transaction: committed when the block ends, rolled back if it raises.

    Raises
    ------
    StorageError
        The database cannot be reached, answers too late, was deleted or replaced, or refuses the write.
    sqlalchemy.exc.IntegrityError
        A unique constraint (a repeated answer: :func:`lib.study.annotate.submit` compares it).
    """
    eng = engine(url)
    try:
        with Session(eng, expire_on_commit=False) as session, session.begin():
            yield session
    except IntegrityError:
        raise
    except (DBAPIError, PoolTimeout) as err:
        raise StorageError(_cannot(eng.url, err, timeout_s())) from err


def backup(target: str | Path, url: str | None = None) -> Path:
    """Copy a SQLite study database to a new file with SQLite's online backup (consistent while the app
    writes; copying the file alone can miss the write-ahead log).

    Parameters
    ----------
    target : str or Path
        The new file (it must not exist; its folder must).
    url : str, optional
        The database (default :func:`database_url`).

    Returns
    -------
    Path
        ``target``.

    Raises
    ------
    StudyError
        A PostgreSQL database (back it up with ``pg_dump``).
    OutputError
        ``target`` exists, or its folder is missing or takes no file.
    StorageError
        The database cannot be read.
    """
    url = url or database_url()
    parsed = parse_url(url)
    if sqlite_path(parsed) is None:
        raise StudyError(f"{describe(url)} is a PostgreSQL database: {backup_advice(url)}")
    out = Path(target)
    if out.exists():
        raise OutputError("already exists: a backup is written to a new file only", file=str(out))
    partial = out.with_name(f".{out.name}.partial")
    eng = engine(url)
    try:
        copy = sqlite3.connect(partial)
    except sqlite3.Error as err:
        raise OutputError(f"cannot be written ({err})", file=str(out)) from None
    try:
        with transaction(url):  # the file is still the one opened
            pass
        with eng.connect() as conn:  # outside a transaction: the backup takes its own consistent read
            cast(sqlite3.Connection, conn.connection.driver_connection).backup(copy)
        copy.close()
        partial.replace(out)
    except (DBAPIError, PoolTimeout, sqlite3.Error) as err:
        raise StorageError(_cannot(parsed, err, timeout_s())) from err
    finally:
        copy.close()
        partial.unlink(missing_ok=True)
    return out
