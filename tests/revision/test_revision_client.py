"""LLM edit client without network: httpx2.MockTransport through the SDK, and a real local server."""

from __future__ import annotations

import json
import select
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import httpx2
import pytest

from lib.revision.client import DraftTask, EditProposer, LLMSettings, results_to_tables
from lib.revision.prompts import REFERENCE_BASED, REFERENCE_FREE

DRAFT = "The cat sat on the mat. It was very very happy."
EDIT = {
    "action_name": "delete",
    "revision_description": "Remove the repeated intensifier.",
    "revision_level": "word",
    "revision_intention": "Unnecessary/Redundant Exposition",
    "original_snippet": "very very happy",
    "revised_snippet": "happy",
}
FAST = {"retry-after-ms": "1"}  # the SDK honours it, so retries take no real time
HUNG_UP_S = 1.5
"""Seconds a server that does not answer may hold a request of a client with a 1 s timeout: the timeout, and
the two wake-ups (the client's timer, the server seeing the hang-up)."""


def completion(content: str, finish_reason: str = "stop") -> dict:
    return {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "finish_reason": finish_reason, "message": {"role": "assistant", "content": content}}],
    }


def good() -> httpx2.Response:
    return httpx2.Response(200, json=completion(json.dumps({"edits": [EDIT]})))


