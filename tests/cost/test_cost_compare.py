"""lib.cost.compare: Holm correction and the per-task comparison of two groups."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lib.cost.compare import MANN_WHITNEY, NO_TEST, compare_by_task, holm


def test_holm_correction_by_hand():
    # Sorted p: 0.01 x 3 = 0.03; 0.03 x 2 = 0.06; 0.04 x 1 = 0.04 -> monotone 0.06.
    assert holm(np.array([0.01, 0.04, 0.03, np.nan])).tolist()[:3] == pytest.approx([0.03, 0.06, 0.06])
    assert np.isnan(holm(np.array([0.01, 0.04, 0.03, np.nan]))[3])


def test_compare_by_task_keeps_task_order_and_names_an_empty_group():
    data = pd.DataFrame(
        {
            "task": ["b"] * 6 + ["a"] * 3,
            "with_model": [True, True, True, False, False, False] * 1 + [True] * 3,
            "v": [1.0, 2.0, 3.0, 10.0, 20.0, 30.0, 5.0, 6.0, 7.0],
        }
    )
    out = compare_by_task(data, "v", ["b", "a"], mann_whitney_only=True)
    assert out.task.tolist() == ["b", "a"] and out.n_with.tolist() == [3, 3] and out.n_without.tolist() == [3, 0]
    assert out.median_with.tolist() == [2.0, 6.0] and out.median_without[0] == 20.0 and np.isnan(out.median_without[1])
    assert out.test.tolist() == [MANN_WHITNEY, NO_TEST]
    assert out.p_value[0] == pytest.approx(stats.mannwhitneyu([1, 2, 3], [10, 20, 30]).pvalue)
    assert out.p_holm[0] == out.p_value[0] and np.isnan(out.p_holm[1])  # a family of one test
