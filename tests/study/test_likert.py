"""Likert rating studies: items and gold ratings, the scale, answers checked and stored on SQLite and
PostgreSQL, the export read back by the Data page's ratings reader, agreement (Krippendorff's alpha),
seconds per judgment, hostile ratings refused, the command line, and every task in every registry."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pytest
from study_helpers import items_table, shown

from lib.cli import main
from lib.errors import FormatError
from lib.inputs import analysis_input
from lib.judgments.formats import FORMATS, guess_format, read_ratings
from lib.study.agreement import interval_alpha
from lib.study.annotate import open_page, submit
from lib.study.create import create_study, planned_design
from lib.study.db import transaction
from lib.study.errors import AnswerError, StudyError
from lib.study.export import export_judgments
from lib.study.items import read_items
from lib.study.models import Answer
from lib.study.summary import summarize
from lib.study.tasks import TASKS, Scale

CRITERIA = ["consistency", "fluency"]
T0 = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
SCALE = Scale(7, "not at all", "completely")


def likert_table(n_prompts: int, gold_prompts: int = 0) -> pd.DataFrame:
    """``items_table`` with Likert gold ratings: on a gold prompt alpha is rated 7, the others unknown."""
    table = items_table(n_prompts, gold_prompts=gold_prompts)
    for c in CRITERIA:
        table[f"gold_{c}"] = np.where(
            (table.prompt_id.str[1:].astype(int) >= n_prompts) & (table.system == "alpha"), "7", ""
        )
    return table


def make_likert(url: str, n_prompts=3, *, annotators=3, per_item=3, gold_prompts=0, gold_rate=0.0):
    items = read_items(likert_table(n_prompts, gold_prompts), "likert", CRITERIA, file="items.csv", scale=SCALE)
    return create_study(
        items,
        task="likert",
        criteria=CRITERIA,
        annotators=annotators,
        per_item=per_item,
        gold_rate=gold_rate,
        name="likert study",
        url=url,
        scale=SCALE,
    )


def stored(url: str) -> int:
    from sqlalchemy import func, select

    with transaction(url) as session:
        return session.scalar(select(func.count(Answer.id)))


# ------------------------------------------------------------------------------ items, scale, registries


def test_a_likert_page_shows_every_system_of_a_prompt_and_gold_ratings_may_be_partial():
    items = read_items(likert_table(2, gold_prompts=1), "likert", CRITERIA, file="items.csv", scale=SCALE)
    assert [it.systems for it in items] == [["alpha", "beta", "gamma"]] * 3
    assert items[0].gold is None and items[2].gold == {c: {"alpha": 7} for c in CRITERIA}


@pytest.mark.parametrize(("cell", "message"), [("8", "from 1 to 7, not 8"), ("0", "not 0"), ("good", "'good'")])
def test_a_gold_rating_off_the_scale_is_refused_with_where(cell, message):
    table = likert_table(1, gold_prompts=1)
    table.loc[table.gold_fluency == "7", "gold_fluency"] = cell
    with pytest.raises(FormatError, match=f"items.csv, rows? .*column 'gold_fluency'.*{message}"):
        read_items(table, "likert", CRITERIA, file="items.csv", scale=SCALE)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"points": 1}, "2 to 10 points"), ({"points": 11}, "2 to 10 points"), ({"low": " "}, "label both ends")],
)
def test_a_bad_scale_is_refused(kwargs, message):
    with pytest.raises(StudyError, match=message):
        Scale(**kwargs)


def test_only_a_rated_task_takes_a_scale(tmp_path, monkeypatch):
    items = read_items(items_table(1), "bestworst", CRITERIA, file="items.csv")
    with pytest.raises(StudyError, match="bestworst study has no rating scale"):
        create_study(items, task="bestworst", criteria=CRITERIA, annotators=1, per_item=1, scale=SCALE, url="x")


def test_every_task_has_its_export_its_roles_its_agreement_and_a_format_the_data_page_reads():
    for task, spec in TASKS.items():
        assert callable(spec.rows) and spec.roles and callable(spec.agreement.compute)
        assert spec.format in FORMATS
        assert guess_format(list(spec.columns)) == spec.format, task  # a downloaded export is read as it is


def test_krippendorffs_alpha_of_the_published_example():
    """Krippendorff (2011), section C: 4 coders, 12 units, interval alpha = 0.849 (11 pairable units)."""
    coders = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    cells = [(unit, value) for row in coders for unit, value in enumerate(row) if value is not None]
    alpha, units = interval_alpha([u for u, _ in cells], [v for _, v in cells])
    assert alpha == pytest.approx(0.849, abs=5e-4) and units == 11


def test_the_planners_cheapest_reached_design_is_the_default():
    table = pd.DataFrame(
        {
            "strategy": ["random", "irt", "random"],
            "analysis": ["grm_bank", "grm_bank", "t_test"],
            "reached": [True, True, False],
            "prompts": [50, 25, np.nan],
            "annotators": [3, 5, np.nan],
            "power": [0.84, 0.81, np.nan],
            "cost": [300.0, 250.0, np.nan],
        }
    )
    planned = planned_design(table)
    assert (planned.per_item, planned.prompts, planned.strategy) == (5, 25, "irt")
    assert "25 prompts x 5 annotators per item" in planned.describe()
    assert planned_design(table.assign(reached=False)) is None and planned_design(None) is None


# ------------------------------------------------------------------------------ storage (SQLite, PostgreSQL)


def rate(order: list[str], ratings: dict[str, int]) -> dict[str, int]:
    """The form's answer (labels A, B, ...) giving each system its rating."""
    return {"ABC"[order.index(s)]: r for s, r in ratings.items()}


