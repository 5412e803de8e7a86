"""Helpers of the hostile study tests (issue 31): a command run under a time bound, small studies, a
study answered through its links."""

from __future__ import annotations

import contextlib
import io
import signal
import time
from collections.abc import Sequence

import pandas as pd
import pytest

from lib.cli import main
from lib.study.annotate import open_page, submit
from lib.study.create import create_study
from lib.study.items import read_items

LIMIT_S = 30
"""Every hostile run must end within this (the issue's bound for a database that never answers)."""


class Hang(BaseException):
    """Raised by the alarm: a BaseException, so the code under test cannot swallow it."""


def _on_alarm(signum, frame):
    raise Hang()


def run(argv: Sequence[str], limit: float = LIMIT_S) -> tuple[int, str, str, float]:
    """Exit code, stdout, stderr and seconds of ``python -m lib ARGV`` (in-process), failing the test
    after ``limit`` seconds; an exception escaping :func:`lib.cli.main` (a traceback) fails it too."""
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    started = time.perf_counter()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(list(argv))
    except Hang:
        pytest.fail(f"python -m lib {' '.join(argv)} took more than {limit:g} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue(), time.perf_counter() - started


def items_table(prompts: Sequence[str], systems: Sequence[str], gold: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per (prompt, system); ``gold``: ``{system: cell}`` of a ``gold_fluency`` column on the
    last prompt (blank elsewhere)."""
    rows = []
    for p in prompts:
        for s in systems:
            row = {"prompt_id": p, "prompt_text": f"text of {p}", "system": s, "response": f"{s} answers {p}"}
            if gold is not None:
                row["gold_fluency"] = gold.get(s, "") if p == prompts[-1] else ""
            rows.append(row)
    return pd.DataFrame(rows)


def pairwise_study(url: str, prompts: Sequence[str], systems: Sequence[str], *, annotators: int = 2, per_item=1):
    """A stored pairwise study on the criterion ``fluency``."""
    items = read_items(items_table(prompts, systems), "pairwise", ["fluency"], file="items.csv")
    return create_study(
        items, task="pairwise", criteria=["fluency"], annotators=annotators, per_item=per_item, url=url
    )


def answer_all(token: str, pick, *, url: str | None = None) -> int:
    """Answer every page of a link with ``pick(page)`` (the form's choices); the pages answered."""
    done = 0
    while (page := open_page(token, url=url).page) is not None:
        submit(token, page.assignment_id, pick(page), url=url)
        done += 1
    return done
