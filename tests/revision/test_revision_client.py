"""LLM edit client through the SDK against the fake OpenAI-compatible server (tests/fake_openai.py)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from lib.revision.client import DraftTask, EditProposer, LLMSettings, results_to_tables
from lib.revision.prompts import REFERENCE_BASED, REFERENCE_FREE
from tests.fake_openai import FAST_RETRY, chat, delete_word, edits, error, html
from tests.timing import slowdown

DRAFT = "The cat sat on the mat. It was very very happy."
EDIT = {
    "action_name": "delete",
    "revision_description": "Remove the repeated intensifier.",
    "revision_level": "word",
    "revision_intention": "Unnecessary/Redundant Exposition",
    "original_snippet": "very very happy",
    "revised_snippet": "happy",
}


GOOD = edits(EDIT)


def good(request):
    return GOOD


def proposer(server, tmp_path, *, template=REFERENCE_FREE, model="m", use_cache=True, max_retries=2):
    settings = LLMSettings(
        model=model, base_url=server.url, api_key="sk-secret-123", concurrency=2, max_retries=max_retries
    )
    return EditProposer(settings, template, cache=tmp_path, use_cache=use_cache)


def test_structured_output_sends_schema_at_temperature_zero(fake_openai, tmp_path):
    server = fake_openai(good)
    result = proposer(server, tmp_path).propose(DraftTask("t1", "A", DRAFT))
    assert result.error is None and result.path == "json_schema"
    assert [e.model_dump() for e in result.edits] == [EDIT]
    body = server.bodies()[0]
    assert body["temperature"] == 0
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert set(schema["$defs"]["RevisionEdit"]["required"]) == set(EDIT)
    assert DRAFT in body["messages"][-1]["content"]


def test_reference_based_prompt_carries_the_reference(fake_openai, tmp_path):
    server = fake_openai(good)
    proposer(server, tmp_path, template=REFERENCE_BASED).propose(
        DraftTask("t1", "A", DRAFT, reference="The cat was happy.")
    )
    assert "###Human-written Text: The cat was happy." in server.requests[0].user


def test_json_mode_fallback_when_server_rejects_schema(fake_openai, tmp_path):
    def handler(request):
        if request.body["response_format"]["type"] == "json_schema":
            return error(500, "json_schema unsupported", FAST_RETRY)
        return GOOD

    server = fake_openai(handler)
    p = proposer(server, tmp_path, max_retries=1)
    results = [p.propose(DraftTask("t1", "A", DRAFT)), p.propose(DraftTask("t2", "A", DRAFT + " More."))]
    assert [r.path for r in results] == ["json_object", "json_object"]
    assert all(r.edits[0].original_snippet == "very very happy" for r in results)
    # one try plus one SDK retry, then JSON mode; the rejection is remembered for the next draft
    seen = server.bodies()
    assert [b["response_format"]["type"] for b in seen] == ["json_schema", "json_schema", "json_object", "json_object"]
    fallback = next(b for b in seen if b["response_format"]["type"] == "json_object")
    assert "JSON schema" in fallback["messages"][0]["content"]


def test_a_draft_failing_in_both_modes_keeps_the_schema_for_the_next(fake_openai, tmp_path):
    def handler(request):
        if "too long" in request.user:
            return error(400, "context length exceeded")
        return GOOD

    server = fake_openai(handler)
    p = proposer(server, tmp_path)
    failed = p.propose(DraftTask("t1", "A", "too long"))
    ok = p.propose(DraftTask("t2", "A", DRAFT))
    assert failed.edits is None and "context length exceeded" in failed.error
    assert ok.path == "json_schema"
    assert [b["response_format"]["type"] for b in server.bodies()] == ["json_schema", "json_object", "json_schema"]


def test_rate_limit_then_success_is_retried_by_the_sdk(fake_openai, tmp_path):
    def handler(request):
        return error(429, "slow down", FAST_RETRY) if request.number == 1 else GOOD

    server = fake_openai(handler)
    result = proposer(server, tmp_path).propose(DraftTask("t1", "A", DRAFT))
    assert len(server.requests) == 2 and result.error is None and len(result.edits) == 1


def test_truncated_answer_fails_that_draft_only(fake_openai, tmp_path):
    def handler(request):
        if "truncate me" in request.user:
            return chat('{"edits": [{"action_name": "del', finish_reason="length")
        return GOOD

    p = proposer(fake_openai(handler), tmp_path)
    results = p.run([DraftTask("t1", "A", DRAFT), DraftTask("t2", "A", "truncate me please")])
    assert results[0].error is None and results[0].edits
    assert results[1].edits is None and "truncated" in results[1].error
    edits, failures = results_to_tables(results, "LLM: m")
    assert list(edits["text_id"]) == ["t1"] and list(failures["text_id"]) == ["t2"]


def test_invalid_json_then_good_reask(fake_openai, tmp_path):
    def handler(request):
        return chat('{"edits": [oops') if request.number == 1 else GOOD

    server = fake_openai(handler)
    result = proposer(server, tmp_path).propose(DraftTask("t1", "A", DRAFT))
    assert result.path == "json_schema+reask" and len(result.edits) == 1
    reask = server.bodies()[1]["messages"]
    assert reask[-2] == {"role": "assistant", "content": '{"edits": [oops'}
    assert "not valid" in reask[-1]["content"]


def test_invalid_json_twice_is_a_failure(fake_openai, tmp_path):
    server = fake_openai(lambda request: chat('{"edits": 3}'))
    result = proposer(server, tmp_path).propose(DraftTask("t1", "A", DRAFT))
    assert len(server.requests) == 2 and result.edits is None and "after one re-ask" in result.error


def test_cache_avoids_a_second_bill_and_keys_on_model_and_prompt(fake_openai, tmp_path):
    server = fake_openai(good)  # one server: only the model and the prompt differ
    p = proposer(server, tmp_path)
    p.propose(DraftTask("t1", "A", DRAFT))
    again = p.propose(DraftTask("t1", "A", DRAFT))
    assert len(server.requests) == 1 and again.cached and again.path == "json_schema"
    stored = next(tmp_path.glob("*.json")).read_text()
    assert "sk-secret-123" not in stored and "sk-secret-123" not in repr(p.settings)
    proposer(server, tmp_path, model="other").propose(DraftTask("t1", "A", DRAFT))
    assert len(server.requests) == 2
    proposer(server, tmp_path, template=REFERENCE_BASED).propose(DraftTask("t1", "A", DRAFT, reference="ref"))
    assert len(server.requests) == 3


def test_real_local_http_server(fake_openai, tmp_path):
    server = fake_openai(delete_word(0))
    settings = LLMSettings(model="local", base_url=server.url, api_key="sk-local", concurrency=3)
    p = EditProposer(settings, REFERENCE_FREE, cache=tmp_path)
    drafts = [DraftTask(f"t{k}", "A", f"Word{k} and more text.") for k in range(5)]
    progress = []
    results = p.run(drafts, progress=lambda done, total: progress.append((done, total)))
    assert [r.edits[0].original_snippet for r in results] == [f"Word{k}" for k in range(5)]
    assert progress[-1] == (5, 5) and len(progress) == 5
    assert {r.path for r in server.requests} == {"/v1/chat/completions"}
    assert set(server.authorizations()) == {"Bearer sk-local"}


def _cached(p, task):
    return next(p.cache.glob(f"{p.cache_key(task)}.json"))


@pytest.mark.parametrize(
    "entry",
    [
        "{not json",
        '{"edits": []}',
        "[1, 2]",
        "\xff\xfe",
        '{"model": "m", "prompt_version": "rd-reference-free-v1", "path": "x", "edits": [{"a": 1}]}',
        '{"model": "other", "prompt_version": "rd-reference-free-v1", "path": "x", "edits": []}',
    ],
)
def test_an_unreadable_or_mismatched_cache_entry_is_a_miss_and_is_replaced(fake_openai, tmp_path, entry):
    server = fake_openai(good)
    p, seen = proposer(server, tmp_path), server.requests
    task = DraftTask("t1", "A", DRAFT)
    (tmp_path / f"{p.cache_key(task)}.json").write_bytes(entry.encode("latin-1"))
    result = p.propose(task)
    assert result.error is None and not result.cached and len(seen) == 1
    assert json.loads(_cached(p, task).read_text())["edits"] == [EDIT]
    assert p.propose(task).cached and len(seen) == 1
    assert not list(tmp_path.glob("*.tmp"))


def test_a_cache_that_cannot_be_written_warns_and_keeps_the_answer(fake_openai, tmp_path):
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache folder should be")
    p = proposer(fake_openai(good), blocked)
    with pytest.warns(RuntimeWarning, match="cannot be written"):
        result = p.propose(DraftTask("t1", "A", DRAFT))
    assert result.error is None and [e.model_dump() for e in result.edits] == [EDIT]


def test_concurrent_writes_of_one_entry_use_distinct_temp_files(fake_openai, tmp_path, monkeypatch):
    import tempfile

    made = []
    real = tempfile.mkstemp
    monkeypatch.setattr(tempfile, "mkstemp", lambda **kw: made.append(real(**kw)) or made[-1])
    both_asked = threading.Barrier(2, timeout=10)  # both drafts are in flight before either is written

    def handler(request):
        both_asked.wait()
        return GOOD

    p = proposer(fake_openai(handler), tmp_path)
    results = p.run([DraftTask("t1", "A", DRAFT), DraftTask("t2", "B", DRAFT)])  # same text: the same entry
    assert [r.cached for r in results] == [False, False]
    assert len({name for _, name in made}) == 2 and all(name.startswith(str(tmp_path)) for _, name in made)
    assert len(list(tmp_path.glob("*.json"))) == 1 and not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("path, status", [("/v1", 200), ("/bad/v1", 502)])
def test_a_server_answering_html_is_named_with_status_and_body(fake_openai, tmp_path, path, status):
    server = fake_openai(lambda request: html(502 if request.path.startswith("/bad/") else 200))
    url = server.root + path
    p = EditProposer(LLMSettings(model="m", base_url=url, max_retries=0), REFERENCE_FREE, cache=tmp_path)
    result = p.propose(DraftTask("t1", "A", DRAFT))
    assert result.edits is None
    assert f"the server at {url}/ did not answer with JSON (HTTP {status}" in result.error
    assert "<h1>Please log in</h1>" in result.error


def test_a_server_that_does_not_answer_in_time_fails_the_draft_quickly(fake_openai, tmp_path):
    """The client hangs up at its 1 s timeout, once. Timed with the client's own work (building the client and
    the request) scaled by the machine's slowdown: the whole call took 3.5 s at a load average of 24 on 2 cores."""
    server = fake_openai(lambda request: html(delay=3))
    url = server.url
    p = EditProposer(LLMSettings(model="m", base_url=url, timeout=1, max_retries=0), REFERENCE_FREE, cache=tmp_path)
    factor = slowdown()
    start = time.perf_counter()
    result = p.propose(DraftTask("t1", "A", DRAFT))
    waited = time.perf_counter() - start
    assert result.edits is None and result.error == f"no answer from the server at {url}/ within 1 s (1 attempts)"
    assert len(server.bodies()) == 1  # one attempt: no retry
    assert waited < 1.0 + 1.5 * factor, (waited, factor)  # the timeout, and 1.5 s of the client's work when idle
