"""The one fake OpenAI-compatible server of the tests: a loopback (127.0.0.1) HTTP server whose answer to
each request a test chooses, recording every request it receives.

A test takes the ``fake_openai`` fixture (tests/conftest.py) and starts a server with a responder, a
function from the :class:`Request` to the :class:`Reply`::

    server = fake_openai(lambda request: chat("A"))
    ...  # point the code at server.url (".../v1"), as a user points it at theirs
    assert server.authorizations() == ["Bearer sk-..."]

The requests go through the real OpenAI SDK and HTTP stack (retries, timeouts, headers), as a user's do.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LOGIN_PAGE = b"<!DOCTYPE html><html><body><h1>Please log in</h1></body></html>"
"""What a proxy in front of the server sends instead of a chat completion."""

FAST_RETRY = {"retry-after-ms": "1"}
"""A header the SDK honours: its retries of a reply carrying it take no real time."""


@dataclass(frozen=True)
class Request:
    """One request the server received: its number (1 for the first), path, Authorization header ("" when
    absent) and JSON body."""

    number: int
    path: str
    authorization: str
    body: dict[str, Any]

    @property
    def user(self) -> str:
        """The last message's text (the prompt the code under test built)."""
        return self.body["messages"][-1]["content"]

    @property
    def draft(self) -> str:
        """The draft of a revision prompt (the text after its ``###AI-generated Text:`` marker)."""
        return self.user.split("###AI-generated Text: ", 1)[1]


@dataclass(frozen=True)
class Reply:
    """What the server answers: HTTP status, body, content type, extra headers, and a delay before it."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


Responder = Callable[[Request], Reply]


def completion(content: str, *, model: str = "m", finish_reason: str = "stop", usage: dict | None = None) -> dict:
    """The JSON of a chat completion whose one choice says ``content``."""
    answer: dict[str, Any] = {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason, "message": {"role": "assistant", "content": content}}],
    }
    if usage is not None:
        answer["usage"] = usage
    return answer


def chat(content: str, *, delay: float = 0.0, **kw: Any) -> Reply:
    """A chat completion saying ``content``, sent after ``delay`` seconds (keywords as :func:`completion`)."""
    return Reply(body=json.dumps(completion(content, **kw)).encode(), delay=delay)


def edits(*proposed: dict, **kw: Any) -> Reply:
    """A chat completion proposing the revision edits ``proposed`` (the JSON the revision prompts ask for)."""
    return chat(json.dumps({"edits": list(proposed)}), **kw)


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    """An OpenAI-style error: HTTP ``status`` with ``{"error": {"message": ...}}``."""
    return Reply(status, json.dumps({"error": {"message": message}}).encode(), headers=headers or {})


def html(status: int = 200, delay: float = 0.0) -> Reply:
    """A proxy's login page (HTML, not JSON) with HTTP ``status``."""
    return Reply(status, LOGIN_PAGE, "text/html", delay=delay)


DELETION = {
    "action_name": "delete",
    "revision_description": "d",
    "revision_level": "word",
    "revision_intention": "Cliche",
    "revised_snippet": "",
}


def edit(original: str, revised: str = "", **fields: str) -> dict:
    """One revision edit replacing ``original`` by ``revised`` (a deletion by default); its other fields
    those of :data:`DELETION` unless given."""
    return {**DELETION, "original_snippet": original, "revised_snippet": revised, **fields}


def delete_word(k: int) -> Responder:
    """A revision editor whose one edit deletes word number ``k`` of each draft."""
    return lambda request: edits(edit(request.draft.split()[k]), model=request.body["model"])


class FakeOpenAI:
    """A chat-completions server on 127.0.0.1 (a free port) answering each request with ``respond``.

    Attributes
    ----------
    root : str
        ``http://127.0.0.1:PORT``: the server answers every path below it.
    url : str
        The Base URL to give the code under test: ``{root}/v1``.
    requests : list of Request
        Every request received, in order of arrival.
    """

    def __init__(self, respond: Responder) -> None:
        self.requests: list[Request] = []
        lock = threading.Lock()
        requests = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server API
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with lock:
                    request = Request(
                        len(requests) + 1, self.path, self.headers.get("Authorization", ""), json.loads(raw or b"{}")
                    )
                    requests.append(request)
                reply = respond(request)
                time.sleep(reply.delay)
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(reply.body)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped waiting (a test of its timeout)

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True  # a slow reply still being written does not hold the test up
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.root = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.url = f"{self.root}/v1"

    def authorizations(self) -> list[str]:
        """The Authorization header of each request, in order."""
        return [r.authorization for r in self.requests]

    def bodies(self) -> list[dict[str, Any]]:
        """The JSON body of each request, in order."""
        return [r.body for r in self.requests]

    def close(self) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()
