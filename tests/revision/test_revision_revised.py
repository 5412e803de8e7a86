"""Which drafts each editor revised (lib/revision/revised.py): the evaluated table of uploaded edits,
on the LAMP-shaped upload (tests/revision/lamp_upload.py: each writer's drafts under its own ids)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lib.errors import DesignError, InputError
from lib.revision import run
from lib.revision.io import read_drafts, read_edits
from lib.revision.metrics import summarize
from lib.revision.revised import (
    AUTO,
    EDITED,
    EVERY,
    editor_counts,
    first_edited,
    revised_drafts,
    revised_table,
    shared_drafts,
)
from lib.revision.schema import EDIT_COLUMNS
from tests.revision.lamp_upload import EDIT_MAPPING, WRITERS, per_writer_means, write_upload

KEYS = ["text_id", "system"]


@pytest.fixture(scope="module")
def lamp_upload(tmp_path_factory):
    drafts_csv, edits_csv = write_upload(tmp_path_factory.mktemp("lamp"))
    return read_drafts(drafts_csv), read_edits(edits_csv, columns=EDIT_MAPPING)


def test_editor_specific_ids_give_each_writer_its_own_drafts_and_the_per_writer_revision_distance(lamp_upload):
    drafts, edits = lamp_upload
    assert set(edits["editor"]) == set(WRITERS) and len(drafts) == 150
    revised = revised_drafts(drafts, edits)
    assert revised.rule == EDITED and revised.unassigned.empty
    assert len(revised.evaluated) == 150  # the old cross join: 150 drafts x 3 writers = 450
    assert revised.per_editor.set_index("editor")["drafts"].to_dict() == {w: 50 for w in WRITERS}
    assert (revised.per_editor["with_edits"] == 50).all()
    assert all(t.startswith(f"{e}_") for t, e in revised.evaluated[["text_id", "editor"]].itertuples(index=False))
    _, per_draft = run.score(edits, drafts, revised.evaluated)
    shown = summarize(per_draft, ["system"]).set_index("system")["mean"]
    expected = per_writer_means()
    pd.testing.assert_series_equal(shown, expected, check_names=False)
    # the figures the issue quotes: claude 6.74, gpt4o 7.46 (the cross join gave 2.25 and 2.49)
    assert shown.round(2).to_dict() == {"claude3.5-sonnet": 6.74, "gpt4o": 7.46, "llama370B": 7.80}


def test_the_cross_join_is_what_every_draft_states(lamp_upload):
    """Stated "every draft": each writer counts 0 on the 100 drafts of the others (the old figures)."""
    drafts, edits = lamp_upload
    revised = revised_drafts(drafts, edits, EVERY)
    assert len(revised.evaluated) == 450 and (revised.per_editor["with_edits"] == 50).all()
    _, per_draft = run.score(edits, drafts, revised.evaluated)
    shown = summarize(per_draft, ["system"]).set_index("system")["mean"]
    assert shown.round(2)[["claude3.5-sonnet", "gpt4o"]].tolist() == [2.25, 2.49]


def drafts_of(n: int) -> pd.DataFrame:
    return pd.DataFrame({"text_id": [f"t{k}" for k in range(n)], "system": "m", "draft": "a b c d"})


def edits_of(pairs: list[tuple[str, str]]) -> pd.DataFrame:
    """One edit per (text_id, editor)."""
    return pd.DataFrame(
        [(t, "m", e, 0, "", "", "word", "", "a", "x") for t, e in pairs],
        columns=list(EDIT_COLUMNS),
    )


def test_one_editor_revised_every_draft_as_the_command_counts_it():
    """The command's own ``edits.jsonl`` (one editor) with its drafts: a draft without edits scores 0."""
    revised = revised_drafts(drafts_of(4), edits_of([("t0", "uploaded"), ("t2", "uploaded")]))
    assert revised.rule == EVERY and len(revised.evaluated) == 4
    assert revised.per_editor.to_dict("records") == [{"editor": "uploaded", "drafts": 4, "with_edits": 2}]


def test_every_editor_on_every_draft_needs_no_statement_and_both_rules_agree():
    edits = edits_of([(f"t{k}", e) for k in range(3) for e in ("A", "B")])
    found = revised_drafts(drafts_of(3), edits)
    assert found.rule == EVERY and len(found.evaluated) == 6
    edited = revised_drafts(drafts_of(3), edits, EDITED).evaluated
    pd.testing.assert_frame_equal(
        found.evaluated.sort_values(["text_id", "editor"]).reset_index(drop=True),
        edited.sort_values(["text_id", "editor"]).reset_index(drop=True),
    )


