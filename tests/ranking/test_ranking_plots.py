"""Leaderboard figures: forest of skills, rank intervals, win heatmap, IRT beside Bradley–Terry."""

from __future__ import annotations

import numpy as np
import pandas as pd

from lib.plots.ranking import (
    DIFFERS,
    SAME,
    active_vs_uniform,
    irt_vs_bradley_terry,
    rank_intervals,
    skill_forest,
    win_heatmap,
)

SYSTEMS = ["alpha", "<b>beta</b>", "gamma"]


def board(bt=(1010.0, 1050.0, 940.0)) -> pd.DataFrame:
    """Three systems: <b>beta</b> best by IRT skill, alpha second, gamma last."""
    return pd.DataFrame(
        {
            "system": SYSTEMS,
            "skill_mean": [0.2, 0.5, -0.7],
            "skill_sd": [0.1, 0.1, 0.1],
            "skill_low": [0.0, 0.3, -0.9],
            "skill_high": [0.4, 0.7, -0.5],
            "rank_mean": [1.8, 1.2, 3.0],
            "rank_low": [1.0, 1.0, 3.0],
            "rank_high": [2.0, 2.0, 3.0],
            "p_best": [0.2, 0.8, 0.0],
            "n_votes": [10, 10, 10],
            "bt_rating": list(bt),
            "bt_low": [b - 20 for b in bt],
            "bt_high": [b + 30 for b in bt],
        }
    )


def test_skill_forest_puts_the_best_on_top_with_its_interval():
    fig = skill_forest(board())
    (trace,) = fig.data
    # plotly draws categories bottom-up: the last is the top row
    assert list(trace.y) == ["gamma", "alpha", "&lt;b&gt;beta&lt;/b&gt;"]
    assert np.allclose(trace.x, [-0.7, 0.2, 0.5])
    assert np.allclose(np.asarray(trace.x) + np.asarray(trace.error_x.array), [-0.5, 0.4, 0.7])
    assert np.allclose(np.asarray(trace.x) - np.asarray(trace.error_x.arrayminus), [-0.9, 0.0, 0.3])
    assert "95%" in fig.layout.title.text


def test_skill_forest_point_only_has_no_error_bars():
    assert skill_forest(board(), point_only=True).data[0].error_x.array is None


def test_rank_intervals_span_the_rank_interval_with_rank_one_on_the_right_end():
    fig = rank_intervals(board())
    (trace,) = fig.data
    assert list(trace.y)[-1] == "&lt;b&gt;beta&lt;/b&gt;"
    lows = np.asarray(trace.x) - np.asarray(trace.error_x.arrayminus)
    highs = np.asarray(trace.x) + np.asarray(trace.error_x.array)
    assert np.allclose(lows, [3.0, 1.0, 1.0]) and np.allclose(highs, [3.0, 2.0, 2.0])
    assert list(fig.layout.xaxis.range) == [3.5, 0.5]  # reversed: rank 1 on the right


def test_win_heatmap_fills_both_triangles_and_leaves_the_diagonal_blank():
    wins = pd.DataFrame(
        {
            "system_a": ["alpha", "alpha", "<b>beta</b>"],
            "system_b": ["<b>beta</b>", "gamma", "gamma"],
            "p_b_better": [0.7, 0.1, 0.05],
        }
    )
    order = ["<b>beta</b>", "alpha", "gamma"]
    z = np.asarray(win_heatmap(wins, order).data[0].z)
    assert np.isnan(np.diag(z)).all()
    assert z[1, 0] == 0.7 and np.isclose(z[0, 1], 0.3)  # row alpha, column beta: P(beta better than alpha)
    assert z[1, 2] == 0.1 and np.isclose(z[2, 1], 0.9)
    assert np.isclose(z[0, 2], 0.05) and np.isclose(z[2, 0], 0.95)
    assert next(iter(win_heatmap(wins, order).data[0].x)) == "&lt;b&gt;beta&lt;/b&gt;"


def test_irt_vs_bt_marks_exactly_the_systems_ranked_differently():
    # BT: beta 1050 > alpha 1010 > gamma 940: same order as IRT, nothing highlighted
    same = irt_vs_bradley_terry(board())
    assert list(same.data[0].marker.color) == [SAME] * 3
    assert "0 systems" in same.layout.title.text
    # BT puts alpha above beta: those two are red, gamma (last in both) is not
    swapped = irt_vs_bradley_terry(board(bt=(1060.0, 1050.0, 940.0)))
    colours = dict(zip(swapped.data[1].y, swapped.data[1].marker.color, strict=True))
    assert colours == {"alpha": DIFFERS, "&lt;b&gt;beta&lt;/b&gt;": DIFFERS, "gamma": SAME}
    assert "2 systems" in swapped.layout.title.text
    assert np.allclose(
        np.asarray(swapped.data[1].x) + np.asarray(swapped.data[1].error_x.array), [970.0, 1090.0, 1080.0]
    )


def test_active_vs_uniform_draws_one_line_per_rule_and_marks_the_votes_needed():
    trace = pd.DataFrame(
        {
            "rule": ["uniform"] * 3 + ["active"] * 2,
            "n_votes": [30, 40, 50, 30, 40],
            "p_best": [0.4, 0.8, 0.97, 0.5, 0.96],
        }
    )
    fig = active_vs_uniform(trace, {"uniform": 50, "active": 40}, 0.95)
    assert [t.name for t in fig.data] == ["uniform", "active"]
    assert list(fig.data[1].x) == [30, 40] and list(fig.data[1].y) == [0.5, 0.96]
    marks = sorted((s.x0, s.y0) for s in fig.layout.shapes)
    assert (40, 0) in marks and (50, 0) in marks  # vertical lines at the votes needed
    assert any(s.y0 == 0.95 and s.y1 == 0.95 for s in fig.layout.shapes)
