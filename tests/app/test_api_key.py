"""The server's OPENAI_API_KEY is never sent to a Base URL a visitor types on the Revision edits page."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.fake_openai import delete_word

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "revision.py")


@pytest.fixture
def server(fake_openai):
    """A revision editor deleting each draft's first word, recording each request's Authorization header."""
    return fake_openai(delete_word(0))


def start(monkeypatch, tmp_path, env: dict[str, str]) -> AppTest:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.text_input(key="revision_model").input("m").run()
    at.radio(key="revision_source").set_value("LLM (OpenAI-compatible)").run()
    return at.radio(key="revision_prompt").set_value("reference-free").run()


def test_a_typed_base_url_never_receives_the_server_key(server, monkeypatch, tmp_path):
    at = start(monkeypatch, tmp_path, {"OPENAI_API_KEY": "server-secret"})
    at.text_input(key="revision_base_url").input(server.url).run()
    assert not at.exception and "type an API key" in at.error[0].value.replace("\\", "")
    assert not at.button  # nothing to press: no request can be made
    assert server.authorizations() == []
    at.text_input(key="revision_api_key").input("visitor-key").run()
    at.button(key="revision_run").click().run()
    assert not at.exception and not at.error
    assert len(server.authorizations()) == 54 and set(server.authorizations()) == {"Bearer visitor-key"}
    assert not any("server-secret" in a for a in server.authorizations())


def test_the_configured_server_gets_the_server_key(server, monkeypatch, tmp_path):
    at = start(monkeypatch, tmp_path, {"OPENAI_API_KEY": "server-secret", "OPENAI_BASE_URL": server.url})
    at.button(key="revision_run").click().run()
    assert not at.exception and not at.error
    assert len(server.authorizations()) == 54 and set(server.authorizations()) == {"Bearer server-secret"}


def test_a_malformed_base_url_is_an_error_on_the_page_not_a_traceback(monkeypatch, tmp_path):
    at = start(monkeypatch, tmp_path, {})
    at.text_input(key="revision_base_url").input("http://[bad").run()
    assert not at.exception and "is not a valid URL" in at.error[0].value.replace("\\", "")
    assert not at.button