def test_ratings_are_stored_and_exported_row_for_row_and_read_by_the_data_page(db):
    created = make_likert(db, n_prompts=2, annotators=2, per_item=2)
    clicked = []
    for i, (label, token) in enumerate(created.tokens):
        progress = open_page(token, now=T0)
        assert progress.scale == SCALE and progress.task == "likert"
        for p in range(2):
            page = open_page(token, now=T0).page
            order = shown(db, page.assignment_id)
            given = {c: {"alpha": 7 - i, "beta": 4, "gamma": 1 + p + k} for k, c in enumerate(CRITERIA)}
            seconds = 20.0 * (p + 1) + i
            submit(
                token,
                page.assignment_id,
                {c: rate(order, r) for c, r in given.items()},
                now=T0 + timedelta(seconds=seconds),
            )
            for c in CRITERIA:
                for pos, system in enumerate(order, start=1):
                    clicked.append((label, page.number, c, system, given[c][system], pos, seconds))
    table = export_judgments(created.study_id)
    assert list(table.columns) == list(TASKS["likert"].columns)
    columns = ["annotator", "page", "criterion", "system", "score", "shown_position", "seconds"]
    assert list(table[columns].itertuples(index=False, name=None)) == clicked
    text = pd.read_csv(pd.io.common.StringIO(table.to_csv(index=False)), dtype=str, keep_default_na=False)
    assert guess_format(list(text.columns)) == "ratings"
    ratings = read_ratings(text, file="study.csv")
    assert len(ratings) == 2 * 2 * 2 * 3 and set(ratings.annotator_id) == {"annotator-1", "annotator-2"}
    data = analysis_input(text, "ratings", {}, file="study.csv", criterion="fluency")
    assert data.matrix.u.shape[1] == 2  # two prompts


def test_agreement_gold_and_seconds_per_judgment(db):
    created = make_likert(db, n_prompts=3, annotators=3, per_item=3, gold_prompts=1, gold_rate=0.25)
    for a, (_, token) in enumerate(created.tokens):
        while (page := open_page(token, now=T0).page) is not None:
            order = shown(db, page.assignment_id)
            fact = int(page.prompt_text.split()[1])
            # Everyone gives the same ratings, which differ between prompts and systems; annotator-3
            # reverses them on consistency and misses the gold answer (alpha = 7).
            agreed = {"alpha": 7 if fact == 3 else 2 + fact, "beta": 4, "gamma": 1}
            reverse = {s: 8 - r for s, r in agreed.items()}
            choices = {"consistency": reverse if a == 2 else agreed, "fluency": agreed}
            submit(
                token,
                page.assignment_id,
                {c: rate(order, r) for c, r in choices.items()},
                now=T0 + timedelta(seconds=60),
            )
    s = summarize(created.study_id)
    agreement = s.agreement.set_index("criterion")
    assert agreement.loc["fluency", "krippendorff_alpha"] == pytest.approx(1.0)
    assert agreement.loc["consistency", "krippendorff_alpha"] < 0.5
    assert agreement["units"].tolist() == [9, 9]  # 3 prompts x 3 systems, gold left out
    people = s.annotators.set_index("annotator")
    assert people["gold_accuracy"].tolist() == [1.0, 1.0, 0.5]  # annotator-3 missed it on consistency
    assert s.median_seconds_per_judgment == pytest.approx(60 / (2 * 3))  # a rating per passage per criterion


@pytest.mark.parametrize(
    ("ratings", "message"),
    [
        ({"A": 8, "B": 4, "C": 4}, "from 1 to 7, not 8"),
        ({"A": 0, "B": 4, "C": 4}, "not 0"),
        ({"A": 3.5, "B": 4, "C": 4}, "not 3.5"),
        ({"A": "4", "B": 4, "C": 4}, "not '4'"),
        ({"A": True, "B": 4, "C": 4}, "not True"),
        ({"A": 4, "B": 4}, "rate every passage"),
        ({"A": 4, "B": 4, "C": None}, "rate every passage"),
        ({"A": 4, "B": 4, "C": 4, "Z": 4}, "rate only the passages shown"),
    ],
)
def test_hostile_ratings_are_refused_and_nothing_is_stored(db, ratings, message):
    created = make_likert(db, n_prompts=1, annotators=1, per_item=1)
    token = created.tokens[0][1]
    page = open_page(token).page
    with pytest.raises(AnswerError, match=message):
        submit(token, page.assignment_id, {"consistency": {"A": 4, "B": 4, "C": 4}, "fluency": ratings})
    assert stored(db) == 0 and open_page(token).page == page


def test_the_command_line_creates_and_exports_a_likert_study(db, tmp_path, capsys):
    items = tmp_path / "items.csv"
    items_table(2).drop(columns=["gold_consistency", "gold_fluency"]).to_csv(items, index=False)
    argv = ["study", "create", "--items", str(items), "--criteria", "fluency", "--per-item", "1"]
    assert main([*argv, "--task", "bestworst", "--points", "7", "--out-link", str(tmp_path / "x.csv")]) == 2
    assert "only a rated task (likert) has a scale" in capsys.readouterr().err
    links = tmp_path / "links.csv"
    assert main([*argv, "--task", "likert", "--points", "4", "--high", "top", "--out-link", str(links)]) == 0
    token = pd.read_csv(links)["link"][0].split("study_token=")[1]
    assert open_page(token).scale == Scale(4, "very poor", "top")
    while (page := open_page(token).page) is not None:
        submit(token, page.assignment_id, {"fluency": {"A": 4, "B": 1, "C": 2}})
    out = tmp_path / "judgments.csv"
    assert main(["study", "export", "--study", "1", "--out", str(out)]) == 0
    assert sorted(pd.read_csv(out)["score"]) == [1, 1, 2, 2, 4, 4]
