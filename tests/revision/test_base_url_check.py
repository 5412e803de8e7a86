"""Issue 17, item 11's end: a Base URL with a tab (or another blank or control character, a scheme
other than http(s), a bad port) is a clear message on the Revision page and on the command line, never
the HTTP client's InvalidURL exception."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lib.cli import main
from lib.errors import SettingsError
from lib.revision.client import EditProposer, LLMSettings
from lib.revision.credentials import choose_key
from lib.revision.prompts import REFERENCE_FREE

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "revision.py")
BAD = [
    ("http://127.0.0.1:8000/\tv1", "contains '\\t'"),
    ("http://127.0.0.1:8000/v1\x00", "contains '\\x00'"),
    ("http://local host/v1", "contains ' '"),
    ("localhost:8000/v1", "must start with http"),
    ("http://127.0.0.1:99999/v1", "invalid port"),
]


@pytest.mark.parametrize(("url", "message"), BAD)
def test_a_base_url_that_cannot_be_used_is_a_settings_error(url, message):
    with pytest.raises(SettingsError, match=message.replace("\\", "\\\\")):
        choose_key(url, "key", {})
    with pytest.raises(SettingsError, match=message.replace("\\", "\\\\")):
        EditProposer(LLMSettings(model="m", base_url=url), REFERENCE_FREE, use_cache=False)


def test_a_tab_in_the_command_line_base_url_exits_2_with_a_message(tmp_path, capsys):
    drafts = tmp_path / "drafts.csv"
    drafts.write_text("text_id,system,draft\n1,A,a b c\n", encoding="utf-8")
    code = main(
        [
            "revise",
            "--drafts",
            str(drafts),
            "--engine",
            "openai",
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:8000/\tv1",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "contains '\\t'" in err and "Traceback" not in err


def test_a_tab_in_the_pages_base_url_is_a_message_not_an_exception(monkeypatch, tmp_path):
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.text_input(key="revision_model").input("m").run()
    at.radio(key="revision_source").set_value("LLM (OpenAI-compatible)").run()
    at.text_input(key="revision_base_url").input("http://127.0.0.1:8000/\tv1").run()
    assert not at.exception
    assert "contains" in at.error[0].value.replace("\\", "") and not at.button
