"""Figures of the Judges page: the three leaderboards side by side and each judge's preference per system."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from lib.plots.labels import label, labels

ESTIMATES = {"human": "humans only", "judge": "judge only", "ppi": "prediction-powered"}
"""Prefix of each leaderboard's columns -> its name in the figures."""

_OFFSET = {"human": -0.22, "judge": 0.0, "ppi": 0.22}  # rows of one system, a little apart


def three_leaderboards(board: pd.DataFrame, level: float = 0.95) -> go.Figure:
    """Each system's skill and interval by human votes, judge votes and both (prediction-powered).

    Parameters
    ----------
    board : DataFrame
        :func:`lib.judges.run.judge_leaderboard`'s leaderboard (``system``, ``{human,judge,ppi}_skill``,
        ``_low``, ``_high``), best prediction-powered skill first; drawn with the best at the top.
    level : float
        The intervals' coverage, for the title.
    """
    t = board.iloc[::-1].reset_index(drop=True)
    fig = go.Figure()
    for prefix, name in ESTIMATES.items():
        fig.add_trace(
            go.Scatter(
                x=t[f"{prefix}_skill"],
                y=t.index + _OFFSET[prefix],
                mode="markers",
                name=name,
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": t[f"{prefix}_high"] - t[f"{prefix}_skill"],
                    "arrayminus": t[f"{prefix}_skill"] - t[f"{prefix}_low"],
                },
                text=labels(t["system"]),
                hovertemplate="%{text}<br>" + name + " skill %{x:.2f}<extra></extra>",
            )
        )
    fig.update_layout(
        title=f"Bradley–Terry skill per system: {level:.0%} intervals",
        xaxis_title="skill (logits, summing to zero)",
        yaxis={"tickmode": "array", "tickvals": list(t.index), "ticktext": labels(t["system"]), "automargin": True},
        height=max(300, 60 * len(t) + 120),
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def judge_preference(preference: pd.DataFrame) -> go.Figure:
    """The judges' score of each system minus the humans' on the same items, with intervals.

    Parameters
    ----------
    preference : DataFrame
        ``lib.judges.quality.PREFERENCE_COLUMNS`` (one row per judge and system).
    """
    fig = go.Figure()
    for judge, rows in preference.groupby("judge", sort=True):
        fig.add_trace(
            go.Bar(
                x=labels(rows["system"]),
                y=rows["preference"],
                name=label(judge),
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": rows["preference_high"] - rows["preference"],
                    "arrayminus": rows["preference"] - rows["preference_low"],
                },
            )
        )
    fig.add_hline(y=0, line_dash="dot")
    fig.update_layout(
        title="Does the judge favour a system? Its mean score of the system minus the humans'",
        yaxis_title="judge score - human score (> 0: favoured)",
        xaxis={"title": "system", "type": "category"},
        barmode="group",
    )
    return fig
