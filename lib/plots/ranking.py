"""Plotly figures of the system leaderboard: skills, ranks, win probabilities, IRT beside Bradley–Terry.

Every function takes the tables of :mod:`lib.ranking.run` (``leaderboard`` and ``win_matrix``
columns). System names come from users' files: they are escaped (:mod:`lib.plots.labels`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from lib.plots.labels import labels

DIFFERS = "#d62728"
SAME = "#1f77b4"
"""Colours of systems whose IRT and Bradley–Terry ranks differ / agree."""


def _height(n: int) -> int:
    """Every system labelled: at least 22 px per row."""
    return max(300, (40 if n <= 30 else 22) * n + 120)


def _interval(t: pd.DataFrame, mean: str, low: str, high: str) -> dict | None:
    if t[low].isna().all():
        return None
    return {"type": "data", "symmetric": False, "array": t[high] - t[mean], "arrayminus": t[mean] - t[low]}


def skill_forest(board: pd.DataFrame, *, point_only: bool = False) -> go.Figure:
    """Forest plot: each system's skill s_k, posterior mean and 95% interval, best at the top.

    Parameters
    ----------
    board : DataFrame
        ``system, skill_mean, skill_low, skill_high, p_best`` (:func:`lib.ranking.run.rank_systems`).
    point_only : bool
        A point fit without an interval (no error bars).
    """
    t = board.sort_values("skill_mean")
    fig = go.Figure(
        go.Scatter(
            x=t["skill_mean"],
            y=labels(t["system"]),
            mode="markers",
            error_x=None if point_only else _interval(t, "skill_mean", "skill_low", "skill_high"),
            customdata=np.c_[t["p_best"]],
            hovertemplate="%{y}<br>skill %{x:.2f}<br>P(best) %{customdata[0]:.2f}<extra></extra>",
        )
    )
    fig.add_vline(x=0, line_dash="dot")
    fig.update_layout(
        title="Skill per system: posterior mean and 95% interval",
        xaxis_title="skill s (logits)",
        yaxis={"title": "system", "type": "category", "dtick": 1, "automargin": True},
        height=_height(len(t)),
    )
    return fig


def rank_intervals(board: pd.DataFrame) -> go.Figure:
    """Rank of each system from the posterior draws: mean and 95% interval (1 = best).

    Parameters
    ----------
    board : DataFrame
        ``system, rank_mean, rank_low, rank_high``.
    """
    t = board.sort_values("rank_mean", ascending=False)
    fig = go.Figure(
        go.Scatter(
            x=t["rank_mean"],
            y=labels(t["system"]),
            mode="markers",
            error_x=_interval(t, "rank_mean", "rank_low", "rank_high"),
            customdata=np.c_[t["rank_low"], t["rank_high"]],
            hovertemplate="%{y}<br>mean rank %{x:.1f}<br>95%: %{customdata[0]:.0f} to %{customdata[1]:.0f}"
            "<extra></extra>",
        )
    )
    fig.update_layout(
        title="Rank per system: mean and 95% interval (1 = best)",
        xaxis={"title": "rank", "range": [len(t) + 0.5, 0.5], "dtick": 1},
        yaxis={"title": "system", "type": "category", "dtick": 1, "automargin": True},
        height=_height(len(t)),
    )
    return fig


def win_heatmap(wins: pd.DataFrame, order: list[str]) -> go.Figure:
    """Heatmap of P(column system better than row system) for every pair, compared or not.

    Parameters
    ----------
    wins : DataFrame
        ``system_a, system_b, p_b_better`` (one row per ordered or unordered pair; the reverse
        pair is filled as ``1 - p``).
    order : list of str
        Systems in display order (e.g. best first); rows and columns follow it.
    """
    p = pd.DataFrame(np.nan, index=order, columns=order)
    for a, b, v in wins[["system_a", "system_b", "p_b_better"]].itertuples(index=False):
        p.loc[a, b], p.loc[b, a] = v, 1 - v
    shown = labels(order)
    fig = go.Figure(
        go.Heatmap(
            z=p.to_numpy(),
            x=shown,
            y=shown,
            zmin=0,
            zmax=1,
            colorscale="RdBu",
            colorbar={"title": "P(column better)"},
            hovertemplate="P(%{x} better than %{y}) = %{z:.2f}<extra></extra>",
        )
    )
    fig.update_layout(
        title="Win probability: P(column system better than row system)",
        xaxis={"title": "system (column)", "type": "category", "tickangle": -45},
        yaxis={"title": "system (row)", "type": "category", "autorange": "reversed"},
        height=_height(len(order)) + 60,
    )
    return fig


def irt_vs_bradley_terry(board: pd.DataFrame) -> go.Figure:
    """The IRT skills beside the Bradley–Terry ratings, systems whose ranks differ in red.

    Both panels share the systems' rows in IRT order (best at the top); the hover names both
    ranks.

    Parameters
    ----------
    board : DataFrame
        ``system, skill_mean, skill_low, skill_high, bt_rating, bt_low, bt_high``; the BT columns
        may be empty (then the right panel is empty).
    """
    t = board.sort_values("skill_mean").reset_index(drop=True)
    irt_rank = t["skill_mean"].rank(ascending=False, method="min")
    bt_rank = t["bt_rating"].rank(ascending=False, method="min")
    differs = (irt_rank != bt_rank) & t["bt_rating"].notna()
    colours = np.where(differs, DIFFERS, SAME)
    y = labels(t["system"])
    ranks = np.c_[irt_rank, bt_rank]
    fig = make_subplots(
        rows=1,
        cols=2,
        shared_yaxes=True,
        horizontal_spacing=0.04,
        subplot_titles=("IRT skill (logits)", "Bradley–Terry rating (Elo points)"),
    )
    fig.add_trace(
        go.Scatter(
            x=t["skill_mean"],
            y=y,
            mode="markers",
            marker={"color": colours, "size": 9},
            name="IRT",
            error_x=_interval(t, "skill_mean", "skill_low", "skill_high"),
            customdata=ranks,
            hovertemplate="%{y}<br>skill %{x:.2f}<br>IRT rank %{customdata[0]:.0f}, BT rank %{customdata[1]:.0f}"
            "<extra></extra>",
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Scatter(
            x=t["bt_rating"],
            y=y,
            mode="markers",
            marker={"color": colours, "size": 9, "symbol": "square"},
            name="Bradley–Terry",
            error_x=_interval(t, "bt_rating", "bt_low", "bt_high"),
            customdata=ranks,
            hovertemplate="%{y}<br>rating %{x:.0f}<br>IRT rank %{customdata[0]:.0f}, BT rank %{customdata[1]:.0f}"
            "<extra></extra>",
        ),
        row=1,
        col=2,
    )
    n_diff = int(differs.sum())
    fig.update_layout(
        title=f"IRT vs Bradley–Terry: {n_diff} system{'s' if n_diff != 1 else ''} ranked differently (red)",
        showlegend=False,
        height=_height(len(t)),
        yaxis={"title": "system", "type": "category", "dtick": 1, "automargin": True},
    )
    return fig


def active_vs_uniform(trace: pd.DataFrame, needed: dict, target: float) -> go.Figure:
    """P(best) of the true best system against the votes collected, one line per sampling rule.

    Parameters
    ----------
    trace : DataFrame
        ``rule, n_votes, p_best`` (:class:`lib.ranking.simulate.ActiveSimulation`).
    needed : dict
        ``{rule: votes needed or None}``: marked on each line.
    target : float
        The P(best) to exceed (a dotted line).
    """
    fig = go.Figure()
    for rule, t in trace.groupby("rule", sort=False):
        fig.add_trace(go.Scatter(x=t["n_votes"], y=t["p_best"], mode="lines", name=rule))
        if needed.get(rule) is not None:
            fig.add_vline(x=needed[rule], line_dash="dash", annotation_text=f"{rule}: {needed[rule]} votes")
    fig.add_hline(y=target, line_dash="dot")
    fig.update_layout(
        title=f"Votes until the true best system has P(best) > {target:g}",
        xaxis_title="votes collected",
        yaxis={"title": "P(best) of the true best", "range": [0, 1]},
    )
    return fig


def style_shift(board: pd.DataFrame) -> go.Figure:
    """Each system's skill without and with style control, joined by a line (the shift), best controlled at the top.

    Parameters
    ----------
    board : DataFrame
        ``system, skill_mean, skill_uncontrolled, rank_change`` (the leaderboard of
        :func:`lib.ranking.run.rank_systems` with style control).
    """
    t = board.sort_values("skill_mean").reset_index(drop=True)
    y = labels(t["system"])
    moved = t["rank_change"].to_numpy()
    colours = np.where(moved < 0, DIFFERS, np.where(moved > 0, "#2ca02c", SAME))
    fig = go.Figure()
    for i, row in t.iterrows():
        fig.add_trace(
            go.Scatter(
                x=[row["skill_uncontrolled"], row["skill_mean"]],
                y=[y[i], y[i]],
                mode="lines",
                line={"color": colours[i], "width": 2},
                showlegend=False,
                hoverinfo="skip",
            )
        )
    hover = "%{y}<br>skill %{x:.2f}<br>place change %{customdata[0]:+.0f}<extra></extra>"
    fig.add_trace(
        go.Scatter(
            x=t["skill_uncontrolled"],
            y=y,
            mode="markers",
            name="without style control",
            marker={"color": "#7f7f7f", "size": 8, "symbol": "circle-open"},
            customdata=np.c_[moved],
            hovertemplate=hover,
        )
    )
    fig.add_trace(
        go.Scatter(
            x=t["skill_mean"],
            y=y,
            mode="markers",
            name="with style control",
            marker={"color": colours, "size": 10},
            customdata=np.c_[moved],
            hovertemplate=hover,
        )
    )
    fig.update_layout(
        title="Shift of each system's skill under style control (red: drops in the ranking, green: rises)",
        xaxis_title="skill s (logits)",
        yaxis={"title": "system", "type": "category", "dtick": 1, "automargin": True},
        height=_height(len(t)),
    )
    return fig
