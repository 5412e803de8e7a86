"""The server's OPENAI_API_KEY is never sent to a Base URL a visitor types on the Revision edits page."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "revision.py")


class _Recorder(BaseHTTPRequestHandler):
    """Chat-completions endpoint that records each request's Authorization header."""

    auth: ClassVar[list[str | None]] = []

    def do_POST(self):  # http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).auth.append(self.headers.get("Authorization"))
        draft = body["messages"][-1]["content"].split("###AI-generated Text: ", 1)[1]
        edit = {
            "action_name": "delete",
            "revision_description": "d",
            "revision_level": "word",
            "revision_intention": "Cliche",
            "original_snippet": draft.split()[0],
            "revised_snippet": "",
        }
        payload = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": json.dumps({"edits": [edit]})},
                    }
                ],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Recorder.auth = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


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
    at.text_input(key="revision_base_url").input(server).run()
    assert not at.exception and "type an API key" in at.error[0].value.replace("\\", "")
    assert not at.button  # nothing to press: no request can be made
    assert _Recorder.auth == []
    at.text_input(key="revision_api_key").input("visitor-key").run()
    at.button(key="revision_run").click().run()
    assert not at.exception and not at.error
    assert len(_Recorder.auth) == 54 and set(_Recorder.auth) == {"Bearer visitor-key"}
    assert not any("server-secret" in (a or "") for a in _Recorder.auth)


def test_the_configured_server_gets_the_server_key(server, monkeypatch, tmp_path):
    at = start(monkeypatch, tmp_path, {"OPENAI_API_KEY": "server-secret", "OPENAI_BASE_URL": server})
    at.button(key="revision_run").click().run()
    assert not at.exception and not at.error
    assert len(_Recorder.auth) == 54 and set(_Recorder.auth) == {"Bearer server-secret"}


def test_a_malformed_base_url_is_an_error_on_the_page_not_a_traceback(monkeypatch, tmp_path):
    at = start(monkeypatch, tmp_path, {})
    at.text_input(key="revision_base_url").input("http://[bad").run()
    assert not at.exception and "is not a valid URL" in at.error[0].value.replace("\\", "")
    assert not at.button
