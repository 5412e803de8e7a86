"""Issue 17, item 1: LLM answers are cached per server. Two loopback OpenAI-compatible servers that
propose different edits for the same model name: no answer of one is ever served for the other, and
each server receives the requests meant for it. Item 10: an answer entry replaced by a folder or a
FIFO is a miss."""

from __future__ import annotations

import os
import threading

import pandas as pd
import pytest

from lib.revision.client import DraftTask, EditProposer, LLMSettings
from lib.revision.prompts import REFERENCE_FREE
from lib.revision.run import llm_revision
from tests.fake_openai import delete_word

DRAFTS = pd.DataFrame(
    {
        "text_id": ["t1", "t2"],
        "system": ["A", "A"],
        "draft": ["First words of one draft.", "Other words of another draft."],
    }
)


@pytest.fixture
def servers(monkeypatch, tmp_path, fake_openai):
    """Two servers whose edits delete the draft's first and its second word: (Base URL, requests
    received) of each."""
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    made = [fake_openai(delete_word(0)), fake_openai(delete_word(1))]
    return [(server.url, server.requests) for server in made]


def _snippets(url: str, key: str) -> list[str]:
    settings = LLMSettings(model="m", base_url=url, api_key=key, timeout=10, max_retries=0)
    revision = llm_revision(DRAFTS, settings, REFERENCE_FREE)
    assert revision.failures.empty
    return revision.edits.sort_values("text_id")["original_snippet"].tolist()


def test_answers_of_one_base_url_are_never_served_for_another(servers, tmp_path):
    (operator, operator_calls), (visitor, visitor_calls) = servers
    assert _snippets(visitor, "sk-visitor-key") == ["words", "words"]  # the visitor fills the cache first
    assert _snippets(operator, "sk-operator-key") == ["First", "Other"]
    assert len(visitor_calls) == 2 and len(operator_calls) == 2  # the operator's server got its requests
    assert _snippets(visitor, "sk-visitor-key") == ["words", "words"]  # each server's answers stay cached
    assert _snippets(operator + "/", "sk-operator-key") == ["First", "Other"]  # the same server
    assert len(visitor_calls) == 2 and len(operator_calls) == 2
    stored = "".join(p.read_text() for p in (tmp_path / "revision").glob("*.json"))
    assert "sk-visitor-key" not in stored and "sk-operator-key" not in stored


@pytest.mark.parametrize("replacement", ["folder", "fifo"])
def test_an_answer_entry_replaced_by_a_folder_or_fifo_is_a_miss(servers, tmp_path, replacement):
    (url, calls), _ = servers
    proposer = EditProposer(LLMSettings(model="m", base_url=url, timeout=10), REFERENCE_FREE)
    task = DraftTask("t1", "A", DRAFTS["draft"][0])
    entry = proposer.cache / f"{proposer.cache_key(task)}.json"
    entry.parent.mkdir(parents=True)
    entry.mkdir() if replacement == "folder" else os.mkfifo(entry)
    result = []
    thread = threading.Thread(target=lambda: result.append(proposer.propose(task)), daemon=True)
    thread.start()
    thread.join(20)
    assert result and result[0].error is None and not result[0].cached and len(calls) == 1
    assert entry.is_file() and proposer.propose(task).cached
