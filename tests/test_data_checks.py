"""Design checks: what the data can support before any fit (degenerate designs, all ties, overflow)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from lib.errors import DesignError, SettingsError
from lib.irt.data_checks import check_design, design_report
from lib.judgments.ratings import from_absolute_ratings, net_ratings


def ratings(rows):
    return pd.DataFrame(rows, columns=["prompt_id", "system", "criterion", "score"])


def votes(rows):
    return pd.DataFrame(rows, columns=["prompt_id", "system_a", "system_b", "annotator_id", "winner", "criterion"])


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_each_prompt_rated_for_one_system_is_an_unpaired_design_error(no_warnings):
    # 500 prompts, each rated for one of three systems: no pair can be compared on a prompt.
    r = ratings([(f"p{j}", f"s{j % 3}", "overall", float(1 + j % 5)) for j in range(500)])
    rm = from_absolute_ratings(r)  # builds the matrix (the Data page shows it) without numpy warnings
    assert rm.shape == (3, 500) and np.isnan(rm.u).all()
    report = design_report(rm)
    assert not report.ok
    assert report.errors[0].startswith("no prompt was rated for two systems")
    assert "ratings likelihood with a prompt effect" in report.errors[0]
    with pytest.raises(DesignError, match="no pair of systems can be compared on the same prompt"):
        check_design(rm)


def test_prompt_ids_unique_per_system_are_the_same_unpaired_error(no_warnings):
    r = ratings([(f"{s}-{j}", s, "overall", float(j % 5)) for s in ("x", "y") for j in range(20)])
    with pytest.raises(DesignError, match="no prompt was rated for two systems"):
        check_design(from_absolute_ratings(r))


def test_comparisons_and_prompts_without_data_are_reported_not_dropped():
    # x and y share prompts p0..p9; z is rated on q0..q9 only: "z vs x" and "z vs y" have no data.
    r = ratings(
        [(f"p{j}", s, "o", float((j * (k + 2)) % 5)) for k, s in enumerate("xy") for j in range(10)]
        + [(f"q{j}", "z", "o", float(j % 5)) for j in range(10)]
    )
    rm = from_absolute_ratings(r, merge_redundant=False)
    assert rm.shape == (3, 20)  # nothing dropped
    report = check_design(rm)
    assert report.ok
    assert any("2 of 3 comparisons have no data" in w and "z vs x, z vs y" in w for w in report.warnings)
    assert any("10 of 20 prompts have no data" in w and "q0" in w for w in report.warnings)


def test_all_ties_are_an_error():
    v = votes([(f"p{j}", "x", "y", f"r{k}", "tie", "o") for j in range(5) for k in range(3)])
    with pytest.raises(DesignError, match="every judgment is a tie: the data cannot tell any system apart"):
        check_design(net_ratings(v, merge_redundant=False))


def test_a_single_prompt_is_an_error_and_single_votes_a_warning(no_warnings):
    one = votes([("p1", "x", "y", "r1", "b", "o"), ("p1", "x", "z", "r1", "a", "o")])
    with pytest.raises(DesignError, match="only 1 prompt has data"):
        check_design(net_ratings(one, merge_redundant=False))
    single = votes([(f"p{j}", "x", "y", "r1", "ab"[j % 2], "o") for j in range(4)])
    report = check_design(net_ratings(single, merge_redundant=False))
    assert any("cannot be measured" in w for w in report.warnings)
    three = votes([(f"p{j}", "x", "y", f"r{k}", "ab"[(j + k) % 2], "o") for j in range(4) for k in range(3)])
    assert check_design(net_ratings(three, merge_redundant=False)).warnings == []


def test_an_empty_matrix_is_an_error():
    rm = net_ratings(votes([("p1", "x", "y", "r1", "b", "o"), ("p2", "x", "y", "r1", "a", "o")]), merge_redundant=False)
    rm.u, rm.n_votes, rm.prompt_ids = rm.u[:, :0], rm.n_votes[:, :0], rm.prompt_ids[:0]
    with pytest.raises(DesignError, match="empty"):
        check_design(rm)


def test_extreme_scores_do_not_overflow_to_nan(no_warnings):
    r = ratings(
        [
            ("p1", "a", "o", 1e308),
            ("p1", "b", "o", -1e308),
            ("p2", "a", "o", -1e308),
            ("p2", "b", "o", 1e308),
            ("p3", "a", "o", 0.0),
            ("p3", "b", "o", 0.0),
        ]
    )
    rm = from_absolute_ratings(r, merge_redundant=False)
    # d = s_b - s_a over a width of 2e308: -1, +1 of the width -> -3, +3; equal scores -> 0.
    assert_array_equal(rm.u, [[-3.0, 3.0, 0.0]])
    with pytest.raises(SettingsError, match="rating scale"):
        from_absolute_ratings(r, scale=(0.0, float("inf")), merge_redundant=False)


def test_averaged_ratings_say_how_many_scores_each_cell_averages(no_warnings):
    # Issue 16 item 13: no annotator mapped, 36 scores per (prompt, system) averaged, while the page
    # warned that every cell holds a single judgment.
    rng = np.random.default_rng(13)
    low = {"x": 1, "y": 2, "z": 4}  # x scores 1-2, y 2-3, z 4-5
    r = ratings(
        [(f"p{j}", s, "overall", float(low[s] + rng.integers(0, 2))) for j in range(6) for s in low for _ in range(36)]
    )
    rm = from_absolute_ratings(r, scale=(1, 5), merge_redundant=False)
    assert (rm.scores_averaged == 72).all()
    report = check_design(rm)
    assert any("each (comparison, prompt) cell averages 72 scores" in w for w in report.warnings)
    assert not any("single judgment" in w for w in report.warnings)
    # Uneven counts give the median and the range; one score per system stays a single judgment.
    uneven = from_absolute_ratings(r.iloc[:-35], scale=(1, 5), merge_redundant=False)
    assert any("averages 72 (median; 37 to 72) scores" in w for w in check_design(uneven).warnings)
    once = from_absolute_ratings(r.drop_duplicates(["prompt_id", "system"]), scale=(1, 5), merge_redundant=False)
    assert any("single judgment" in w for w in check_design(once).warnings)
