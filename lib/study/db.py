"""The study database: ``EVAL_DATABASE_URL`` when set (e.g. a team's PostgreSQL), else a SQLite file.

The schema is versioned by Alembic (``lib/study/migrations``): :func:`engine` upgrades a database to
the newest revision the first time a process opens it, so a new release migrates an existing study
file or server in place. SQLite runs in WAL mode and starts every transaction with ``BEGIN IMMEDIATE``
(a writer waits for another up to ``busy_timeout`` instead of failing on an upgraded read lock), with
foreign keys enforced.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from lib.paths import DATA_DIR
from lib.study.errors import StudyError

DATABASE_ENV = "EVAL_DATABASE_URL"
"""Environment variable naming the database (a SQLAlchemy URL, e.g. ``postgresql+psycopg://...``)."""

DEFAULT_PATH = DATA_DIR / "studies" / "studies.sqlite"
"""The SQLite file used when :data:`DATABASE_ENV` is not set (its folder is git-ignored)."""

BUSY_TIMEOUT_MS = 30_000
"""How long a SQLite writer waits for another one before it fails."""

MIGRATIONS = Path(__file__).parent / "migrations"

_engines: dict[str, Engine] = {}
_lock = threading.Lock()


def database_url() -> str:
    """The database's URL: ``$EVAL_DATABASE_URL``, else ``sqlite:///<data>/studies/studies.sqlite``."""
    return os.environ.get(DATABASE_ENV) or f"sqlite:///{DEFAULT_PATH}"


def engine(url: str | None = None) -> Engine:
    """The engine of ``url`` (default :func:`database_url`), created and migrated once per process.

    Parameters
    ----------
    url : str, optional
        A SQLAlchemy URL; a SQLite file's folder is created (with a ``.gitignore`` of ``*``). An
        in-memory SQLite database is refused: every connection would see a database of its own.

    Raises
    ------
    StudyError
        A URL SQLAlchemy cannot parse, an in-memory SQLite database, or a database that cannot be
        reached or migrated (the driver's message is kept).
    """
    url = url or database_url()
    with _lock:
        if url not in _engines:
            _engines[url] = _open(url)
        return _engines[url]


def _open(url: str) -> Engine:
    try:
        parsed = make_url(url)
    except Exception as err:  # SQLAlchemy's ArgumentError: the URL is the user's input
        raise StudyError(f"{DATABASE_ENV} is not a database URL: {err}") from None
    if parsed.get_backend_name() == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            raise StudyError("an in-memory SQLite database cannot hold a study; name a file")
        folder = Path(parsed.database).parent
        folder.mkdir(parents=True, exist_ok=True)
        if folder == DEFAULT_PATH.parent and not (folder / ".gitignore").exists():
            (folder / ".gitignore").write_text("*\n")
        eng = create_engine(url)
        _sqlite_transactions(eng)
    else:
        eng = create_engine(url, pool_pre_ping=True)
    try:
        migrate(eng)
    except Exception as err:
        eng.dispose()
        raise StudyError(
            f"the study database {parsed.render_as_string(hide_password=True)} cannot be used: {err}"
        ) from err
    return eng


def _sqlite_transactions(eng: Engine) -> None:
    """WAL, a busy timeout, foreign keys and ``BEGIN IMMEDIATE`` on every SQLite connection (the
    driver's own implicit BEGIN is switched off so that SQLAlchemy's is the one issued)."""

    @event.listens_for(eng, "connect")
    def _connect(dbapi_connection, _record) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(eng, "begin")
    def _begin(conn) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")


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
    if eng is not None:
        eng.dispose()


@contextmanager
def transaction(url: str | None = None) -> Iterator[Session]:
    """A session in one transaction: committed when the block ends, rolled back if it raises."""
    with Session(engine(url), expire_on_commit=False) as session, session.begin():
        yield session