def test_shared_drafts_with_gaps_are_not_guessed():
    """A and B share t0 but each lacks edits on one draft: revised with no change, or never given?"""
    edits = edits_of([("t0", "A"), ("t1", "A"), ("t0", "B"), ("t2", "B")])
    with pytest.raises(DesignError) as err:
        revised_drafts(drafts_of(3), edits, AUTO)
    message = str(err.value)
    assert "A: 2 of 3" in message and "B: 2 of 3" in message and "every draft" in message
    assert len(revised_drafts(drafts_of(3), edits, EDITED).evaluated) == 4
    assert len(revised_drafts(drafts_of(3), edits, EVERY).evaluated) == 6


def test_drafts_without_any_edits_beside_editor_specific_drafts_are_not_guessed():
    """A and B each have their own draft, t2 has edits from none: their own drafts only, or every
    draft with few edits? Stated "their own", t2 has no editor and is listed as left out."""
    edits = edits_of([("t0", "A"), ("t1", "B")])
    with pytest.raises(DesignError, match="1 of the 3 drafts have edits from none"):
        revised_drafts(drafts_of(3), edits)
    revised = revised_drafts(drafts_of(3), edits, EDITED)
    assert revised.unassigned[KEYS].to_dict("records") == [{"text_id": "t2", "system": "m"}]
    assert len(revised.evaluated) == 2 and revised.reason == "As stated: only the drafts with its edits."


def test_edits_of_unknown_drafts_are_left_to_the_locator_and_an_unknown_rule_is_an_error():
    revised = revised_drafts(drafts_of(1), edits_of([("t0", "A"), ("nope", "A")]))
    assert revised.evaluated["text_id"].tolist() == ["t0"]
    with pytest.raises(InputError, match="cross"):
        revised_drafts(drafts_of(1), edits_of([("t0", "A")]), "cross")


def test_revised_table_names_a_pair_without_its_draft():
    pairs = pd.DataFrame({"text_id": ["t0", "t9"], "system": "m", "editor": "A"})
    with pytest.raises(InputError, match="t9"):
        revised_table(drafts_of(1), pairs)
    table = revised_table(drafts_of(2), pairs.iloc[:1].assign(postedit="p"))
    assert table.columns.tolist() == ["text_id", "system", "editor", "postedit", "draft"]


def test_counts_and_the_first_draft_with_edits():
    evaluated = revised_table(drafts_of(3), pd.DataFrame({"text_id": ["t0", "t1", "t2"], "system": "m", "editor": "A"}))
    edits = edits_of([("t2", "A"), ("t2", "A")])
    assert editor_counts(evaluated, edits).to_dict("records") == [{"editor": "A", "drafts": 3, "with_edits": 1}]
    assert shared_drafts(pd.concat([evaluated, evaluated.iloc[:1].assign(editor="B")])) == 1
    _, per_draft = run.score(edits.assign(edit_index=[0, 1]), drafts_of(3), evaluated)
    assert first_edited(per_draft) == ("t2", "m", "A")
    assert first_edited(per_draft.iloc[:2]) is None


@pytest.mark.parametrize("seed", range(20))
def test_editor_specific_drafts_score_their_own_edit_counts(seed):
    """Each draft revised by one editor with k >= 1 edits (editor-specific ids, random editors and
    counts): Revision Distance is k for that editor and each draft is counted once."""
    rng = np.random.default_rng(seed)
    assigned = [(str(rng.choice(list("ABC"))), int(rng.integers(1, 5))) for _ in range(rng.integers(1, 13))]
    drafts = drafts_of(len(assigned))
    edits = edits_of([(f"t{d}", e) for d, (e, k) in enumerate(assigned) for _ in range(k)])
    edits["edit_index"] = edits.groupby(["text_id", "editor"]).cumcount()
    revised = revised_drafts(drafts, edits)
    assert len(revised.evaluated) == len(assigned) and revised.unassigned.empty
    _, per_draft = run.score(edits, drafts, revised.evaluated)
    assert per_draft[["editor", "revision_distance"]].values.tolist() == [[e, k] for e, k in assigned]
