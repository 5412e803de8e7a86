"""Plotly figures and tables of the study planner: power curves with Monte-Carlo error bars, and the
cost table with the cheapest design of each strategy and analysis marked."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

Z_95 = 1.96
"""Error bars are +-1.96 Monte-Carlo SEs: a 95% interval for the simulated power."""

AXES = {"prompts": "annotators", "annotators": "prompts"}
"""x axis of a power curve -> the other design dimension, one panel per value."""


def power_curve(plan_df: pd.DataFrame, x: str = "prompts", target_power: float | None = None) -> go.Figure:
    """Power against prompts (or annotators), one line per analysis, dashed by prompt strategy, one
    panel per value of the other dimension.

    Parameters
    ----------
    plan_df : DataFrame
        A plan (:func:`lib.planning.power.plan`): ``prompts, annotators, strategy, analysis, power,
        power_mc_se, false_detection, valid, ...``.
    x : {"prompts", "annotators"}
    target_power : float, optional
        Drawn as a dashed horizontal line.

    Returns
    -------
    plotly Figure; error bars are +-:data:`Z_95` Monte-Carlo SEs.

    Raises
    ------
    ValueError
        ``x`` is not a key of :data:`AXES`.
    """
    if x not in AXES:
        raise ValueError(f"x must be one of {', '.join(AXES)}, not {x!r}")
    panel = AXES[x]
    df = plan_df.sort_values([panel, x]).assign(error=lambda d: Z_95 * d["power_mc_se"])
    fig = px.line(
        df,
        x=x,
        y="power",
        color="analysis",
        line_dash="strategy",
        error_y="error",
        markers=True,
        facet_col=panel,
        facet_col_wrap=4,
        range_y=[0, 1.05],
        labels={x: f"{x} per comparison" if x == "prompts" else "annotators per item"},
        # a power at the nominal level is what a user gets only where the analysis holds it: say so on hover
        hover_data=["power_mc_se", "false_detection", "valid", "interval_width", "kendall_tau", "judgments", "cost"],
    )
    # Counts of prompts or annotators: ticks at the designs' own values, never at 1.5 or 2.5 annotators.
    fig.update_xaxes(tickmode="array", tickvals=sorted(df[x].unique().tolist()))
    if target_power is not None:
        fig.add_hline(
            y=target_power,
            line_dash="dot",
            line_color="grey",
            annotation_text=f"target {target_power:g}",
            annotation_position="bottom right",
        )
    fig.update_layout(title=f"Power against {x} (error bars: +-{Z_95} Monte-Carlo SE)", legend_title_text="")
    return fig


def cost_table(plan_df: pd.DataFrame, cheapest_df: pd.DataFrame) -> pd.DataFrame:
    """The plan with a ``cheapest`` column: True on the cheapest design of its strategy and analysis
    that reaches the target power (:func:`lib.planning.power.cheapest`), sorted by cost.

    Parameters
    ----------
    plan_df : DataFrame
        A plan (:func:`lib.planning.power.plan`).
    cheapest_df : DataFrame
        Its :func:`lib.planning.power.cheapest`.

    Returns
    -------
    DataFrame
        The plan's columns and ``cheapest`` (bool).
    """
    keys = ["strategy", "analysis", "prompts", "annotators"]
    best = cheapest_df[cheapest_df["reached"]][keys].astype({"prompts": int, "annotators": int})
    marked = plan_df.merge(best.assign(cheapest=True), on=keys, how="left")
    marked["cheapest"] = marked["cheapest"].astype("boolean").fillna(False).astype(bool)
    return marked.sort_values(["cost", "prompts"], kind="stable").reset_index(drop=True)


def highlight_cheapest(table: pd.DataFrame):
    """A Styler of :func:`cost_table` with the cheapest designs' rows shaded (for ``st.dataframe``)."""
    shade = "background-color: rgba(46, 160, 67, 0.25)"
    return table.style.apply(lambda row: [shade if row["cheapest"] else ""] * len(row), axis=1)
