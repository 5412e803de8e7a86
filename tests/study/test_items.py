"""The items CSV: required columns, blank cells, repeated systems, gold answers, pairwise pairs."""

from __future__ import annotations

import pytest
from study_helpers import items_table

from lib.errors import FormatError
from lib.study.items import read_items

CRITERIA = ["consistency", "fluency"]


def test_best_worst_items_keep_texts_and_gold():
    items = read_items(items_table(2, gold_prompts=1), "bestworst", CRITERIA, file="items.csv")
    assert [it.prompt_id for it in items] == ["p00", "p01", "p02"]
    assert items[0].systems == ["alpha", "beta", "gamma"]
    assert items[0].responses[1] == ("beta", "beta on 0")
    assert items[0].gold is None
    assert items[2].gold == {c: {"most": "alpha", "least": "gamma"} for c in CRITERIA}


def test_pairwise_gives_every_pair_of_a_prompt():
    items = read_items(items_table(1, gold_prompts=1), "pairwise", CRITERIA, file="items.csv")
    assert [tuple(it.systems) for it in items[:3]] == [("alpha", "beta"), ("alpha", "gamma"), ("beta", "gamma")]
    gold = {tuple(it.systems): it.gold["fluency"]["winner"] for it in items[3:]}
    assert gold == {("alpha", "beta"): "alpha", ("alpha", "gamma"): "alpha", ("beta", "gamma"): "beta"}


def test_aliases_prompt_and_context():
    table = items_table(1).rename(columns={"prompt_id": "prompt", "prompt_text": "context"})
    assert read_items(table, "bestworst", CRITERIA, file="x.csv")[0].prompt_text == "fact 0"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.drop(columns=["response"]), "missing column response"),
        (lambda t: t.assign(system=t.system.where(t.index != 4, "")), "row 5, column 'system': blank cell"),
        (lambda t: t.assign(system=t.system.where(t.index != 1, "alpha")), "lists a system more than once"),
        (lambda t: t[t.system != "gamma"], "has 2 system"),
        (lambda t: t.assign(gold_style=""), "unknown criterion 'style'"),
        (lambda t: t.assign(gold_fluency=t.gold_fluency.where(t.index != 0, "best")), "unknown gold value"),
        (lambda t: t.assign(gold_fluency=t.gold_fluency.where(t.index != 0, "most")), "one MOST and one LEAST"),
    ],
)
def test_bad_items_are_refused_with_where(change, message):
    table = change(items_table(2)).reset_index(drop=True)
    with pytest.raises(FormatError, match=message):
        read_items(table, "bestworst", CRITERIA, file="items.csv")


def test_the_first_prompts_only():
    items = read_items(items_table(5), "bestworst", CRITERIA, file="items.csv", max_prompts=2)
    assert [it.prompt_id for it in items] == ["p00", "p01"]