def proposer(handler, tmp_path, *, template=REFERENCE_FREE, model="m", use_cache=True, max_retries=2):
    seen: list[dict] = []

    def record(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        return handler(request, len(seen))

    client = httpx2.Client(transport=httpx2.MockTransport(record))
    settings = LLMSettings(
        model=model, base_url="http://llm.test/v1", api_key="sk-secret-123", concurrency=2, max_retries=max_retries
    )
    return EditProposer(settings, template, cache=tmp_path, use_cache=use_cache, http_client=client), seen


def test_structured_output_sends_schema_at_temperature_zero(tmp_path):
    p, seen = proposer(lambda req, n: good(), tmp_path)
    result = p.propose(DraftTask("t1", "A", DRAFT))
    assert result.error is None and result.path == "json_schema"
    assert [e.model_dump() for e in result.edits] == [EDIT]
    body = seen[0]
    assert body["temperature"] == 0
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert set(schema["$defs"]["RevisionEdit"]["required"]) == set(EDIT)
    assert DRAFT in body["messages"][-1]["content"]


def test_reference_based_prompt_carries_the_reference(tmp_path):
    p, seen = proposer(lambda req, n: good(), tmp_path, template=REFERENCE_BASED)
    p.propose(DraftTask("t1", "A", DRAFT, reference="The cat was happy."))
    assert "###Human-written Text: The cat was happy." in seen[0]["messages"][-1]["content"]


def test_json_mode_fallback_when_server_rejects_schema(tmp_path):
    def handler(req, n):
        if json.loads(req.content)["response_format"]["type"] == "json_schema":
            return httpx2.Response(500, json={"error": {"message": "json_schema unsupported"}}, headers=FAST)
        return good()

    p, seen = proposer(handler, tmp_path, max_retries=1)
    results = [p.propose(DraftTask("t1", "A", DRAFT)), p.propose(DraftTask("t2", "A", DRAFT + " More."))]
    assert [r.path for r in results] == ["json_object", "json_object"]
    assert all(r.edits[0].original_snippet == "very very happy" for r in results)
    # one try plus one SDK retry, then JSON mode; the rejection is remembered for the next draft
    assert [b["response_format"]["type"] for b in seen] == ["json_schema", "json_schema", "json_object", "json_object"]
    fallback = next(b for b in seen if b["response_format"]["type"] == "json_object")
    assert "JSON schema" in fallback["messages"][0]["content"]


def test_a_draft_failing_in_both_modes_keeps_the_schema_for_the_next(tmp_path):
    def handler(req, n):
        if "too long" in json.loads(req.content)["messages"][-1]["content"]:
            return httpx2.Response(400, json={"error": {"message": "context length exceeded"}})
        return good()

    p, seen = proposer(handler, tmp_path)
    failed = p.propose(DraftTask("t1", "A", "too long"))
    ok = p.propose(DraftTask("t2", "A", DRAFT))
    assert failed.edits is None and "context length exceeded" in failed.error
    assert ok.path == "json_schema"
    assert [b["response_format"]["type"] for b in seen] == ["json_schema", "json_object", "json_schema"]


def test_rate_limit_then_success_is_retried_by_the_sdk(tmp_path):
    def handler(req, n):
        return httpx2.Response(429, json={"error": {"message": "slow down"}}, headers=FAST) if n == 1 else good()

    p, seen = proposer(handler, tmp_path)
    result = p.propose(DraftTask("t1", "A", DRAFT))
    assert len(seen) == 2 and result.error is None and len(result.edits) == 1


def test_truncated_answer_fails_that_draft_only(tmp_path):
    def handler(req, n):
        draft = json.loads(req.content)["messages"][-1]["content"]
        if "truncate me" in draft:
            return httpx2.Response(200, json=completion('{"edits": [{"action_name": "del', "length"))
        return good()

    p, _ = proposer(handler, tmp_path)
    results = p.run([DraftTask("t1", "A", DRAFT), DraftTask("t2", "A", "truncate me please")])
    assert results[0].error is None and results[0].edits
    assert results[1].edits is None and "truncated" in results[1].error
    edits, failures = results_to_tables(results, "LLM: m")
    assert list(edits["text_id"]) == ["t1"] and list(failures["text_id"]) == ["t2"]


def test_invalid_json_then_good_reask(tmp_path):
    def handler(req, n):
        return httpx2.Response(200, json=completion('{"edits": [oops')) if n == 1 else good()

    p, seen = proposer(handler, tmp_path)
    result = p.propose(DraftTask("t1", "A", DRAFT))
    assert result.path == "json_schema+reask" and len(result.edits) == 1
    reask = seen[1]["messages"]
    assert reask[-2] == {"role": "assistant", "content": '{"edits": [oops'}
    assert "not valid" in reask[-1]["content"]


def test_invalid_json_twice_is_a_failure(tmp_path):
    p, seen = proposer(lambda req, n: httpx2.Response(200, json=completion('{"edits": 3}')), tmp_path)
    result = p.propose(DraftTask("t1", "A", DRAFT))
    assert len(seen) == 2 and result.edits is None and "after one re-ask" in result.error


def test_cache_avoids_a_second_bill_and_keys_on_model_and_prompt(tmp_path):
    p, seen = proposer(lambda req, n: good(), tmp_path)
    p.propose(DraftTask("t1", "A", DRAFT))
    again = p.propose(DraftTask("t1", "A", DRAFT))
    assert len(seen) == 1 and again.cached and again.path == "json_schema"
    stored = next(tmp_path.glob("*.json")).read_text()
    assert "sk-secret-123" not in stored and "sk-secret-123" not in repr(p.settings)
    other, seen2 = proposer(lambda req, n: good(), tmp_path, model="other")
    other.propose(DraftTask("t1", "A", DRAFT))
    ref, seen3 = proposer(lambda req, n: good(), tmp_path, template=REFERENCE_BASED)
    ref.propose(DraftTask("t1", "A", DRAFT, reference="ref"))
    assert len(seen2) == 1 and len(seen3) == 1


class _ChatServer(BaseHTTPRequestHandler):
    """Minimal OpenAI chat-completions endpoint: proposes deleting the draft's first word."""

    calls: ClassVar[list[dict]] = []

    def do_POST(self):  # http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        draft = body["messages"][-1]["content"].split("###AI-generated Text: ", 1)[1]
        first = draft.split()[0]
        edit = dict(EDIT, original_snippet=first, revised_snippet="")
        payload = json.dumps(completion(json.dumps({"edits": [edit]}))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture
def chat_server():
    _ChatServer.calls = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_real_local_http_server(chat_server, tmp_path):
    settings = LLMSettings(model="local", base_url=chat_server, api_key="sk-local", concurrency=3)
    p = EditProposer(settings, REFERENCE_FREE, cache=tmp_path)
    drafts = [DraftTask(f"t{k}", "A", f"Word{k} and more text.") for k in range(5)]
    progress = []
    results = p.run(drafts, progress=lambda done, total: progress.append((done, total)))
    assert [r.edits[0].original_snippet for r in results] == [f"Word{k}" for k in range(5)]
    assert progress[-1] == (5, 5) and len(progress) == 5
    assert {c["path"] for c in _ChatServer.calls} == {"/v1/chat/completions"}
    assert {c["auth"] for c in _ChatServer.calls} == {"Bearer sk-local"}


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
def test_an_unreadable_or_mismatched_cache_entry_is_a_miss_and_is_replaced(tmp_path, entry):
    p, seen = proposer(lambda req, n: good(), tmp_path)
    task = DraftTask("t1", "A", DRAFT)
    (tmp_path / f"{p.cache_key(task)}.json").write_bytes(entry.encode("latin-1"))
    result = p.propose(task)
    assert result.error is None and not result.cached and len(seen) == 1
    assert json.loads(_cached(p, task).read_text())["edits"] == [EDIT]
    assert p.propose(task).cached and len(seen) == 1
    assert not list(tmp_path.glob("*.tmp"))


def test_a_cache_that_cannot_be_written_warns_and_keeps_the_answer(tmp_path):
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache folder should be")
    p, _seen = proposer(lambda req, n: good(), blocked)
    with pytest.warns(RuntimeWarning, match="cannot be written"):
        result = p.propose(DraftTask("t1", "A", DRAFT))
    assert result.error is None and [e.model_dump() for e in result.edits] == [EDIT]


def test_concurrent_writes_of_one_entry_use_distinct_temp_files(tmp_path, monkeypatch):
    import tempfile

    made = []
    real = tempfile.mkstemp
    monkeypatch.setattr(tempfile, "mkstemp", lambda **kw: made.append(real(**kw)) or made[-1])
    both_asked = threading.Barrier(2, timeout=10)  # both drafts are in flight before either is written

    def handler(req, n):
        both_asked.wait()
        return good()

    p, _ = proposer(handler, tmp_path)
    results = p.run([DraftTask("t1", "A", DRAFT), DraftTask("t2", "B", DRAFT)])  # same text: the same entry
    assert [r.cached for r in results] == [False, False]
    assert len({name for _, name in made}) == 2 and all(name.startswith(str(tmp_path)) for _, name in made)
    assert len(list(tmp_path.glob("*.json"))) == 1 and not list(tmp_path.glob("*.tmp"))


class _HtmlServer(BaseHTTPRequestHandler):
    """A proxy's login page: HTTP 200 with HTML, or 502 with HTML for /bad/."""

    def do_POST(self):  # http.server API
        self.rfile.read(int(self.headers["Content-Length"]))
        payload = b"<html><body><h1>Please log in</h1></body></html>"
        self.send_response(502 if self.path.startswith("/bad/") else 200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


class _SilentServer(BaseHTTPRequestHandler):
    """Reads a request and never answers: keeps the connection until the client hangs up (at most
    ``HOLD_S``), and notes how long each request was held (``held``, seconds, one entry per request)."""

    HOLD_S = 30.0
    held: ClassVar[list[float]] = []

    def do_POST(self):  # http.server API
        self.rfile.read(int(self.headers["Content-Length"]))
        began = time.monotonic()
        if select.select([self.connection], [], [], self.HOLD_S)[0]:  # readable: the client closed it
            self.connection.recv(1)
        self.held.append(time.monotonic() - began)
        self.close_connection = True

    def log_message(self, *args):
        pass


def _serve(handler):
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.mark.parametrize("path, status", [("/v1", 200), ("/bad/v1", 502)])
def test_a_server_answering_html_is_named_with_status_and_body(tmp_path, path, status):
    server = _serve(_HtmlServer)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}{path}"
        p = EditProposer(LLMSettings(model="m", base_url=url, max_retries=0), REFERENCE_FREE, cache=tmp_path)
        result = p.propose(DraftTask("t1", "A", DRAFT))
    finally:
        server.shutdown()
        server.server_close()
    assert result.edits is None
    assert f"the server at {url}/ did not answer with JSON (HTTP {status}" in result.error
    assert "<h1>Please log in</h1>" in result.error


def test_a_server_that_does_not_answer_in_time_fails_the_draft_quickly(tmp_path):
    """The server measures how long the client waited for it: the client hangs up at its timeout, once. Timed on
    the server, not around the call: building the client and the request take CPU that a loaded machine slows
    (3.5 s for the whole call at a load average of 24 on 2 cores, where the server held the request 1.0 s)."""
    server = _serve(_SilentServer)
    _SilentServer.held.clear()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        p = EditProposer(LLMSettings(model="m", base_url=url, timeout=1, max_retries=0), REFERENCE_FREE, cache=tmp_path)
        result = p.propose(DraftTask("t1", "A", DRAFT))
    finally:
        server.shutdown()
        server.server_close()
    assert result.edits is None and result.error == f"no answer from the server at {url}/ within 1 s (1 attempts)"
    assert len(_SilentServer.held) == 1 and _SilentServer.held[0] < HUNG_UP_S, _SilentServer.held
