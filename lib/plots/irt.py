"""Plotly figures of the judgments and the fitted graded response model; comparison labels and prompt ids
are escaped (:mod:`lib.plots.labels`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from scipy.stats import gaussian_kde

from lib.irt.readouts import category_probs, expected_score, item_information
from lib.plots.labels import label, labels

THETA_GRID = np.linspace(-4.0, 4.0, 161)
"""Abilities shown on the charts, in logits."""


def net_rating_heatmap(u: np.ndarray, comparisons: list[str], prompt_ids: list[str]) -> go.Figure:
    """Heatmap of net ratings, comparisons x prompts (missing cells blank); u in [-K, K].

    Both axes are categorical, so numeric prompt ids are labels, not positions on a number line.
    """
    top = float(np.nanmax(np.abs(u))) if np.isfinite(u).any() else 1.0
    fig = go.Figure(
        go.Heatmap(
            z=u,
            x=labels(prompt_ids),
            y=labels(comparisons),
            zmin=-top,
            zmax=top,
            colorscale="RdBu",
            colorbar={"title": "net rating"},
            hovertemplate="prompt %{x}<br>%{y}<br>net rating %{z}<extra></extra>",
        )
    )
    fig.update_layout(
        title="Net ratings (u > 0: B preferred)",
        xaxis_title="prompt",
        yaxis_title="comparison (B vs A)",
        xaxis_showticklabels=len(prompt_ids) <= 60,
        xaxis_type="category",
        yaxis_type="category",
    )
    return fig


def ability_density(theta_draws: np.ndarray, names: list[str]) -> go.Figure:
    """Posterior density of theta for every comparison in one chart (Sedoc & Ungar, Fig. 1).

    Parameters
    ----------
    theta_draws : ndarray, shape (n_draws, I)
    names : list of str, length I
        Comparison labels (the legend).
    """
    fig = go.Figure()
    lo, hi = np.quantile(theta_draws, [0.001, 0.999])
    pad = 0.15 * (hi - lo)  # room for the tails the quantiles cut
    grid = np.linspace(min(lo - pad, -1.0), max(hi + pad, 1.0), 300)
    for i, name in enumerate(names):
        draws = theta_draws[:, i]
        density = gaussian_kde(draws)(grid) if draws.std() > 0 else np.zeros_like(grid)
        fig.add_trace(go.Scatter(x=grid, y=density, mode="lines", name=label(name)))
    fig.add_vline(x=0, line_dash="dot", annotation_text="no preference")
    fig.update_layout(
        title="Posterior ability per comparison (theta > 0: B better)",
        xaxis_title="theta (logits)",
        yaxis_title="posterior density",
    )
    return fig


def ability_forest(table: pd.DataFrame, *, point_only: bool = False) -> go.Figure:
    """Forest plot: posterior mean of theta with its 94% HDI per comparison.

    ``table`` is :func:`lib.irt.summary.ability_table`; ``point_only`` for a MAP preview. Every
    comparison is labelled (the chart grows at least 22 px per row).
    """
    t = table.sort_values("theta_mean")
    err = (
        None
        if point_only
        else {
            "type": "data",
            "symmetric": False,
            "array": t["hdi_high"] - t["theta_mean"],
            "arrayminus": t["theta_mean"] - t["hdi_low"],
        }
    )
    hover = "%{y}<br>theta %{x:.2f}" + ("" if point_only else "<br>P(B better) %{customdata[0]:.2f}")
    fig = go.Figure(
        go.Scatter(
            x=t["theta_mean"],
            y=labels(t["comparison"]),
            mode="markers",
            error_x=err,
            customdata=np.c_[t["p_b_better"]],
            hovertemplate=hover + "<extra></extra>",
        )
    )
    fig.add_vline(x=0, line_dash="dot")
    title = (
        "MAP ability (preview: no interval, shrunk towards 0)"
        if point_only
        else "Ability per comparison: posterior mean and 94% HDI"
    )
    fig.update_layout(
        title=title,
        xaxis_title="theta (logits)",
        yaxis={"title": "comparison (B vs A)", "type": "category", "dtick": 1, "automargin": True},
        height=max(300, (40 if len(t) <= 30 else 22) * len(t) + 120),
    )
    return fig


def category_curves(alpha: np.ndarray, b: np.ndarray, categories: np.ndarray) -> go.Figure:
    """Category response curves P(u = c | theta) of one prompt at posterior-mean parameters.

    alpha : scalar; b : (K-1,) thresholds; categories : (K,) values.
    """
    probs = category_probs(THETA_GRID, np.atleast_1d(alpha), np.atleast_2d(b))[:, 0, :]
    fig = go.Figure()
    for k, c in enumerate(categories):
        fig.add_trace(go.Scatter(x=THETA_GRID, y=probs[:, k], mode="lines", name=f"u = {c}"))
    fig.update_layout(title="Category response curves", xaxis_title="theta (logits)", yaxis_title="P(u = c | theta)")
    return fig


def expected_rating_band(
    alpha_draws: np.ndarray, b_draws: np.ndarray, categories: np.ndarray, hdi_prob: float = 0.94
) -> go.Figure:
    """Expected net rating of one prompt over theta: posterior mean with a central band.

    alpha_draws : (S,); b_draws : (S, K-1) posterior draws of the prompt's parameters.
    """
    e = expected_score(THETA_GRID, alpha_draws[:, None], b_draws[:, None, :], categories)[..., 0]
    lo, hi = np.quantile(e, [(1 - hdi_prob) / 2, (1 + hdi_prob) / 2], axis=0)
    fig = go.Figure(
        [
            go.Scatter(x=THETA_GRID, y=hi, mode="lines", line_width=0, showlegend=False),
            go.Scatter(x=THETA_GRID, y=lo, mode="lines", line_width=0, fill="tonexty", name=f"{hdi_prob:.0%} band"),
            go.Scatter(x=THETA_GRID, y=e.mean(axis=0), mode="lines", name="posterior mean"),
        ]
    )
    fig.update_layout(title="Expected net rating", xaxis_title="theta (logits)", yaxis_title="E[u | theta]")
    return fig


def information_curves(alpha: np.ndarray, b: np.ndarray, prompt: int | None = None) -> go.Figure:
    """Test information over theta (sum of the prompts' GRM informations) and SE = 1/sqrt(I).

    alpha : (J,); b : (J, K-1) at posterior means. With ``prompt``, that prompt's information too.
    """
    info = item_information(THETA_GRID, alpha, b)  # (n_theta, J)
    total = info.sum(axis=1)
    fig = go.Figure(
        [
            go.Scatter(x=THETA_GRID, y=total, mode="lines", name="test information"),
            go.Scatter(x=THETA_GRID, y=1 / np.sqrt(total), mode="lines", name="SE(theta)", yaxis="y2"),
        ]
    )
    if prompt is not None:
        fig.add_trace(go.Scatter(x=THETA_GRID, y=info[:, prompt], mode="lines", name="this prompt's information"))
    fig.update_layout(
        title="Information over all prompts",
        xaxis_title="theta (logits)",
        yaxis_title="information (1/logit^2)",
        yaxis2={"title": "SE(theta) (logits)", "overlaying": "y", "side": "right"},
    )
    return fig
