"""Locating snippets, applying edits right to left, escaped rendering, and the LAMP reproduction check."""

from __future__ import annotations

import pandas as pd
import pytest

from lib.revision.lamp import load_lamp
from lib.revision.locate import apply_edits, locate, locate_all, locate_edits, render_edit_list, render_side_by_side
from lib.revision.metrics import postedit_reproduction

DRAFT = "The  Quick brown fox\njumps over the lazy dog. The dog sleeps."


def edits_frame(snippets, revised, text_id="t", system="A"):
    return pd.DataFrame(
        {
            "text_id": text_id,
            "system": system,
            "editor": "e",
            "edit_index": range(len(snippets)),
            "action_name": "replace",
            "revision_description": "d",
            "revision_level": "phrase",
            "revision_intention": "i",
            "original_snippet": snippets,
            "revised_snippet": revised,
        }
    )


def test_exact_match_prefers_the_occurrence_after_the_previous_edit():
    first, second = locate_all(DRAFT, ["lazy dog", "dog"])
    assert (first.match, DRAFT[first.start : first.end]) == ("exact", "lazy dog")
    assert second.start == DRAFT.index("dog", first.end)  # not the one inside "lazy dog"


def test_normalized_match_ignores_whitespace_case_and_typographic_quotes():
    loc = locate(DRAFT, "the quick BROWN fox jumps")
    assert loc.match == "normalized" and DRAFT[loc.start : loc.end] == "The  Quick brown fox\njumps"
    loc = locate("He said \u201chello\u201d.", 'said "hello"')
    assert loc.match == "normalized" and loc.end == len("He said \u201chello\u201d")


def test_fuzzy_match_widens_to_whole_words_and_respects_the_threshold():
    loc = locate(DRAFT, "jumps ovr the lazy dgo")
    assert loc.match == "fuzzy" and DRAFT[loc.start : loc.end] == "jumps over the lazy dog."
    assert locate(DRAFT, "an entirely different sentence about cats") is None
    assert locate(DRAFT, "   ") is None


def test_unlocated_and_overlapping_edits_are_kept_and_flagged():
    edits = edits_frame(["brown fox", "Quick brown", "purple cow"], ["red fox", "slow brown", "x"])
    out = locate_edits(edits, pd.DataFrame({"text_id": ["t"], "system": ["A"], "draft": [DRAFT]}))
    assert len(out) == 3
    assert out["located"].tolist() == [True, True, False] and out["match"].iloc[2] == "unlocated"
    assert out["overlaps"].tolist() == [True, True, False]
    assert out["applied"].tolist() == [True, False, False]  # the later overlapping edit is not applied


def test_apply_right_to_left_keeps_offsets_and_reports_inserted_spans():
    text = "a b c d"
    applied = apply_edits(text, [(0, 1, "AAA"), (4, 5, ""), (7, 7, " e"), None])
    assert applied.text == "AAA b  d e"
    assert applied.applied == [True, True, True, False]
    assert [applied.text[s:e] for s, e in applied.inserted[:3]] == ["AAA", "", " e"]


def test_edit_for_unknown_draft_is_an_input_error():
    from lib.errors import InputError

    with pytest.raises(InputError, match="row 1"):
        locate_edits(
            edits_frame(["fox"], ["cat"], text_id="missing"),
            pd.DataFrame({"text_id": ["t"], "system": ["A"], "draft": [DRAFT]}),
        )


def test_rendering_escapes_user_and_model_text():
    draft = "Hello <b>world</b> & friends."
    edits = edits_frame(["<b>world</b>"], ['<img src=x onerror="alert(1)">'], text_id="t")
    edits["revision_description"] = "<script>alert(2)</script>"
    located = locate_edits(edits, pd.DataFrame({"text_id": ["t"], "system": ["A"], "draft": [draft]}))
    left, right = render_side_by_side(draft, located, selected=0)
    for html in (left, right):
        assert "<script" not in html and "<img" not in html and "<b>" not in html
    assert "&lt;b&gt;world&lt;/b&gt;" in left and "&amp; friends" in left
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in left  # the tooltip
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in right
    assert 'class="rev-selected"' in left
    listing = render_edit_list(located)
    assert "<script" not in listing and "&lt;script&gt;alert(2)&lt;/script&gt;" in listing


def test_overlapping_edits_render_every_character_once():
    edits = edits_frame(["brown fox", "Quick brown"], ["red fox", "slow brown"])
    located = locate_edits(edits, pd.DataFrame({"text_id": ["t"], "system": ["A"], "draft": [DRAFT]}))
    left, _ = render_side_by_side(DRAFT, located)
    assert left.count("brown") == 1 and 'data-edits="1 2"' in left and "rev-overlap" in left


def test_lamp_human_edits_reproduce_most_of_postedit():
    lamp = load_lamp()
    located = locate_edits(lamp.edits, lamp.drafts)
    assert located["located"].mean() > 0.99
    rep = postedit_reproduction(located, lamp.evaluated)
    assert len(rep) == 150
    # measured: mean similarity 0.998, exact in 132/150; the unedited preedit is at ~0.79
    assert rep["similarity"].mean() > 0.98 and rep["exact"].mean() > 0.8
    assert rep["similarity"].mean() - rep["baseline"].mean() > 0.15
