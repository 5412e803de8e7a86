"""Plotly figures of prompt selection: the SE-vs-k curve (Sedoc & Ungar 2020, Fig. 2) and the
adaptive what-if walk-through."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import hex_to_rgb, qualitative
from plotly.subplots import make_subplots

from lib.plots.labels import labels
from lib.selection.adaptive import INTERVAL, WhatIf
from lib.selection.settings import MODES
from lib.selection.strategies import STRATEGIES


def _colour(name: str) -> str:
    """One colour per strategy, by its place in the registry: the same in both figures."""
    return qualitative.Plotly[list(STRATEGIES).index(name) % len(qualitative.Plotly)]


def _band(
    x: pd.Series, low: pd.Series, high: pd.Series, name: str, hex_colour: str, label: str | None = None
) -> go.Scatter:
    """A strategy's band from ``low`` to ``high`` over ``x``: a closed outline filled translucent in its colour,
    without hover or legend entry (in the legend group ``name``); ``label`` names the trace."""
    return go.Scatter(
        x=pd.concat([x, x[::-1]]),
        y=pd.concat([high, low[::-1]]),
        fill="toself",
        fillcolor="rgba({}, {}, {}, 0.15)".format(*hex_to_rgb(hex_colour)),
        line={"width": 0},
        hoverinfo="skip",
        legendgroup=name,
        showlegend=False,
        name=label,
    )


def se_curve(summary: pd.DataFrame, mode: str, target_se: float | None = None) -> go.Figure:
    """Mean SE of the held-out ability against the number of prompts k, one line per strategy.

    Parameters
    ----------
    summary : DataFrame
        ``strategy, k, se_mean, se_lo, se_hi, abs_err_mean`` (``LooCurve.summary``).
    mode : {"fast", "full"}
        Named in the title: which calibration produced the curve.
    target_se : float, optional
        Drawn as a dashed horizontal line.

    Returns
    -------
    plotly Figure with a line per strategy and its 10-90% band over held-out comparisons.
    """
    fig = go.Figure()
    for name, part in summary.groupby("strategy", sort=False):
        colour, label = _colour(name), STRATEGIES[name].label
        fig.add_trace(_band(part["k"], part["se_lo"], part["se_hi"], name, colour, f"{label} band"))
        fig.add_trace(
            go.Scatter(
                x=part["k"],
                y=part["se_mean"],
                mode="lines+markers",
                name=label,
                legendgroup=name,
                line={"color": colour},
                customdata=part[["se_lo", "se_hi", "abs_err_mean"]],
                hovertemplate=(
                    "k = %{x}<br>mean SE %{y:.3f} (band %{customdata[0]:.3f}-%{customdata[1]:.3f})"
                    "<br>mean |error| %{customdata[2]:.3f}<extra>" + label + "</extra>"
                ),
            )
        )
    if target_se is not None:
        fig.add_hline(
            y=target_se,
            line_dash="dash",
            line_color="grey",
            annotation_text=f"target SE {target_se:.3g}",
            annotation_position="top right",
        )
    fig.update_layout(
        title={
            "text": f"SE of the held-out ability vs number of prompts<br><sup>{mode} calibration: {MODES[mode]}"
            "; bands: 10-90% over held-out comparisons</sup>"
        },
        xaxis_title="number of prompts k",
        yaxis_title="posterior SD of theta (SE)",
        legend_title="strategy",
        hovermode="closest",
    )
    return fig


def what_if_chart(result: WhatIf, target_se: float) -> go.Figure:
    """Theta estimate with its interval (top) and its SE (bottom) after each prompt.

    Parameters
    ----------
    result : WhatIf
        Adaptive and random orders (``lib.selection.adaptive.what_if``).
    target_se : float
        Stopping rule, drawn on the SE panel; each order's stopping step is marked.

    Returns
    -------
    plotly Figure with two rows sharing the x axis (prompts asked).
    """
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=(f"theta estimate and {INTERVAL:.0%} interval", "SE (posterior SD)"),
    )
    for name, part in result.path.groupby("order", sort=False):
        colour, label = _colour(name), STRATEGIES[name].label
        fig.add_trace(_band(part["step"], part["theta_lo"], part["theta_hi"], name, colour), row=1, col=1)
        fig.add_trace(
            go.Scatter(
                x=part["step"],
                y=part["theta_mean"],
                mode="lines",
                name=label,
                legendgroup=name,
                line={"color": colour},
                customdata=list(zip(labels(part["prompt_id"]), part["rating"], strict=True)),
                hovertemplate="step %{x}: prompt %{customdata[0]}, net rating %{customdata[1]}"
                "<br>theta %{y:.2f}<extra>" + label + "</extra>",
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=part["step"],
                y=part["theta_sd"],
                mode="lines",
                legendgroup=name,
                showlegend=False,
                line={"color": colour},
            ),
            row=2,
            col=1,
        )
        stop = result.stop.get(name)
        if stop is not None:
            fig.add_vline(
                x=stop,
                line_dash="dot",
                line_color=colour,
                row=2,
                col=1,
                annotation_text=f"stop at {stop}",
                annotation_position="top",
            )
    fig.add_hline(y=target_se, line_dash="dash", line_color="grey", row=2, col=1)
    if result.true_theta is not None:
        fig.add_hline(
            y=result.true_theta, line_dash="dash", line_color="black", row=1, col=1, annotation_text="true theta"
        )
    else:
        fig.add_hline(
            y=result.full_theta,
            line_dash="dash",
            line_color="black",
            row=1,
            col=1,
            annotation_text="estimate with all prompts",
        )
    fig.update_xaxes(title_text="prompts asked", row=2, col=1)
    fig.update_layout(title="Adaptive what-if: adaptive vs random order", hovermode="closest", height=600)
    return fig
