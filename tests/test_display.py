"""lib.io.display: one rule for every table shown (issue 29, item 5): a few significant digits, counts whole,
missing cells empty, infinite values spelled out."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from lib.io.display import INFINITE, SCIENTIFIC, SIGNIFICANT, cell_text, is_count, readable, round_significant


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (999.9999999999974, "1000"),  # what a table showed
        (0.18, "0.18"),  # not 0.180000
        (0.061179087677894185, "0.06118"),
        (42995.21, "42995"),  # the whole part stays whole
        (-3.14159, "-3.142"),
        (9.99951, "10"),
        (-0.0, "0"),
        (8.480772077466454e-23, "8.481e-23"),  # below SCIENTIFIC_BELOW: scientific
        (math.inf, INFINITE),
        (-math.inf, f"-{INFINITE}"),
        (math.nan, ""),
        (None, ""),
        (pd.NA, ""),
        (7, "7"),
        ("never", "never"),
        (True, "True"),
    ],
)
def test_a_cell_reads_with_a_few_significant_digits(value, text):
    assert cell_text(value) == text


def test_rounding_keeps_the_significant_digits_and_the_whole_part():
    rng = np.random.default_rng(0)
    x = rng.normal(size=2000) * 10.0 ** rng.integers(-8, 9, size=2000)
    shown = round_significant(x)
    whole = np.abs(x) >= 10 ** (SIGNIFICANT - 1)
    np.testing.assert_array_equal(shown[whole], np.round(x[whole]))
    scale = 10.0 ** (np.floor(np.log10(np.abs(x[~whole]))) - SIGNIFICANT + 1)  # one unit of the last digit kept
    assert (np.abs(shown[~whole] - x[~whole]) <= 0.5 * scale * (1 + 1e-9)).all()
    assert [float(cell_text(v)) for v in x[np.abs(x) >= 1e-3]] == shown[np.abs(x) >= 1e-3].tolist()


def test_counts_are_named_as_counts():
    assert all(map(is_count, ["n", "n_votes", "judge_verdicts", "human_items", "prompts", "k_needed"]))
    assert not any(map(is_count, ["cost", "p_value", "skill_mean", "hours", "interval_width", "power", "n_star"]))


def test_a_table_keeps_numbers_as_numbers_counts_whole_and_missing_cells_missing():
    table = pd.DataFrame(
        {
            "cost": [999.9999999999974, 0.18, np.nan],
            "judge_verdicts": [42995.21, 0.0, np.nan],
            "p_value": [8.48e-23, 0.52, 0.01],
            "n_star": [np.inf, 6.0144, np.nan],
            "name": ["a", None, "c"],
            "rank": [1, 2, 3],
            "reached": [True, False, True],
            "break_even_n": ["never", 7, None],
        }
    )
    shown = readable(table)
    out = shown.frame
    assert out["cost"].tolist()[:2] == [1000.0, 0.18] and np.isnan(out["cost"].iloc[2])  # numbers: they sort
    assert out["judge_verdicts"].dtype == "Int64" and out["judge_verdicts"].tolist()[:2] == [42995, 0]
    assert out["judge_verdicts"].isna().iloc[2]
    assert shown.formats == {"p_value": SCIENTIFIC} and out["p_value"].tolist() == [8.48e-23, 0.52, 0.01]
    assert out["n_star"].tolist()[:2] == [INFINITE, "6.014"] and out["n_star"].isna().iloc[2]  # text: ∞ has no number
    assert out["name"].isna().iloc[1] and out["rank"].tolist() == [1, 2, 3] and out["reached"].dtype == bool
    assert out["break_even_n"].tolist()[:2] == ["never", "7"] and out["break_even_n"].isna().iloc[2]
    text = shown.as_text()
    assert text.loc[0].tolist() == ["1000", "42995", "8.480e-23", INFINITE, "a", "1", "True", "never"]
    assert text.loc[2].tolist() == ["", "", "1.000e-02", "", "c", "3", "True", ""]
    assert table["cost"].iloc[0] == 999.9999999999974  # the caller's table (a download's) is left alone


def test_a_callers_format_is_kept():
    shown = readable(pd.DataFrame({"p": [0.000123, np.nan, 0.5]}), formats={"p": "%.2e"})
    assert shown.formats == {"p": "%.2e"} and shown.as_text()["p"].tolist() == ["1.23e-04", "", "5.00e-01"]
