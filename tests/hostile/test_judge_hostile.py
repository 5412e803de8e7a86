"""Hostile judge servers and judge files (issue 31, items 6, 8 and 15): each case runs the command
line in-process against the loopback OpenAI-compatible server (``tests/fake_openai.py``) answering as
``tests/judges/test_judges_command.py``'s judge, under a time bound, and checks the exit code, the
message and the files.

- a judge answering "a tie" was recorded as A (its first word): now unusable, kept raw;
- a server answering 401 with a body that quotes the Authorization header put the operator's key into
  ``judge_votes.csv`` and on stderr (and ``revise``'s ``failures.csv``): now redacted everywhere;
- an HTML page from the server gave ``AttributeError: 'str' object has no attribute 'choices'``;
- a judge file sharing one item with the humans blamed "systems that never win".
"""

from __future__ import annotations

import contextlib
import io
import json
import signal
from pathlib import Path

import pandas as pd
import pytest

from lib.cli import main
from lib.io.paths import DATA_DIR
from tests.fake_openai import FakeOpenAI
from tests.judges.test_judges_command import PAIRS, judge_server

LIMIT_S = 60
KEY = "sk-operator-9f8e7d6c5b4a"


class Hang(BaseException):
    """Raised by the alarm: a BaseException, so the code under test cannot swallow it."""


def _on_alarm(signum, frame):
    raise Hang()


def run(argv: list[str]) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``python -m lib ARGV``, failing the test after ``LIMIT_S`` seconds."""
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(LIMIT_S)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(argv)
    except Hang:
        pytest.fail(f"python -m lib {' '.join(argv)} took more than {LIMIT_S} s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def server(monkeypatch, tmp_path, fake_openai):
    """Start a loopback judge server of a mode as the configured server with the operator's key; a fresh
    answer cache."""
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))

    def start(mode: str) -> FakeOpenAI:
        running = fake_openai(judge_server(mode))
        monkeypatch.setenv("OPENAI_BASE_URL", running.url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        return running

    return start


def judge(tmp_path: Path) -> tuple[int, str, str]:
    PAIRS.to_csv(tmp_path / "pairs.csv", index=False)
    return run(
        ["judge", "--input", str(tmp_path / "pairs.csv"), "--model", "fake", "--out", str(tmp_path / "out"),
         "--max-retries", "0", "--timeout", "10"]
    )


def votes(tmp_path: Path) -> pd.DataFrame:
    return pd.read_csv(tmp_path / "out" / "judge_votes.csv", dtype=str, keep_default_na=False)


def test_a_judge_answering_a_tie_is_not_recorded_as_a(server, tmp_path):
    server("tie")
    code, stdout, _ = judge(tmp_path)
    assert code == 0
    table = votes(tmp_path)
    assert (table["choice"] == "").all() and (table["raw_verdict"] == "a tie").all()  # before: A, 6 of 6
    assert json.loads((tmp_path / "out" / "usage.json").read_text())["unusable"] == 6
    assert "6 verdicts (0 cached, 6 unusable, 0 failed)" in stdout


def test_a_401_quoting_the_authorization_header_leaves_the_key_in_no_file_or_output(server, tmp_path):
    running = server("quote401")
    code, stdout, stderr = judge(tmp_path)
    assert code == 1 and running.authorizations() == [f"Bearer {KEY}"] * 6  # the key was sent, and quoted back
    table = votes(tmp_path)
    assert table["error"].str.contains("AuthenticationError").all()
    assert table["error"].str.contains("Authorization: Bearer [redacted]", regex=False).all()
    assert "failed: p1 / x vs y: AuthenticationError" in stderr
    written = [p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file()]
    assert not any(KEY in text for text in [stdout, stderr, *written])  # before: 12 rows of the csv and stderr


def test_a_401_quoting_the_key_is_redacted_from_revise_too(server, tmp_path):
    url = server("quote401").url
    drafts = pd.DataFrame({"text_id": ["1"], "system": ["A"], "draft": ["The cat sat."]})
    drafts.to_csv(tmp_path / "drafts.csv", index=False)
    code, stdout, stderr = run(
        ["revise", "--drafts", str(tmp_path / "drafts.csv"), "--engine", "openai", "--model", "m",
         "--base-url", url, "--max-retries", "0", "--out", str(tmp_path / "out")]
    )
    assert code == 1
    failures = pd.read_csv(tmp_path / "out" / "failures.csv", dtype=str)
    assert "[redacted]" in failures["error"].iloc[0]
    written = [p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file()]
    assert not any(KEY in text for text in [stdout, stderr, *written])


def test_an_html_page_from_the_server_is_named_as_one_with_url_and_status(server, tmp_path):
    url = server("html").url
    code, _, stderr = judge(tmp_path)
    assert code == 1  # before: a failure per request, "AttributeError: 'str' object has no attribute 'choices'"
    error = votes(tmp_path)["error"]
    said = f"the server at {url}/ did not answer with JSON (HTTP 200): it sent an HTML page, not an OpenAI-compatible"
    assert error.str.startswith(said).all() and "AttributeError" not in stderr
    assert "<h1>Please log in</h1>" in error.iloc[0]


def test_a_judge_file_sharing_one_item_with_the_humans_says_so(tmp_path, monkeypatch):
    """PandaLM's human votes; gpt-3.5-turbo's verdicts on every item, all but item 0 under other prompt ids."""
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    pandalm = DATA_DIR / "pandalm_pairwise"
    verdicts = pd.read_csv(pandalm / "judge_votes_long.csv", dtype=str)
    verdicts = verdicts[verdicts["judge"] == "gpt-3.5-turbo"]
    verdicts["item_id"] = verdicts["item_id"].where(verdicts["item_id"] == "0", "other-" + verdicts["item_id"])
    verdicts.to_csv(tmp_path / "judge_one.csv", index=False)
    code, _, stderr = run(
        ["rank", "--input", str(pandalm / "pairwise_long.csv"), "--format", "pairwise", "--judge",
         str(tmp_path / "judge_one.csv"), "--sampler", "laplace", "--out", str(tmp_path / "out")]
    )
    assert code == 2 and "never win" not in stderr  # before: "some system never wins or never loses"
    assert stderr.startswith(
        "error: judge_one.csv: only 1 item (prompt and system pair) is judged by both the humans and the judge, "
        "and it leaves the 5 systems in 4 groups that no shared item links"
    )
    assert "at least 4 items" in stderr and not any((tmp_path / "out").glob("*.csv"))
