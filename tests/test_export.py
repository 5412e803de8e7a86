"""lib.io.export: CSV cells that a spreadsheet would run are neutralised; --out is checked first."""

from __future__ import annotations

import pandas as pd
import pytest

from lib.errors import OutputError
from lib.io.export import csv_text, neutralise, prepare_out


def test_formula_text_gets_a_quote_and_numbers_stay_numbers():
    df = pd.DataFrame(
        {
            "system": ["=cmd|' /C calc'!A0", "+1 trick", "@SUM(1)", "-x", "\tTAB", "\rCR", "plain", "-1.5"],
            "theta": [-0.5, 1.0, 2.0, -3.0, 0.0, 0.1, 0.2, 0.3],
        }
    )
    out = neutralise(df)
    assert out["system"].tolist() == [
        "'=cmd|' /C calc'!A0",
        "'+1 trick",
        "'@SUM(1)",
        "'-x",
        "'\tTAB",
        "'\rCR",
        "plain",
        "-1.5",
    ]
    assert out["theta"].tolist() == df["theta"].tolist()  # numeric columns untouched
    assert df["system"].iloc[0].startswith("=")  # the caller's frame is not changed


def test_column_names_and_the_csv_text_are_neutralised():
    text = csv_text(pd.DataFrame({"=evil": ["@x"], "ok": [1]}))
    assert text.splitlines() == ["'=evil,ok", "'@x,1"]


def test_out_that_is_a_file_is_refused(tmp_path):
    target = tmp_path / "results.csv"
    target.write_text("x")
    with pytest.raises(OutputError, match="names a file"):
        prepare_out(target, ["*.csv"])


def test_a_folder_that_is_not_empty_is_refused_unless_overwrite_which_removes_only_own_files(tmp_path):
    (tmp_path / "abilities.csv").write_text("old")
    (tmp_path / "subset_random.csv").write_text("old")
    (tmp_path / "notes.txt").write_text("the user's")
    with pytest.raises(OutputError, match="not empty"):
        prepare_out(tmp_path, ["abilities.csv", "subset_*.csv"])
    prepare_out(tmp_path, ["abilities.csv", "subset_*.csv"], overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_missing_folder_is_created_with_its_parents(tmp_path):
    out = prepare_out(tmp_path / "a" / "b", ["*.csv"])
    assert out.is_dir() and not any(out.iterdir())
