"""Style control (issue 36 item 1): LMArena's style features, and a verbose system's lead removed.

On votes simulated with two equally skilled systems where annotators prefer the longer answer
(:func:`lib.ranking.simulate.simulate_style_arena`), the fit without style control ranks the verbose system
first with confidence and the fit with it does not, and the length coefficient's interval holds the simulated
value; the controlled Bradley–Terry equals arena-rank's ``ContextualBradleyTerry`` (reg = 0) on the same file.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import lib.cli
from lib.errors import FormatError, SettingsError
from lib.inputs import analysis_input
from lib.io.paths import DATA_DIR
from lib.io.tables import read_csv
from lib.ranking.baseline import contextual_bradley_terry
from lib.ranking.fit import RankSettings
from lib.ranking.run import UNCONTROLLED_COLUMNS, rank_systems
from lib.ranking.simulate import simulate_style_arena
from lib.ranking.style import counts, named_features, normalised_difference, standardised, vote_features

ANSWER = """# Plan

Here is **the plan** and __another__ one:

1. first
2. second
- a point
  * nested point

```python
# not a header
- not a list item
print("**not bold**")
```

## Done
#not a header (no space)
"""


def test_markdown_is_counted_as_lmarena_counts_it():
    _, headers, bold, lists = counts(ANSWER)
    assert (headers, bold, lists) == (2, 2, 4)  # the code block's contents are left out, as FastChat does
    assert counts("Hello, world!")[0] == 4  # cl100k_base: Hello | , | world | !
    assert counts("")[0] == 0


def test_features_are_normalised_differences_standardised_over_the_votes():
    np.testing.assert_allclose(normalised_difference([3, 0, 1], [1, 0, 3]), [0.5, 0.0, -0.5])
    raw = np.array([[1.0, 2.0], [3.0, 2.0], [5.0, 2.0]])
    z = standardised(raw)
    np.testing.assert_allclose(z[:, 0], [-np.sqrt(1.5), 0.0, np.sqrt(1.5)])  # population SD, as arena-rank
    np.testing.assert_allclose(z[:, 1], 0.0)  # constant: 0, not a division by 0
    votes = pd.DataFrame(
        {"prompt_id": "p", "system_a": "x", "system_b": "y", "response_a": ["a b c", "a"], "response_b": ["a", "a b"]}
    )
    style = vote_features(votes)
    assert style.names == ("tokens",) and "leaves out headers, bold, lists" in style.notes[0]
    np.testing.assert_allclose(style.values[:, 0], [1.0, -1.0])  # (3 - 1) / 4 and (1 - 2) / 3, standardised


def test_named_columns_are_read_as_they_are_or_as_a_normalised_difference_and_bad_cells_are_named():
    df = read_csv(b"system_a,system_b,len,words_a,words_b\nx,y,0.5,30,10\ny,x,-1,0,0\n", "v.csv")
    got = named_features(df, ["len", "words"], file="v.csv")
    np.testing.assert_allclose(got["style:len"], [0.5, -1.0])
    np.testing.assert_allclose(got["style:words"], [0.5, 0.0])
    with pytest.raises(FormatError, match="no style feature column 'size'"):
        named_features(df, ["size"], file="v.csv")
    bad = read_csv(b"system_a,system_b,len\nx,y,1\ny,x,long\n", "v.csv")
    with pytest.raises(FormatError, match=r"v\.csv, row 2, column 'len'.*number") as err:
        named_features(bad, ["len"], file="v.csv")
    assert err.value.rows == [2]


@pytest.fixture(scope="module")
def styled(tmp_path_factory):
    """Simulated length-biased votes ranked with the defaults of ``rank`` and the page plus style control."""
    votes, truth = simulate_style_arena(1500, n_prompts=150, seed=0)
    path = tmp_path_factory.mktemp("style") / "votes.csv"
    votes.drop(columns="criterion").to_csv(path, index=False)
    data = analysis_input(read_csv(path, path.name), "pairwise", file=path.name, matrix=False)
    return path, truth, rank_systems(data, RankSettings(style_control=True))


@pytest.mark.validation
def test_style_control_removes_the_verbose_systems_lead_and_its_coefficient_holds_the_truth(styled):
    _, truth, result = styled
    before, after = result.uncontrolled.set_index("system"), result.leaderboard.set_index("system")
    assert before.index[0] == "verbose" and before.loc["verbose", "p_best"] > 0.95  # without: first, confidently
    assert after.loc["verbose", "p_best"] < 0.95 and after["p_best"].max() < 0.95  # with: the two are not told apart
    coef = result.style.set_index("feature").loc["tokens"]
    assert coef["low"] < truth["coefficient"] < coef["high"]  # the votes model's 95% interval
    assert coef["bt_low"] < truth["coefficient"] < coef["bt_high"]  # and the Bradley–Terry baseline's
    assert list(result.style["feature"]) == ["tokens"]  # plain texts: no markdown, said in the notes
    assert any("leaves out headers, bold, lists" in note for note in result.notes)
    assert (
        after.loc["verbose", "rank_change"] <= 0
        and after.loc["verbose", "skill_uncontrolled"] > after.loc["verbose", "skill_mean"]
    )
    np.testing.assert_allclose(after["skill_uncontrolled"], before["skill_mean"].reindex(after.index))


def test_rank_writes_the_controlled_leaderboard_and_the_coefficients(styled, tmp_path, capsys):
    path, truth, _ = styled
    code = lib.cli.main(
        ["rank", "--input", str(path), "--format", "pairwise", "--style-control", "--out", str(tmp_path)]
    )
    assert code == 0
    board = pd.read_csv(tmp_path / "leaderboard.csv")
    assert list(board.columns[-len(UNCONTROLLED_COLUMNS) :]) == UNCONTROLLED_COLUMNS
    coefficients = json.loads((tmp_path / "diagnostics.json").read_text())["style_coefficients"]
    assert set(coefficients) == {"tokens"}
    assert set(coefficients["tokens"]) == {"mean", "sd", "low", "high", "bt_mean", "bt_sd", "bt_low", "bt_high"}
    assert coefficients["tokens"]["low"] < truth["coefficient"] < coefficients["tokens"]["high"]
    assert "style coefficients" in capsys.readouterr().out


def test_style_control_without_texts_or_columns_says_what_it_needs(tmp_path, capsys):
    path = tmp_path / "votes.csv"
    pd.DataFrame({"prompt": ["p1", "p2"], "system_a": "x", "system_b": "y", "choice": ["A", "B"]}).to_csv(path)
    code = lib.cli.main(
        ["rank", "--input", str(path), "--format", "pairwise", "--style-control", "--out", str(tmp_path / "o")]
    )
    assert code == 2
    assert "style control needs the two answers of each vote" in capsys.readouterr().err
    with pytest.raises(SettingsError, match="needs the votes likelihood"):
        RankSettings(likelihood="cells", style_control=True).validate()


@pytest.mark.validation
def test_controlled_bradley_terry_equals_arena_rank_contextual_bradley_terry_on_the_same_file():
    # data/bt_reference: arena-rank 0.1.1's ContextualBradleyTerry (reg = 0, not reweighted) on these votes,
    # written by bench/bench_style_control.py --write-reference
    folder = DATA_DIR / "bt_reference"
    df = read_csv(folder / "style_votes.csv", "style_votes.csv")
    votes = pd.DataFrame({"system_a": df["system_a"], "system_b": df["system_b"], "winner": df["winner"]})
    votes = pd.concat([votes, named_features(df, ["tokens"], file="style_votes.csv")], axis=1)
    style = vote_features(votes)
    ratings, coefficients = contextual_bradley_terry(votes, style.values, style.names)
    ref = pd.read_csv(folder / "style_arena_rank_cbt.csv").set_index("competitors").loc[ratings["system"]]
    np.testing.assert_allclose(ratings["bt_rating"], ref["ratings"], atol=1e-3)
    np.testing.assert_allclose(ratings["bt_low"], ref["rating_lower"], atol=1e-3)
    np.testing.assert_allclose(ratings["bt_high"], ref["rating_upper"], atol=1e-3)
    assert coefficients["bt_mean"].iloc[0] == pytest.approx(ref["coef_tokens"].iloc[0], abs=1e-3 / 173.7)
