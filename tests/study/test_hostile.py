"""Hostile requests: forged, malformed, revoked and reused tokens, another annotator's task, bad
choices, and 50 submissions at once from one annotator. Each is refused or counted once; nothing
is lost (on SQLite and PostgreSQL)."""

from __future__ import annotations

import secrets
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from study_helpers import answer, make_study

from lib.study.annotate import open_page, submit
from lib.study.create import revoke
from lib.study.db import transaction
from lib.study.errors import AnswerConflict, AnswerError, TaskError, TokenError
from lib.study.export import export_judgments
from lib.study.models import Answer


def stored(url: str) -> int:
    from sqlalchemy import func, select

    with transaction(url) as session:
        return session.scalar(select(func.count(Answer.id)))


FORGED = [secrets.token_urlsafe(24), "", "' OR 1=1 --", "x" * 10_000, None, "../../etc/passwd", "A" * 15]
"""A well-formed random token, then malformed ones (empty, SQL, huge, not text, a path, too short)."""


def test_forged_and_malformed_tokens_are_refused(db):
    created = make_study(db, n_prompts=2, annotators=1, per_item=1)
    real = open_page(created.tokens[0][1]).page
    for token in FORGED:
        with pytest.raises(TokenError, match="this link is not valid"):
            open_page(token)
        with pytest.raises(TokenError):
            submit(token, real.assignment_id, answer(real))
    assert stored(db) == 0


def test_a_revoked_token_is_refused_and_its_answers_stay(db):
    created = make_study(db, n_prompts=2, annotators=2, per_item=1)
    label, token = created.tokens[0]
    page = open_page(token).page
    submit(token, page.assignment_id, answer(page))
    revoke(created.study_id, label)
    with pytest.raises(TokenError):
        open_page(token)
    with pytest.raises(TokenError):
        submit(token, page.assignment_id, answer(page))
    assert stored(db) == 1 and len(export_judgments(created.study_id)) == 6


def test_a_reused_token_cannot_answer_twice(db):
    created = make_study(db, n_prompts=1, annotators=1, per_item=1)
    token = created.tokens[0][1]
    page = open_page(token).page
    first = submit(token, page.assignment_id, answer(page, most="A", least="C"))
    assert open_page(token).page is None  # done: nothing more to judge
    again = submit(token, page.assignment_id, answer(page, most="A", least="C"))
    assert (again.answer_id, again.repeated) == (first.answer_id, True)
    with pytest.raises(AnswerConflict, match="first answer stands"):
        submit(token, page.assignment_id, answer(page, most="B", least="C"))
    assert export_judgments(created.study_id)["judgment"].tolist()[:3] == ["most", "middle", "least"]


@pytest.mark.parametrize("task_id", ["theirs", "other study", 10**9, "1", True, None, 1.0])
def test_another_annotators_task_is_refused(db, task_id):
    created = make_study(db, n_prompts=2, annotators=2, per_item=1)
    other = make_study(db, n_prompts=2, annotators=1, per_item=1)
    (_, mine), (_, theirs) = created.tokens
    ids = {
        "theirs": open_page(theirs).page.assignment_id,
        "other study": open_page(other.tokens[0][1]).page.assignment_id,
    }
    target = ids.get(task_id, task_id)
    with pytest.raises(TaskError, match="there is no task"):
        submit(mine, target, answer(None))
    assert stored(db) == 0


@pytest.mark.parametrize(
    ("choices", "message"),
    [
        ({"consistency": {"most": "A", "least": "A"}, "fluency": {"most": "A", "least": "B"}}, "must differ"),
        ({"consistency": {"most": "A", "least": "D"}, "fluency": {"most": "A", "least": "B"}}, "one of the passages"),
        ({"consistency": {"most": "A", "least": "B"}}, "fluency: no choice"),
        ({"consistency": {"most": "A"}, "fluency": {"most": "A", "least": "B"}}, "choose the LEAST"),
        ({**{c: {"most": "A", "least": "B"} for c in ("consistency", "fluency")}, "style": {}}, "unknown criterion"),
        ({"consistency": {"most": ["A"], "least": "B"}, "fluency": {"most": "A", "least": "B"}}, "choose the MOST"),
        ("A", "a choice per criterion"),
    ],
)
def test_bad_choices_are_refused_and_nothing_is_stored(db, choices, message):
    created = make_study(db, n_prompts=1, annotators=1, per_item=1)
    token = created.tokens[0][1]
    page = open_page(token).page
    with pytest.raises(AnswerError, match=message):
        submit(token, page.assignment_id, choices)
    assert stored(db) == 0
    assert open_page(token).page == page  # still to do


def test_fifty_concurrent_submissions_from_one_annotator(db):
    """10 pages, each submitted 5 times at once (two with other choices): every page is answered
    exactly once, the other identical submissions are told so, the differing ones are refused."""
    created = make_study(db, n_prompts=10, annotators=1, per_item=1)
    token = created.tokens[0][1]
    from sqlalchemy import select

    from lib.study.models import Assignment

    with transaction(db) as session:
        tasks = sorted(session.scalars(select(Assignment.id)))
    jobs = [(task, k) for task in tasks for k in range(5)]
    start = threading.Barrier(len(jobs))

    def send(job):
        task, k = job
        choice = answer(None, most="A", least="C") if k < 3 else answer(None, most="B", least="C")
        start.wait()
        try:
            return task, k, submit(token, task, choice)
        except AnswerConflict:
            return task, k, "conflict"

    with ThreadPoolExecutor(len(jobs)) as pool:
        results = list(pool.map(send, jobs))
    assert len(results) == 50 and stored(db) == 10
    table = export_judgments(created.study_id)
    for task in tasks:
        mine = [(k, r) for t, k, r in results if t == task]
        firsts = [(k, r) for k, r in mine if r != "conflict" and not r.repeated]
        assert len(firsts) == 1, "a page counted twice or lost"
        winner = firsts[0][0] < 3
        for k, r in mine:
            same = (k < 3) == winner
            assert (r != "conflict") == same  # identical choices are repeats, others refused
    assert len(table) == 10 * 2 * 3 and not table.duplicated(["page", "criterion", "system"]).any()
    assert open_page(token).page is None
