"""AppTest helpers shared by the page tests: a new session of the whole app on a fresh fit cache."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from streamlit.testing.v1 import AppTest

from lib.io.paths import ROOT
from lib.study import db as study_db
from lib.study.access import SECRET_ENV

APP = str(ROOT / "app.py")


@pytest.fixture
def new_session(monkeypatch, tmp_path) -> Callable[[], AppTest]:
    """Make AppTest sessions of app.py (not yet run) sharing one fresh fit cache, as two browser tabs
    of one server would."""
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    return lambda: AppTest.from_file(APP, default_timeout=180)


@pytest.fixture
def at(new_session) -> AppTest:
    """A session of the app, run once (the Data page on the default data set)."""
    return new_session().run()


@pytest.fixture
def db(monkeypatch, tmp_path) -> Iterator[str]:
    """A fresh SQLite study database for the page tests (its URL, also in ``EVAL_DATABASE_URL``; the root
    conftest's ``db`` runs every backend), with a fresh fit cache and no study secret from the environment."""
    url = f"sqlite:///{tmp_path / 'studies.sqlite'}"
    monkeypatch.setenv(study_db.DATABASE_ENV, url)
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(SECRET_ENV, raising=False)
    yield url
    study_db.dispose(url)
