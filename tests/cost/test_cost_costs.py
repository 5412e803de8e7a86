"""lib.cost.costs: Eqs. 2-3, break-even n, weights and a validation time taken as 0."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from cost_studies import NUMERIC, make_study, task_rows

from lib.cost.analysis import analyse
from lib.cost.costs import Weights, break_even, c_h, c_hm, parse_weights
from lib.errors import SettingsError


def test_equations_2_and_3_and_break_even(effort_study):
    w = Weights(alpha=0.5, beta=0.1, gamma=0.2, delta=0.3)
    res = analyse(effort_study, weights=w, n_max=30)
    t = res.cost_terms.set_index("task").loc["numeric"]
    # Eq. 3 per instance: L 0.5 + 0.2 (35 + 5) + 0.3 x 10 = 11.5; set-up alpha D_H = 0.5 x 115 = 57.5.
    assert t.per_instance_with == pytest.approx(11.5) and t.setup == pytest.approx(57.5)
    # Eq. 2 per instance: L 0 + 0.1 x 140 = 14.
    assert t.per_instance_without == pytest.approx(14.0)
    # 57.5 + 11.5 n < 14 n  <=>  n > 23; at n = 23 the costs tie, which does not pay.
    assert t.n_star == pytest.approx(23.0)
    assert t.break_even_n == 24
    curve = res.cost_curve[res.cost_curve.task == "numeric"]
    n = curve.n.to_numpy()
    assert curve.c_h.to_numpy() == pytest.approx(14.0 * n)
    assert curve.c_hm.to_numpy() == pytest.approx(57.5 + 11.5 * n)
    assert list(res.cost_curve.columns) == ["task", "n", "c_h", "c_hm"]


def test_break_even_cases():
    assert break_even(10.0, 3.0, 5.0) == (6, 5.0)  # tie at 5
    assert break_even(10.0, 3.0, 7.0)[0] == 3  # n* = 2.5
    assert break_even(0.0, 1.0, 2.0)[0] == 1  # no set-up: pays at once
    assert break_even(10.0, 5.0, 5.0)[0] is None
    assert break_even(10.0, 6.0, 5.0)[0] is None
    assert c_h(np.array([1, 2]), 0.2, 10.0, 0.5).tolist() == pytest.approx([5.2, 10.4])
    assert c_hm(2, 0.1, 100.0, 1.0, 2.0, 3.0, Weights(0.1, 9.0, 1.0, 2.0)) == pytest.approx(10 + 2 * (0.1 + 3 + 6))


def test_break_even_agrees_with_curve(effort_study):
    res = analyse(effort_study, weights=Weights(1, 0.2, 0.1, 0.1), n_max=50)
    for t in res.cost_terms.itertuples():
        c = res.cost_curve[res.cost_curve.task == t.task]
        pays = c.n[c.c_hm < c.c_h - 1e-9]
        if pd.isna(t.break_even_n):
            assert pays.empty
        else:
            assert pays.min() == t.break_even_n and (pays.diff().dropna() == 1).all()


def test_weights_parsing():
    assert parse_weights("1,0.5,2,0") == Weights(1, 0.5, 2, 0)
    assert parse_weights(None) == Weights()
    for bad in ("1,2,3", "a,b,c,d", "1,2,3,-1"):
        with pytest.raises(SettingsError, match="alpha,beta,gamma,delta"):
            parse_weights(bad)


def test_validation_time_taken_as_zero_when_not_measured():
    """Issue 8 item 9: without a V_H column every task said "no cost, V_H not measured"."""
    no_v = {k: v for k, v in NUMERIC.items() if k != "validate_time_s"}
    study = make_study(task_rows("numeric", [3] * 9, [5] * 9, **no_v), covariates={})
    plain = analyse(study, weights=Weights(0.01, 0.01, 0.01, 0.01))
    assert plain.cost_terms.setup.isna().all() and any("V_H not measured" in w for w in plain.warnings)
    zero = analyse(study, weights=Weights(0.01, 0.01, 0.01, 0.01), validation_zero=True)
    measured = make_study(
        task_rows("numeric", [3] * 9, [5] * 9, **no_v, validate_time_s=([0] * 9, None)), covariates={}
    )
    want = analyse(measured, weights=Weights(0.01, 0.01, 0.01, 0.01))
    pd.testing.assert_frame_equal(zero.cost_terms, want.cost_terms)
    pd.testing.assert_frame_equal(zero.cost_curve, want.cost_curve)
    assert zero.cost_terms.break_even_n.notna().all()
    assert any("V_H not measured, taken as 0 s" in w for w in zero.warnings)
