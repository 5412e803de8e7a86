"""A study task type is one :class:`lib.study.tasks.TaskSpec` entry: a new one, registered alone, is created,
answered, checked, exported and summarised from its entry (issue 32 item 3)."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd
import pytest
from study_helpers import items_table

from lib.study.agreement import Agreement
from lib.study.annotate import open_page, submit
from lib.study.create import create_study
from lib.study.errors import AnswerError
from lib.study.export import export_judgments
from lib.study.items import read_items
from lib.study.summary import summarize
from lib.study.tasks import TASKS, bestworst

CRITERIA = ["consistency", "fluency"]


def _check(choice, systems, criterion, scale):
    if choice.get("most") not in systems:
        raise AnswerError(f"{criterion}: choose the BEST passage")
    return {"most": choice["most"]}


def _rows(base, choice, responses, order):
    return [{**base, "system": s, "best": int(s == choice["most"])} for s in order]


def _share(table: pd.DataFrame, spec) -> pd.DataFrame:
    return table.groupby("criterion", sort=False)["best"].mean().rename("share").reset_index()


BEST = dataclasses.replace(
    bestworst.SPEC,
    name="best",
    help="the best of the passages shown",
    keys=("most",),
    check=_check,
    gold=lambda cells, systems, scale: None,
    asked=lambda systems, rng, scale: {"most": systems[int(rng.integers(len(systems)))]},
    columns=("annotator", "page", "prompt_id", "prompt_text", "criterion", "system", "best", "seconds"),
    rows=_rows,
    agreement=Agreement("share", "share of rows that are a best pick", _share),
)
"""A task type no code of lib/study knows: its own functions, one entry."""


@pytest.fixture
def best_task(monkeypatch, tmp_path):
    monkeypatch.setitem(TASKS, "best", BEST)
    url = f"sqlite:///{tmp_path / 'studies.sqlite'}"
    monkeypatch.setenv("EVAL_DATABASE_URL", url)
    yield url
    from lib.study import db as study_db

    study_db.dispose(url)


def test_a_new_task_type_is_one_entry(best_task):
    items = read_items(items_table(2), "best", CRITERIA, file="items.csv")
    created = create_study(items, task="best", criteria=CRITERIA, annotators=1, per_item=1, check_rate=0.5, seed=3)
    token = created.tokens[0][1]
    picked = []
    while (page := open_page(token).page) is not None:
        with pytest.raises(AnswerError, match="choose the BEST passage"):  # the entry's check
            submit(token, page.assignment_id, {c: {"most": "Z"} for c in CRITERIA})
        # a check page says what to choose: the entry's ``asked``
        told = {crit: letter for letter, crit in re.findall(r"passage (\w) as MOST (\w+)", page.instruction)}
        asked = {c: {"most": told.get(c.upper(), "B")} for c in CRITERIA}
        submit(token, page.assignment_id, asked)
        picked.append(page)
    table = export_judgments(created.study_id)
    assert list(table.columns) == list(BEST.columns)  # the entry's columns and rows
    regular = len(picked) - sum(bool(p.instruction) for p in picked)
    assert 0 < regular < len(picked)
    assert len(table) == regular * len(CRITERIA) * 3 and table["best"].sum() == regular * len(CRITERIA)
    agreement = summarize(created.study_id).agreement  # the entry's statistic
    assert list(agreement.columns) == ["criterion", "share"]
    np.testing.assert_allclose(agreement["share"], 1 / 3)
