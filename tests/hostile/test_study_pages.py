"""Hostile conditions on the study pages (issue 31, items 1, 2, 4 and 14), as AppTests of app.py: a database
that fails under the annotator's page, where the database lives, formula names handed to the Data page, and
guesses of the operator's secret."""

from __future__ import annotations

import logging
import re
import socket

import pytest
from streamlit.testing.v1 import AppTest
from study_hostile import answer_all, pairwise_study

from lib.io.paths import ROOT
from lib.study import access
from lib.study import db as study_db
from lib.study.access import SECRET_ENV
from lib.study.export import export_judgments

APP = str(ROOT / "app.py")


@pytest.fixture
def sqlite_db(tmp_path, monkeypatch):
    path = tmp_path / "studies.sqlite"
    url = f"sqlite:///{path}"
    monkeypatch.setenv(study_db.DATABASE_ENV, url)
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(SECRET_ENV, raising=False)
    yield url, path
    study_db.dispose(url)


def annotator(token: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["study_token"] = token
    return at.run()


def shown_text(at: AppTest) -> str:
    return "\n".join(str(e.value) for e in [*at.markdown, *at.caption, *at.title, *at.error, *at.warning, *at.info])


# 2. A failed write: a plain message, the choice kept, the detail in the operator's log only ---------------------


def test_a_failed_write_keeps_the_choice_and_a_retry_stores_it(sqlite_db, caplog):
    """Before: the annotator saw the driver's traceback (paths, host and port) and their answer was dropped."""
    url, path = sqlite_db
    created = pairwise_study(url, ["p0", "p1"], ["alpha", "beta"], annotators=1)
    page = annotator(created.tokens[0][1])
    page.button[0].click().run()  # Start
    page.radio(key=next(r.key for r in page.radio if r.key.startswith("choice_"))).set_value("B")
    away = path.with_name("elsewhere.sqlite")
    path.rename(away)  # the database goes away (a full or unmounted disk, an operator's mistake)
    with caplog.at_level(logging.ERROR):
        page.button[0].click().run()
    assert not page.exception
    said = shown_text(page)
    assert "could not be saved" in page.error[0].value and "Submit again" in page.error[0].value
    for detail in ("Traceback", "sqlite", str(path.parent), "StorageError"):
        assert detail not in said
    assert str(path) in caplog.text  # the operator's log has the detail
    assert next(r for r in page.radio if r.key.startswith("choice_")).value == "B"  # the choice is still there
    away.rename(path)  # the database is back
    assert export_judgments(created.study_id).empty  # nothing was stored by the failed submission
    page.button[0].click().run()  # the same choice, submitted again
    assert not page.exception and not page.error
    assert export_judgments(created.study_id)["choice"].tolist() in (["A"], ["B"])
    assert "Page 2 of 2" in page.get("progress")[0].proto.text


def test_a_database_that_is_down_shows_the_annotator_no_host_or_port(monkeypatch, sqlite_db):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here
    url = f"postgresql+psycopg://eval:pw@127.0.0.1:{port}/studies"
    monkeypatch.setenv(study_db.DATABASE_ENV, url)
    page = annotator("A" * 32)
    assert not page.exception
    said = shown_text(page)
    assert "cannot be reached just now" in said and str(port) not in said and "psycopg" not in said
    study_db.dispose(url)


# 1. Where the database lives ------------------------------------------------------------------------------------


def test_the_studies_page_shows_where_the_database_is_and_how_to_back_it_up(sqlite_db):
    _, path = sqlite_db
    at = AppTest.from_file(APP, default_timeout=60).run()
    at = at.switch_page("pages/studies.py").run()
    assert not at.exception
    said = re.sub(r"\\(.)", r"\1", shown_text(at))
    assert f"Study database: SQLite file {path}" in said and "python -m lib study backup --out FILE" in said


# 4. Formula names handed to the Data page ----------------------------------------------------------------------


def test_open_in_the_data_page_keeps_formula_names(sqlite_db):
    """Before: the Data page got ``'-minus`` and ``'@cf/...`` for ``-minus`` and ``@cf/...``."""
    url, _ = sqlite_db
    systems = ["-minus", "@cf/meta/llama-3-8b", "=sum"]
    created = pairwise_study(url, ["-p0", "+p1"], systems, annotators=2)
    for _, token in created.tokens:
        answer_all(token, lambda page: {"fluency": {"winner": "A"}})
    at = AppTest.from_file(APP, default_timeout=120).run()
    at = at.switch_page("pages/studies.py").run()
    at.button(key="studies_open").click().run()
    assert not at.exception and not at.error
    votes = at.session_state["analysis_input"].judgments.votes
    assert set(votes.system_a) | set(votes.system_b) == set(systems) and set(votes.prompt_id) == {"-p0", "+p1"}


# 14. The operator's secret backs off after wrong guesses --------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_wrong_guesses_of_the_secret_back_off():
    """Before: 20 guesses in 8.6 s. After the first few (typos), each wrong guess doubles the wait before the
    next one is compared, up to a minute; a guess in the wait is not compared at all."""
    clock = Clock()
    gate = access.SecretGate(clock)
    secret = "operator-secret"
    waited = 0.0
    for _ in range(20):
        verdict = gate.check("guess", secret)
        if not verdict.checked:  # guessed during the wait: not compared; wait as told, then guess
            assert verdict.wait_s > 0
            clock.now += verdict.wait_s
            waited += verdict.wait_s
            verdict = gate.check("guess", secret)
        assert verdict.checked and not verdict.ok
    assert waited == 1 + 2 + 4 + 8 + 16 + 32 + 60 * 11  # 723 s: 20 guesses take 12 minutes, not 8.6 s
    assert gate.check(secret, secret).wait_s > 0  # even the right secret waits its turn
    clock.now += access.MAX_WAIT_S
    assert gate.check(secret, secret).ok and gate.check("guess", secret).wait_s == 0  # a success starts afresh


def test_the_secret_page_says_how_long_to_wait(sqlite_db, monkeypatch):
    monkeypatch.setenv(SECRET_ENV, "s3cret-operator")
    clock = Clock()
    monkeypatch.setattr(access, "GATE", access.SecretGate(clock))
    at = AppTest.from_file(APP, default_timeout=60).run()
    for _ in range(access.FREE_GUESSES):
        at.text_input[0].set_value("wrong")
        at.button[0].click().run()
        assert "not the operator's secret" in at.error[0].value
    at.text_input[0].set_value("still wrong")
    at.button[0].click().run()
    assert "next guess is taken in 1 s" in at.error[0].value
    at.text_input[0].set_value("s3cret-operator")
    at.button[0].click().run()
    assert at.title[0].value == "Operator's secret" and "next guess is taken in" in at.error[0].value
    clock.now += 1
    at.button[0].click().run()
    assert at.title[0].value == "Data"
