"""Judge files: matched to the human items, unusable verdicts counted, bad files refused with a clear message."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lib.errors import DesignError, FormatError
from lib.io.tables import read_csv
from lib.judges.quality import judge_quality
from lib.judges.read import match_items, read_judge_file
from lib.judges.run import judge_leaderboard

HUMANS = pd.DataFrame(
    [
        (p, a, b, f"h{r}", w, "overall")
        for p, (a, b) in enumerate([("x", "y"), ("y", "z"), ("x", "z")] * 4)
        for r, w in enumerate(["a", "b", "tie"] if p % 2 else ["a", "a", "b"])
    ],
    columns=["prompt_id", "system_a", "system_b", "annotator_id", "winner", "criterion"],
).astype(str)


def judge_file(rows: list[tuple], name: str = "judge.csv"):
    text = pd.DataFrame(rows, columns=["prompt", "system_a", "system_b", "judge", "choice"]).to_csv(index=False)
    return read_judge_file(read_csv(text.encode(), name), file=name)


def test_blank_verdicts_are_counted_with_their_rows_and_left_out():
    judges = judge_file([("0", "x", "y", "m", "A"), ("1", "y", "z", "m", ""), ("2", "x", "z", "m", "tie")])
    assert len(judges.verdicts) == 2
    row = judges.unusable.set_index("judge").loc["m"]
    assert (row["n_verdicts"], row["n_unusable"], row["rows"]) == (3, 1, "2")


def test_both_orders_are_two_verdicts_matched_to_one_item_in_the_human_orientation():
    judges = judge_file([("0", "x", "y", "m", "A"), ("0", "y", "x", "m", "A")])  # each time the first shown wins
    items, verdicts = match_items(HUMANS, judges)
    item = items[items["prompt_id"] == "0"].iloc[0]
    assert (item["system_low"], item["system_high"], item["n_judge"], item["judge_score"]) == ("x", "y", 2, 0.5)
    assert item["human_score"] == pytest.approx(2 / 3)
    quality = judge_quality(items, verdicts)
    assert quality.table.loc[0, "position_bias"] == pytest.approx(0.5)  # always the first shown


def test_the_annotator_column_names_the_judge_when_there_is_no_judge_column():
    text = "prompt,system_a,system_b,annotator,choice\n0,x,y,gpt,A\n1,y,z,gpt,B\n"
    judges = read_judge_file(read_csv(text.encode(), "j.csv"), file="j.csv")
    assert judges.verdicts["judge"].tolist() == ["gpt", "gpt"]


def test_every_verdict_unusable_is_refused():
    with pytest.raises(FormatError, match="every verdict is unusable") as err:
        judge_file([("0", "x", "y", "m", ""), ("1", "y", "z", "m", "")], "blank.csv")
    assert err.value.file == "blank.csv"


def test_an_unknown_choice_is_an_error_not_an_unusable_verdict():
    with pytest.raises(FormatError, match="unknown choice value 'maybe'"):
        judge_file([("0", "x", "y", "m", "maybe"), ("1", "y", "z", "m", "A")])


def test_no_overlap_with_the_human_items_is_refused():
    judges = judge_file([("99", "x", "y", "m", "A"), ("98", "y", "z", "m", "B")], "other.csv")
    with pytest.raises(DesignError, match="no item is in the human votes") as err:
        judge_leaderboard(HUMANS, judges)
    assert err.value.file == "other.csv"


def test_a_system_the_humans_never_compared_is_refused():
    judges = judge_file([("0", "x", "y", "m", "A"), ("1", "y", "w", "m", "B")], "stray.csv")
    with pytest.raises(FormatError, match="'w' are not in the human votes") as err:
        judge_leaderboard(HUMANS, judges)
    assert err.value.file == "stray.csv"


def test_a_system_without_any_usable_verdict_is_refused():
    judges = judge_file([("0", "x", "y", "m", "A"), ("1", "y", "z", "m", "")], "few.csv")
    with pytest.raises(DesignError, match="system\\(s\\) z have no usable verdict") as err:
        judge_leaderboard(HUMANS, judges)
    assert err.value.file == "few.csv"


def test_judge_quality_counts_the_confusion_matrix_of_a_perfect_and_a_contrary_judge():
    majority = {"0": "A", "1": "tie", "2": "A"}  # humans: a,a,b on even prompts; a,b,tie on odd ones
    rows = []
    for p in range(6):
        a, b = [("x", "y"), ("y", "z"), ("x", "z")][p % 3]
        truth = majority[str(p % 2 * 1)] if p % 2 else "A"
        rows.append((str(p), a, b, "good", truth))
        rows.append((str(p), a, b, "bad", {"A": "B", "tie": "A"}[truth]))
    items, verdicts = match_items(HUMANS, judge_file(rows))
    q = judge_quality(items, verdicts)
    table = q.table.set_index("judge")
    assert table.loc["good", "agreement"] == 1.0 and table.loc["good", "kappa"] == pytest.approx(1.0)
    assert table.loc["bad", "agreement"] == 0.0 and table.loc["bad", "kappa"] < 0
    assert np.diag(q.confusion["good"].to_numpy()).sum() == 6
    assert table.loc["good", "n_items"] == 6 and np.isnan(table.loc["good", "position_bias"])


def test_a_judge_that_always_picks_one_system_prefers_it_over_the_humans():
    rows = [
        (str(p), a, b, "fan", "A" if a == "x" else "B" if b == "x" else "tie")
        for p, (a, b) in enumerate([("x", "y"), ("y", "z"), ("x", "z")] * 4)
    ]
    items, verdicts = match_items(HUMANS, judge_file(rows))
    pref = judge_quality(items, verdicts).preference.set_index("system")
    assert pref.loc["x", "preference_low"] > 0 and pref.loc["x", "n_items"] == 8
    assert pref.loc["z", "preference"] < 0


def test_a_judge_without_any_item_in_common_with_the_humans_gets_empty_figures():
    rows = [("0", "x", "y", "seen", "A"), ("1", "y", "z", "seen", "B"), ("77", "x", "y", "apart", "A")]
    items, verdicts = match_items(HUMANS, judge_file(rows))
    q = judge_quality(items, verdicts)
    apart = q.table.set_index("judge").loc["apart"]
    assert apart["n_items"] == 0 and np.isnan(apart["agreement"]) and np.isnan(apart["kappa"])
    assert q.confusion["apart"].to_numpy().sum() == 0 and "apart" not in set(q.preference["judge"])
