"""The operator's API key goes only to the operator's server (lib.revision.credentials.choose_key)."""

from __future__ import annotations

import pytest

from lib.errors import SettingsError
from lib.revision.credentials import DEFAULT_BASE_URL, choose_key

OPERATOR = {"OPENAI_BASE_URL": "https://llm.example.org/v1", "OPENAI_API_KEY": "server-secret"}


def test_the_configured_server_gets_the_configured_key():
    assert choose_key("", "", OPERATOR) == ("https://llm.example.org/v1", "server-secret")
    # the same server typed again (case of the host, a final slash) is still the operator's
    assert choose_key(" https://LLM.example.org/v1/ ", "", OPERATOR)[1] == "server-secret"
    assert choose_key("", "", {"OPENAI_API_KEY": "server-secret"}) == (DEFAULT_BASE_URL, "server-secret")


@pytest.mark.parametrize(
    "typed",
    [
        "http://127.0.0.1:9999/v1",
        "https://llm.example.org.evil.test/v1",
        "https://llm.example.org@evil.test/v1",
        "http://llm.example.org/v1",
        "https://llm.example.org:8443/v1",
        "https://llm.example.org/other",
    ],
)
def test_another_server_never_gets_the_configured_key(typed):
    with pytest.raises(SettingsError, match="type an API key"):
        choose_key(typed, "", OPERATOR)
    assert choose_key(typed, "visitor-key", OPERATOR) == (typed, "visitor-key")


def test_without_a_configured_key_a_typed_server_needs_none():
    assert choose_key("http://localhost:11434/v1", "", {}) == ("http://localhost:11434/v1", "")
    assert choose_key("http://localhost:11434/v1", "", {"OPENAI_API_KEY": ""}) == ("http://localhost:11434/v1", "")


def test_a_typed_key_is_used_for_the_configured_server_too():
    assert choose_key("", "mine", OPERATOR) == ("https://llm.example.org/v1", "mine")


@pytest.mark.parametrize("url", ["http://[bad", "https://[::1/v1"])
def test_a_malformed_base_url_is_a_settings_error(url):
    with pytest.raises(SettingsError, match=r"is not a valid URL"):
        choose_key(url, "", {})
    with pytest.raises(SettingsError, match=r"is not a valid URL"):
        choose_key("", "", {"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-server"})
