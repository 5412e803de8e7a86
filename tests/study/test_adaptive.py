"""Adaptive assignment: the leaderboard's next batch becomes new pages for annotators who have not
judged those items, the least loaded first; what cannot be placed is reported."""

from __future__ import annotations

import pandas as pd
from study_helpers import answer, make_study

from lib.ranking.active import NEXT_COLUMNS
from lib.study.adaptive import extend
from lib.study.annotate import open_page, submit
from lib.study.summary import summarize


def _batch(rows):
    return pd.DataFrame([(a, b, p, 1.0 - i / 10) for i, (a, b, p) in enumerate(rows)], columns=NEXT_COLUMNS)


def test_next_batch_pages_go_to_annotators_who_have_not_judged_them(db):
    created = make_study(db, n_prompts=3, annotators=3, per_item=2)
    for _, token in created.tokens:  # everyone finishes their 2 pages
        while (page := open_page(token).page) is not None:
            submit(token, page.assignment_id, answer(page))
    batch = _batch([("alpha", "beta", "p00"), ("beta", "gamma", "p00"), ("alpha", "gamma", "p01"), ("x", "y", "p99")])
    done = extend(created.study_id, batch, per_prompt=1)
    assert sum(done.pages.values()) == 2 and done.unplaced == ["p99"]  # p00 once (a repeated row), p01 once
    items = summarize(created.study_id).items.set_index("prompt_id")
    assert items.loc["p00", "annotators"] == 3 and items.loc["p01", "annotators"] == 3
    assert items.loc["p02", "annotators"] == 2
    new_pages = 0
    for _, token in created.tokens:
        progress = open_page(token)
        if progress.page is not None:  # the new page comes after the finished ones
            assert progress.page.number == 3 and progress.total == 3 and progress.done == 2
            submit(token, progress.page.assignment_id, answer(progress.page))
            new_pages += 1
    assert new_pages == 2
    again = extend(created.study_id, _batch([("alpha", "beta", "p00")]), per_prompt=1)
    assert again.pages == {} and again.unplaced == ["p00"]  # all three have judged it


def test_least_loaded_annotators_first_and_a_cap(db):
    created = make_study(db, n_prompts=4, annotators=4, per_item=1)
    rows = [("alpha", "beta", f"p{i:02d}") for i in range(4)]
    done = extend(created.study_id, _batch(rows), per_prompt=2, max_items=2)
    assert sum(done.pages.values()) == 4 and max(done.pages.values()) == 1  # spread over four annotators
    assert done.unplaced == []


def test_a_batch_without_its_columns_is_refused(db):
    import pytest

    from lib.study.errors import StudyError

    created = make_study(db, n_prompts=1, annotators=1, per_item=1)
    with pytest.raises(StudyError, match="prompt_id"):
        extend(created.study_id, pd.DataFrame({"system_a": ["alpha"], "system_b": ["beta"]}))
