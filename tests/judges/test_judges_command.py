"""``python -m lib judge`` against a loopback OpenAI-compatible server: both orders, cache, retries,
timeouts, tokens, the key rule, and its output read back as a judge file."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import lib.cli
from lib.io.tables import read_csv
from lib.judges.quality import judge_quality
from lib.judges.read import match_items, read_judge_file
from tests.fake_openai import Reply, Request, Responder, chat, html

PAIRS = pd.DataFrame(
    {
        "prompt": ["p1", "p2", "p3"],
        "system_a": ["x", "y", "x"],
        "system_b": ["y", "z", "z"],
        "prompt_text": ["Say hi.", "Count to two.", "Name a colour."],
        "response_a": ["good hi", "one", "undecided red"],
        "response_b": ["hi", "good one two", "blue"],
    }
)


def judge_server(mode: str) -> Responder:
    """A chat-completions judge. ``biased``: answers A whenever Response A says 'good', else B, and
    'I cannot tell' when a response says 'undecided'; ``first``: always A; ``tie``: always 'a tie';
    ``error``: HTTP 500; ``flaky``: HTTP 500 to the first request only, then as ``first``; ``slow``:
    answers after 2 s; ``quote401``: HTTP 401 whose JSON body quotes the request's Authorization
    header; ``html``: HTTP 200 with an HTML page (a proxy's login page)."""

    def respond(request: Request) -> Reply:
        if mode == "error" or (mode == "flaky" and request.number == 1):
            return Reply(500)
        if mode == "quote401":
            said = f"invalid credentials in header Authorization: {request.authorization}"
            return Reply(401, json.dumps({"error": {"message": said, "type": "invalid_request"}}).encode())
        if mode == "html":
            return html()
        user = request.user
        first = user.split("Response A:\n", 1)[1].split("\n\nResponse B:", 1)[0]
        answer = (
            "a tie"
            if mode == "tie"
            else "A"
            if mode in ("first", "flaky")
            else "I cannot tell"
            if "undecided" in user
            else "A."
            if "good" in first
            else "b"
        )
        usage = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}
        return chat(answer, model=request.body["model"], usage=usage, delay=2 if mode == "slow" else 0)

    return respond


@pytest.fixture
def serve(monkeypatch, tmp_path, fake_openai):
    """Start a judge server of a mode (tests/fake_openai.py), on a fresh answer cache and no configured
    server."""
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)

    return lambda mode: fake_openai(judge_server(mode))


def judge(tmp_path, *extra: str) -> int:
    PAIRS.to_csv(tmp_path / "pairs.csv", index=False)
    args = ["judge", "--input", str(tmp_path / "pairs.csv"), "--model", "fake", "--out", str(tmp_path / "out")]
    return lib.cli.main([*args, "--overwrite", "--max-retries", "0", "--timeout", "5", *extra])


def test_both_orders_cached_with_tokens_and_the_configured_key(serve, tmp_path, monkeypatch, capsys):
    server = serve("biased")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator")
    assert judge(tmp_path) == 0
    votes = pd.read_csv(tmp_path / "out" / "judge_votes.csv", dtype=str, keep_default_na=False)
    assert list(votes.columns) == ["prompt", "system_a", "system_b", "judge", "choice", "raw_verdict", "error"]
    assert votes[["prompt", "system_a", "system_b"]].values.tolist() == [
        ["p1", "x", "y"],
        ["p1", "y", "x"],
        ["p2", "y", "z"],
        ["p2", "z", "y"],
        ["p3", "x", "z"],
        ["p3", "z", "x"],
    ]
    # the 'good' response wins in both orders; 'I cannot tell' is unusable, kept raw
    assert votes["choice"].tolist() == ["A", "B", "B", "A", "", ""]
    assert votes["raw_verdict"].tolist()[-1] == "I cannot tell"
    used = json.loads((tmp_path / "out" / "usage.json").read_text())
    assert used == {"requests": 6, "cached": 0, "failed": 0, "unusable": 2, "prompt_tokens": 60, "completion_tokens": 6}
    assert server.authorizations() == ["Bearer sk-operator"] * 6
    assert judge(tmp_path) == 0  # a rerun is answered from the cache: no request, no token
    assert len(server.authorizations()) == 6
    used = json.loads((tmp_path / "out" / "usage.json").read_text())
    assert (used["cached"], used["prompt_tokens"], used["unusable"]) == (6, 0, 2)
    assert "sk-operator" not in "".join(p.read_text() for p in (tmp_path / "cache" / "judges").glob("*.json"))


def test_the_configured_key_never_goes_to_a_typed_url(serve, tmp_path, monkeypatch, capsys):
    server = serve("biased")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator")  # configured for OpenAI, not for this server
    assert judge(tmp_path, "--base-url", server.url) == 2
    assert "is not the server this app is configured for" in capsys.readouterr().err and server.authorizations() == []
    monkeypatch.setenv("MY_KEY", "sk-mine")
    assert judge(tmp_path, "--base-url", server.url, "--api-key-env", "MY_KEY") == 0
    assert set(server.authorizations()) == {"Bearer sk-mine"}


def test_position_bias_of_a_judge_that_always_picks_the_first(serve, tmp_path, monkeypatch):
    server = serve("first")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    assert judge(tmp_path) == 0
    path = tmp_path / "out" / "judge_votes.csv"
    judges = read_judge_file(read_csv(path, path.name), file=path.name)
    humans = PAIRS[["prompt", "system_a", "system_b"]].rename(columns={"prompt": "prompt_id"})
    humans = humans.assign(annotator_id="h", winner="a", criterion="overall")
    items, verdicts = match_items(humans, judges)
    table = judge_quality(items, verdicts).table
    assert table.loc[0, "position_bias"] == pytest.approx(0.5) and table.loc[0, "n_items"] == 3


@pytest.mark.parametrize(("mode", "reason"), [("error", "InternalServerError"), ("slow", "within 0.5 s")])
def test_failed_requests_are_reported_and_kept_blank(serve, tmp_path, monkeypatch, capsys, mode, reason):
    server = serve(mode)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    assert judge(tmp_path, "--timeout", "0.5", "--concurrency", "6") == 1
    assert len(server.authorizations()) == 6  # --max-retries 0: one attempt each
    votes = pd.read_csv(tmp_path / "out" / "judge_votes.csv", dtype=str, keep_default_na=False)
    assert (votes["choice"] == "").all() and votes["error"].str.contains(reason).all()
    assert json.loads((tmp_path / "out" / "usage.json").read_text())["failed"] == 6
    assert "failed: p1 / x vs y" in capsys.readouterr().err


def test_a_request_that_fails_once_is_retried(serve, tmp_path, monkeypatch):
    server = serve("flaky")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    assert judge(tmp_path, "--max-retries", "1", "--concurrency", "1") == 0
    assert len(server.authorizations()) == 7  # six requests, the first one twice
    votes = pd.read_csv(tmp_path / "out" / "judge_votes.csv", dtype=str, keep_default_na=False)
    assert (votes["choice"] == "A").all()
