"""Diff-based edits: grouping into phrase/sentence edits; applying them all gives the reference."""

from __future__ import annotations

import random

import pandas as pd

from lib.revision.diff_edits import diff_edits, diff_edits_table, revision_level
from lib.revision.locate import apply_edits, locate_all


def apply_all(draft: str, reference: str) -> str:
    edits = diff_edits(draft, reference)
    locs = locate_all(draft, [e["original_snippet"] for e in edits])
    assert all(loc is not None and loc.match == "exact" for loc in locs)
    spans = [(loc.start, loc.end, e["revised_snippet"]) for loc, e in zip(locs, edits, strict=True)]
    return apply_edits(draft, spans).text


def test_phrase_and_sentence_edits():
    draft = "The cat sat on the mat. It was happy and calm. Then it left."
    ref = "The black cat sat on the mat. It was calm. Then, after a while, it went away quickly."
    edits = diff_edits(draft, ref)
    assert [e["action_name"] for e in edits] == ["insert", "delete", "replace"]
    assert [e["revision_level"] for e in edits] == ["phrase", "phrase", "sentence"]
    assert edits[2]["original_snippet"] == "Then it left."
    assert all(e["revision_description"].startswith("Diff-based") for e in edits)
    assert " ".join(apply_all(draft, ref).split()) == ref


def test_identical_texts_have_no_edits():
    assert diff_edits("Same text here.", "Same  text here.") == []


def test_random_word_edits_reproduce_the_reference():
    rng = random.Random(7)
    words = ["the", "a", "cat", "dog", "sat", "on", "mat", ".", "big", "red", "ran", "fast", "quickly", "!", "slowly"]
    for _ in range(300):
        a = [rng.choice(words) for _ in range(rng.randint(1, 30))]
        b = list(a)
        for _ in range(rng.randint(0, 5)):
            k = rng.random()
            if k < 0.33 and len(b) > 1:
                b.pop(rng.randrange(len(b)))
            elif k < 0.66:
                b.insert(rng.randint(0, len(b)), rng.choice(words))
            else:
                b[rng.randrange(len(b))] = rng.choice(words)
        draft, ref = " ".join(a), " ".join(b)
        assert apply_all(draft, ref).split() == ref.split(), (draft, ref)


def test_table_and_levels():
    drafts = pd.DataFrame({"text_id": ["1"], "system": ["A"], "draft": ["one two three"], "reference": ["one 2 three"]})
    table = diff_edits_table(drafts)
    assert table["editor"].tolist() == ["diff-based"] and table["edit_index"].tolist() == [0]
    assert revision_level("word") == "word" and revision_level("two words") == "phrase"
    assert revision_level("This is one whole sentence here.") == "sentence"
