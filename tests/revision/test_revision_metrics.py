"""Revision Distance, Table 2 relative change, Table 3 categories, agreement with human edits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lib.errors import SettingsError
from lib.revision.lamp import WRITERS, load_lamp
from lib.revision.locate import locate_edits
from lib.revision.metrics import (
    category_table,
    compare_models,
    per_model,
    relative_change,
    revision_distance,
    span_agreement,
    summarize,
    token_edit_distance,
)


def frame(rows):
    cols = ["text_id", "system", "editor", "edit_index", "original_snippet", "revised_snippet", "revision_intention"]
    out = pd.DataFrame(rows, columns=cols)
    for c in ("action_name", "revision_description", "revision_level"):
        out[c] = "x"
    return out


DRAFTS = pd.DataFrame(
    {"text_id": ["1", "2"], "system": ["A", "B"], "draft": ["alpha beta gamma delta", "one two three four"]}
)


def test_revision_distance_counts_edits_and_zero_edit_drafts():
    edits = frame([("1", "A", "e", 0, "beta", "BETA", "c1"), ("1", "A", "e", 1, "nowhere", "x", "c2")])
    located = locate_edits(edits, DRAFTS)
    evaluated = DRAFTS.assign(editor="e")
    rd = revision_distance(located, evaluated)
    assert rd["revision_distance"].tolist() == [2, 0] and rd["unlocated"].tolist() == [1, 0]
    assert rd["token_edit_distance"].tolist() == [1, 0]
    table = category_table(located, rd, by="system")
    assert table.loc["A", "Total"] == 2 and table.loc["B", "Total"] == 0
    assert table.loc["A", "c1"] == 1 and table.loc["A", "c2"] == 1


def test_relative_change_reproduces_table_2():
    assert relative_change(3.20, 2.79) == pytest.approx(14.7, abs=0.05)  # easy-writing D_Revision
    assert relative_change(3.93, 3.73) == pytest.approx(5.4, abs=0.05)  # challenge task (Table 3 totals)
    assert relative_change(19.52, 22.06, lower_is_better=False) == pytest.approx(11.5, abs=0.05)  # ROUGE-2


def test_summary_interval_and_bootstrap_comparison():
    rng = np.random.default_rng(1)
    per = pd.DataFrame(
        {"system": ["A"] * 200 + ["B"] * 200, "revision_distance": np.r_[rng.poisson(4, 200), rng.poisson(3, 200)]}
    )
    s = summarize(per, ["system"]).set_index("system")
    se = per.groupby("system")["revision_distance"].std() / np.sqrt(200)
    assert s.loc["A", "ci_high"] - s.loc["A", "mean"] == pytest.approx(1.972 * se["A"], rel=1e-3)
    cmp = compare_models(per, "A", "B", n_boot=1000, seed=0)
    assert cmp["ci_low"] < cmp["change_pct"] < cmp["ci_high"] and cmp["ci_low"] > 0
    with pytest.raises(SettingsError, match="'C'"):
        compare_models(per, "A", "C")


def test_per_model_table_has_the_token_edit_distance_beside_the_revision_distance():
    per = pd.DataFrame(
        {
            "system": ["B", "A", "A", "B", "B"],
            "revision_distance": [1, 2, 4, 3, 5],
            "token_edit_distance": [10, 0, 6, 20, 3],
        }
    )
    table = per_model(per).set_index("system")
    assert list(table.index) == ["A", "B"]
    assert table["mean"].tolist() == [3.0, 3.0] and table["n"].tolist() == [2, 3]
    assert table["token_edit_distance"].tolist() == [3.0, 11.0]
    assert list(table.columns) == [*summarize(per, ["system"]).columns.drop("system"), "token_edit_distance"]


def test_bootstrap_interval_is_scipys_percentile_interval():
    from scipy import stats

    per = pd.DataFrame({"system": ["A"] * 6 + ["B"] * 5, "revision_distance": [3, 4, 5, 2, 6, 4, 1, 2, 3, 0, 4]})
    cmp = compare_models(per, "A", "B", n_boot=500, level=0.9, seed=7)
    a, b = per["revision_distance"][:6].to_numpy(float), per["revision_distance"][6:].to_numpy(float)
    res = stats.bootstrap(
        (a, b),
        lambda x, y, axis: (x.mean(axis) - y.mean(axis)) / y.mean(axis) * 100,
        n_resamples=500,
        confidence_level=0.9,
        method="percentile",
        rng=np.random.default_rng(7),
    )
    assert (cmp["ci_low"], cmp["ci_high"]) == tuple(res.confidence_interval)
    assert (cmp["n_a"], cmp["n_b"], cmp["mean_b"]) == (6, 5, 2.0)


def test_a_model_with_one_draft_has_no_bootstrap_interval():
    per = pd.DataFrame({"system": ["A", "B", "B"], "revision_distance": [3, 1, 2]})
    cmp = compare_models(per, "A", "B")
    assert cmp["change_pct"] == pytest.approx(100.0)
    assert np.isnan(cmp["ci_low"]) and np.isnan(cmp["ci_high"])
    # resamples in which B made no edits at all have no relative change: the interval is over the rest
    zeros = pd.DataFrame({"system": ["A"] * 3 + ["B"] * 3, "revision_distance": [3, 4, 5, 0, 0, 1]})
    cmp = compare_models(zeros, "A", "B", n_boot=200)
    assert 0 < cmp["ci_low"] < cmp["change_pct"] < cmp["ci_high"] < np.inf


def test_token_edit_distance_is_word_level():
    assert token_edit_distance("a b c d", "a x c d e") == 2


def test_span_agreement_counts_overlaps_and_categories():
    edits = frame(
        [
            ("1", "A", "llm", 0, "alpha", "A", "Cliche"),
            ("1", "A", "llm", 1, "delta", "D", "cliche"),
            ("1", "A", "W1", 0, "alpha beta", "AB", "Cliche"),
            ("1", "A", "W1", 1, "gamma", "G", "Other"),
            ("1", "A", "W1", 2, "delta", "G", "Tense"),
        ]
    )
    located = locate_edits(edits, DRAFTS)
    evaluated = DRAFTS.merge(pd.DataFrame({"editor": ["llm", "W1"]}), how="cross")
    table = span_agreement(located, evaluated, "llm", ["W1"]).set_index("system")
    row = table.loc["all"]
    assert (row["precision"], row["recall"]) == (1.0, pytest.approx(2 / 3))
    assert row["f1"] == pytest.approx(0.8) and row["category_agreement"] == 0.5
    # draft 2 was revised by both with no edits: it counts as a draft but adds no edits
    assert row["drafts"] == 2 and table.loc["B", "candidate_edits"] == 0


def test_span_agreement_counts_a_draft_the_candidate_left_unedited():
    edits = frame(
        [
            ("1", "A", "W1", 0, "alpha", "A", "Cliche"),
            ("2", "B", "W1", 0, "two", "2", "Cliche"),
            ("2", "B", "llm", 0, "two", "2", "Cliche"),
            ("2", "B", "llm", 1, "four", "4", "Tense"),
        ]
    )
    located = locate_edits(edits, DRAFTS)
    evaluated = DRAFTS.merge(pd.DataFrame({"editor": ["llm", "W1"]}), how="cross")
    row = span_agreement(located, evaluated, "llm", ["W1"]).set_index("system").loc["all"]
    # the writer's edit of draft 1, which the LLM left as it was, is missed
    assert (row["precision"], row["recall"], row["reference_edits"]) == (0.5, 0.5, 2)
    assert row["f1"] == pytest.approx(0.5)
    reverse = span_agreement(located, evaluated, "W1", ["llm"]).set_index("system")
    assert (reverse.loc["A", "candidate_edits"], reverse.loc["A", "precision"]) == (1, 0.0)
    assert np.isnan(reverse.loc["A", "recall"]) and np.isnan(reverse.loc["A", "f1"])  # nothing to find


def test_lamp_writers_agree_with_themselves_perfectly_and_partly_with_each_other():
    lamp = load_lamp()
    located = locate_edits(lamp.edits, lamp.drafts)
    both = pd.concat([located[located["editor"] == "W3"].assign(editor="copy"), located])
    evaluated = pd.concat([lamp.evaluated, lamp.evaluated.query("editor == 'W3'").assign(editor="copy")])
    self_agree = span_agreement(both, evaluated, "copy", ["W3"])
    row = self_agree.set_index("system").loc["all"]
    assert (row["precision"], row["recall"]) == (1, 1)
    assert row["category_agreement"] > 0.99  # < 1 only where a writer's own edits overlap (ties)
    between = span_agreement(located, lamp.evaluated, "W12", WRITERS).query("system == 'all'")
    assert set(between["reference"]) == {"W3", "W16"}
    assert ((between["f1"] > 0.1) & (between["f1"] < 0.95)).all()


def test_span_agreement_with_no_overlap_is_zero_not_undefined():
    edits = frame([("1", "A", "llm", 0, "alpha", "A", "Cliche"), ("1", "A", "W1", 0, "delta", "D", "Cliche")])
    evaluated = DRAFTS.iloc[:1].merge(pd.DataFrame({"editor": ["llm", "W1"]}), how="cross")
    row = span_agreement(locate_edits(edits, DRAFTS), evaluated, "llm", ["W1"]).iloc[-1]
    assert (row["precision"], row["recall"], row["f1"]) == (0.0, 0.0, 0.0)
    assert np.isnan(row["category_agreement"])
