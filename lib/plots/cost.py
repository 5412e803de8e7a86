"""Figures of the human-cost analysis (Casares et al. 2022, Figs. 3-5 and the cost curves of
Eqs. 2-3), built from the tables of :mod:`lib.cost`.

Names from the user's file (tasks, conditions, covariates) are escaped (:mod:`lib.plots.labels`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from lib.plots.labels import label as escape

COMPONENT_NAMES = {
    "D_H": "D_H devise prompt",
    "W_H": "W_H wrap instance",
    "U_H": "U_H unwrap answer",
    "V_H": "V_H validate answer",
    "G_H": "G_H solve alone",
}


def _p(p: float) -> str:
    return "p n/a" if pd.isna(p) else f"p_holm = {p:.2g}"


def effort_bars(medians: pd.DataFrame, tests: pd.DataFrame, with_label: str, without_label: str) -> go.Figure:
    """Fig. 4: stacked median effort per task, with the model (D_H+W_H+U_H+V_H) and without (G_H).

    Parameters
    ----------
    medians : pandas.DataFrame
        ``task, condition, component, median_s`` (:func:`lib.cost.effort.effort_medians`).
    tests : pandas.DataFrame
        :func:`lib.cost.effort.effort_tests`; its Holm p-value is written under each task's name.
    with_label, without_label : str
        Condition labels (x sub-categories).

    Returns
    -------
    plotly.graph_objects.Figure
        One bar trace per component on a two-level x axis (task, condition), ``barmode="stack"``.
    """
    # The Holm p-value goes into the task label: positional annotations would depend on how plotly
    # orders the (task, condition) categories, and would shift when a condition has no bar.
    p_holm = tests.set_index("task").p_holm
    tasks = list(p_holm.index)
    shown = [f"{escape(str(t))}<br>MW {_p(p_holm[t])}" for t in tasks]
    fig = go.Figure()
    for comp, name in COMPONENT_NAMES.items():
        part = medians[medians.component == comp].set_index("task").median_s
        if part.empty:
            continue
        label = without_label if comp == "G_H" else with_label
        fig.add_bar(
            x=[shown, [escape(str(label))] * len(tasks)],
            y=[part.get(t, np.nan) for t in tasks],
            name=name,
            hovertemplate="%{x}<br>" + comp + " median %{y:.1f} s<extra></extra>",
        )
    fig.update_layout(
        barmode="stack",
        yaxis_title="median effort (s)",
        title="Effort with and without the model (medians per component)",
        legend_title="component",
        height=520,
        margin=dict(b=120),  # room for the two-level axis labels
    )
    return fig


def cost_curves(curve: pd.DataFrame, terms: pd.DataFrame) -> go.Figure:
    """C_H(n) (Eq. 2) and C_H,M(n) (Eq. 3) over n, one panel per task, break-even n marked.

    Parameters
    ----------
    curve : pandas.DataFrame
        ``task, n, c_h, c_hm`` (:func:`lib.cost.costs.cost_curve`).
    terms : pandas.DataFrame
        :func:`lib.cost.costs.cost_terms` (for ``break_even_n``).
    """
    tasks = list(pd.unique(curve.task))
    fig = make_subplots(rows=1, cols=max(1, len(tasks)), subplot_titles=[escape(str(t)) for t in tasks])
    even = terms.set_index("task").break_even_n
    marked = False
    for i, task in enumerate(tasks, start=1):
        c = curve[curve.task == task]
        first = i == 1
        fig.add_scatter(
            x=c.n,
            y=c.c_h,
            name="C_H (alone)",
            line=dict(color="#1f77b4", dash="dash"),
            legendgroup="ch",
            showlegend=first,
            row=1,
            col=i,
        )
        fig.add_scatter(
            x=c.n,
            y=c.c_hm,
            name="C_H,M (with model)",
            line=dict(color="#d62728"),
            legendgroup="chm",
            showlegend=first,
            row=1,
            col=i,
        )
        n = even.get(task)
        if n is not None and not pd.isna(n) and n <= c.n.max():
            at = c[c.n == n]
            fig.add_scatter(
                x=at.n,
                y=at.c_hm,
                mode="markers",
                marker=dict(size=12, symbol="star", color="black"),
                name="break-even n",
                legendgroup="be",
                showlegend=not marked,
                row=1,
                col=i,
            )
            marked = True
        fig.update_xaxes(title_text="n instances", row=1, col=i)
    fig.update_yaxes(title_text="cost (loss units)", row=1, col=1)
    fig.update_layout(title="Cost of n instances alone (Eq. 2) and with the model (Eq. 3)")
    return fig


def loss_vs_difficulty(table: pd.DataFrame) -> go.Figure:
    """Fig. 5: mean loss against difficulty h per task and condition, easiest instance marked.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`lib.cost.loss.loss_by_difficulty`.
    """
    tasks = list(pd.unique(table.task))
    fig = make_subplots(
        rows=1, cols=max(1, len(tasks)), subplot_titles=[escape(str(t)) for t in tasks], shared_yaxes=True
    )
    colors: dict[object, str] = {}
    palette = ["#d62728", "#1f77b4"]
    for i, task in enumerate(tasks, start=1):
        for cond, c in table[table.task == task].groupby("condition", sort=False):
            color = colors.setdefault(cond, palette[len(colors) % 2])
            name = escape(str(cond))
            fig.add_scatter(
                x=c.instance,
                y=c.mean_loss,
                mode="lines+markers",
                name=name,
                legendgroup=name,
                showlegend=i == 1,
                line=dict(color=color),
                row=1,
                col=i,
                hovertemplate="h = %{x}<br>mean loss %{y:.2f}<extra>" + name + "</extra>",
            )
            easy = c[c.easiest]
            fig.add_scatter(
                x=easy.instance,
                y=easy.mean_loss,
                mode="markers+text",
                text=[f"{v:.2f}" for v in easy.mean_loss],
                textposition="top center",
                marker=dict(size=14, symbol="circle-open", color=color, line=dict(width=2)),
                showlegend=False,
                row=1,
                col=i,
                hoverinfo="skip",
            )
        fig.update_xaxes(title_text="difficulty h", dtick=1, row=1, col=i)
    source = table.loss_source.iloc[0] if len(table) else "self"
    name = "external L_E" if source == "external" else "self-assessed L_H"
    fig.update_yaxes(title_text=f"mean loss ({name})", range=[0, 1.05], row=1, col=1)
    fig.update_layout(title="Loss against difficulty (circled: easiest instance; high = understanding gap)")
    return fig


def spearman_heatmap(table: pd.DataFrame) -> go.Figure:
    """Fig. 3: Spearman rho between covariates and effort / loss terms; * marks p < 0.05.

    Parameters
    ----------
    table : pandas.DataFrame
        ``var_x, var_y, rho, p_value, n`` (:func:`lib.cost.correlation.spearman`).
    """
    order = list(pd.unique(table.var_x))
    rho = table.pivot(index="var_y", columns="var_x", values="rho").reindex(index=order, columns=order)
    p = table.pivot(index="var_y", columns="var_x", values="p_value").reindex(index=order, columns=order)
    n = table.pivot(index="var_y", columns="var_x", values="n").reindex(index=order, columns=order)
    text = np.where(rho.isna(), "", rho.round(2).astype(str) + np.where(p < 0.05, "*", ""))
    names = [escape(str(v)) for v in order]
    fig = go.Figure(
        go.Heatmap(
            z=rho.to_numpy(),
            x=names,
            y=names,
            zmin=-1,
            zmax=1,
            colorscale="RdBu_r",
            text=text,
            texttemplate="%{text}",
            customdata=np.dstack([p.to_numpy(), n.to_numpy()]),
            hovertemplate="%{x} vs %{y}<br>rho %{z:.2f}<br>p %{customdata[0]:.3g}, n %{customdata[1]}<extra></extra>",
            colorbar=dict(title="rho"),
        )
    )
    fig.update_layout(title="Spearman correlations (* p < 0.05)", yaxis_autorange="reversed")
    return fig
