"""Answers committed to SQLite and PostgreSQL: resume, time on page, export row for row, summaries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pytest
from study_helpers import answer, labels, make_study, shown

from lib.inputs import analysis_input
from lib.judgments.formats import guess_format
from lib.study import db as study_db
from lib.study.annotate import open_page, submit
from lib.study.export import export_judgments
from lib.study.summary import SPEEDER_FRACTION, list_studies, study_links, summarize
from lib.study.tasks import TASKS

T0 = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


def test_resume_after_refresh_and_restart_with_time_on_page(db):
    created = make_study(db, n_prompts=3, annotators=1, per_item=1)
    token = created.tokens[0][1]
    first = open_page(token, now=T0)
    assert (first.done, first.total, first.page.number) == (0, 3, 1)
    assert open_page(token, now=T0 + timedelta(seconds=30)).page == first.page  # a refresh: the same page
    done = submit(token, first.page.assignment_id, answer(first.page), now=T0 + timedelta(seconds=42.5))
    assert done.seconds == pytest.approx(42.5)  # from the first showing, not the refresh
    study_db.dispose(db)  # a server restart: nothing of the session survives but the database
    again = open_page(token, now=T0 + timedelta(minutes=5))
    assert (again.done, again.page.number) == (1, 2)
    assert again.page.assignment_id != first.page.assignment_id


def test_export_is_what_was_answered_row_for_row(db):
    created = make_study(db, n_prompts=2, annotators=2, per_item=2)
    clicked = []
    for i, (label, token) in enumerate(created.tokens):
        for p in range(2):
            page = open_page(token, now=T0).page
            order = shown(db, page.assignment_id)
            most, least = ("alpha", "gamma") if (i + p) % 2 == 0 else ("beta", "alpha")
            submit(
                token,
                page.assignment_id,
                {c: labels(order, most, least) for c in ("consistency", "fluency")},
                now=T0 + timedelta(seconds=10 * (p + 1) + i),
            )
            for criterion in ("consistency", "fluency"):
                for pos, system in enumerate(order, start=1):
                    judged = "most" if system == most else "least" if system == least else "middle"
                    clicked.append((label, page.number, criterion, system, judged, pos, 10.0 * (p + 1) + i))
    table = export_judgments(created.study_id)
    assert list(table.columns) == list(TASKS["bestworst"].columns)
    got = list(
        table[["annotator", "page", "criterion", "system", "judgment", "position", "seconds"]].itertuples(
            index=False, name=None
        )
    )
    assert got == clicked


def test_the_data_page_reads_the_export(db):
    created = make_study(db, n_prompts=3, annotators=3, per_item=3)
    for _, token in created.tokens:
        while (page := open_page(token).page) is not None:
            submit(token, page.assignment_id, answer(page))
    table = export_judgments(created.study_id)
    text = pd.read_csv(pd.io.common.StringIO(table.to_csv(index=False)), dtype=str, keep_default_na=False)
    assert guess_format(list(text.columns)) == "bestworst"
    data = analysis_input(text, "bestworst", {}, file="study.csv", criterion="fluency")
    assert len(data.judgments.votes[data.judgments.votes.criterion == "fluency"]) == 9 * 3  # 9 trials x 3 votes
    assert data.matrix.u.shape[1] == 3  # three prompts


def test_pairwise_export_has_choice_and_the_system_shown_first(db):
    created = make_study(db, n_prompts=1, annotators=1, per_item=1, task="pairwise")
    token = created.tokens[0][1]
    for _ in range(3):
        page = open_page(token).page
        submit(token, page.assignment_id, {"consistency": {"winner": "B"}, "fluency": {"winner": "tie"}})
    table = export_judgments(created.study_id)
    assert list(table.columns) == list(TASKS["pairwise"].columns)
    assert len(table) == 6
    for row in table.itertuples():
        expected = "tie" if row.criterion == "fluency" else "A" if row.position != row.system_a else "B"
        assert row.choice == expected  # B was the passage shown second
    assert guess_format(list(table.columns)) == "pairwise"


def test_summary_progress_agreement_gold_and_speeders(db):
    created = make_study(db, n_prompts=4, annotators=3, per_item=3, gold_prompts=2, gold_rate=0.2)
    speeds = [5.0, 100.0, 120.0]
    for (label, token), seconds in zip(created.tokens, speeds, strict=True):
        while (page := open_page(token, now=T0).page) is not None:
            order = shown(db, page.assignment_id)
            # Everyone agrees on the regular items; annotator-1 answers gold items wrongly (reversed).
            most, least = ("gamma", "alpha") if label == "annotator-1" else ("alpha", "gamma")
            submit(
                token,
                page.assignment_id,
                {c: labels(order, most, least) for c in ("consistency", "fluency")},
                now=T0 + timedelta(seconds=seconds),
            )
    s = summarize(created.study_id)
    people = s.annotators.set_index("annotator")
    assert list(people["pages"]) == [5, 5, 5] and list(people["done"]) == [5, 5, 5]  # 4 regular + 1 gold
    assert list(people["gold_pages"]) == [1, 1, 1]
    assert people.loc["annotator-1", "gold_accuracy"] == 0.0
    assert people.loc["annotator-2", "gold_accuracy"] == 1.0
    assert s.gold_accuracy == pytest.approx(2 / 3)
    assert list(people["speeder"]) == [True, False, False]  # 5 s < 30% of the median 100 s
    assert SPEEDER_FRACTION * 100 > 5
    assert s.median_seconds_per_judgment == pytest.approx(100 / 2)
    assert list(people["seconds_per_judgment"]) == [2.5, 50.0, 60.0]
    assert s.items["done"].sum() == 15
    assert set(s.items.loc[~s.items.gold, "done"]) == {3}
    # annotator-1 reversed MOST / LEAST on the regular items too, so agreement is below 1 but defined.
    assert list(s.agreement["criterion"]) == ["consistency", "fluency"]
    assert np.all(s.agreement["fleiss_kappa"] < 1) and np.all(s.agreement["cells"] > 0)


def test_agreement_is_one_when_everyone_agrees(db):
    created = make_study(db, n_prompts=3, annotators=3, per_item=3)
    for _, token in created.tokens:
        while (page := open_page(token).page) is not None:
            order = shown(db, page.assignment_id)
            # The same answer from everyone, different per prompt (one category everywhere would leave kappa 0 / 0).
            most, least = ("alpha", "gamma") if page.prompt_text == "fact 1" else ("gamma", "beta")
            submit(token, page.assignment_id, {c: labels(order, most, least) for c in ("consistency", "fluency")})
    kappa = summarize(created.study_id).agreement["fleiss_kappa"]
    assert kappa.tolist() == pytest.approx([1.0, 1.0])


def test_studies_and_links_are_listed(db):
    created = make_study(db, n_prompts=2, annotators=2, per_item=1)
    studies = list_studies()
    assert studies[["study_id", "task", "annotators", "pages", "answered"]].values.tolist() == [
        [created.study_id, "bestworst", 2, 2, 0]
    ]
    links = study_links(created.study_id, "http://host:8501")
    assert links["link"].tolist() == [f"http://host:8501/?study_token={t}" for _, t in created.tokens]
