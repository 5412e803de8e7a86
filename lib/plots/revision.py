"""Figures for the Revision edits page: Revision Distance per group and the category breakdown.

System, editor and category names come from users' files: they are escaped (:mod:`lib.plots.labels`).
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from lib.plots.labels import label, labels


def revision_distance_figure(summary: pd.DataFrame, by: str, title: str) -> go.Figure:
    """Mean Revision Distance per group with its confidence interval as error bars.

    Parameters
    ----------
    summary : DataFrame
        :func:`lib.revision.metrics.summarize` output grouped by ``by``.
    """
    upper = (summary["ci_high"] - summary["mean"]).fillna(0)
    lower = (summary["mean"] - summary["ci_low"]).fillna(0)
    fig = go.Figure(
        go.Bar(
            x=labels(summary[by]),
            y=summary["mean"],
            error_y={"type": "data", "symmetric": False, "array": upper, "arrayminus": lower},
            customdata=summary[["n"]],
            hovertemplate="%{x}: %{y:.2f} edits per draft (n=%{customdata[0]})<extra></extra>",
        )
    )
    fig.update_layout(
        title=title,
        xaxis_title=by,
        yaxis_title="Revision Distance (edits per draft, lower is better)",
        height=380,
        margin={"t": 50, "b": 40},
    )
    return fig


def category_figure(table: pd.DataFrame, title: str) -> go.Figure:
    """Stacked bars of mean edits per draft in each category (Table 3 as a figure).

    Parameters
    ----------
    table : DataFrame
        :func:`lib.revision.metrics.category_table` output (the ``Total`` column is not drawn).
    """
    fig = go.Figure(
        [
            go.Bar(
                name=label(cat),
                x=labels(table.index),
                y=table[cat],
                hovertemplate="%{fullData.name}: %{y:.2f} per draft<extra></extra>",
            )
            for cat in table.columns
            if cat != "Total"
        ]
    )
    fig.update_layout(
        barmode="stack",
        title=title,
        yaxis_title="edits per draft",
        height=420,
        legend={"orientation": "h", "y": -0.2},
        margin={"t": 50},
    )
    return fig
