"""A fit's convergence table and a self-contained HTML report of an analysis.

The report is one HTML file that opens without a network: plotly.js is embedded once (with the
first figure), every figure stays interactive, and all user text is HTML-escaped.
"""

from __future__ import annotations

import html
from dataclasses import asdict
from datetime import UTC, datetime

import arviz as az
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from lib.errors import SettingsError
from lib.inference.timings import timings_table
from lib.io.display import readable
from lib.irt.settings import DECISION_LEVEL, needs_posterior

GLOSSARY = {
    "theta": "ability of a comparison in logits: > 0 means system B is better than A, 0 equally good.",
    "alpha": "discrimination of a prompt: how sharply it separates better from worse systems.",
    "b": "thresholds of a prompt (logits): the ability at which each higher net rating becomes likely.",
    "net rating": "sum over the votes of one comparison on one prompt of (B won) - (A won).",
    "94% HDI": "the narrowest interval holding 94% of the posterior: a credible interval, not a test.",
    "p_b_better": "posterior probability that theta > 0, i.e. that system B is better than A; above "
    f"{DECISION_LEVEL:g} (below {1 - DECISION_LEVEL:.2f}) it reads as B (A) better, a rule that declares a "
    "difference in at most 5.7% of studies with none (one vote a prompt, 10-150 prompts; 0.975 in up to 8.07%).",
    "R-hat": "spread between chains against within them (rank-normalised); above 1.01 they disagree.",
    "ESS bulk / tail": "effective number of independent draws for the posterior centre / its 5% and "
    "95% quantiles; below about 400 the estimates are noisy.",
    "MCSE": "Monte Carlo standard error of the posterior mean: the error due to finite draws.",
    "divergences": "NUTS transitions the sampler could not follow; any may bias the posterior.",
    "BFMI": "Bayesian fraction of missing information per chain; below 0.3 the sampler explores the tails poorly.",
    "contraction": "1 - posterior variance / prior variance: near 1 the data pin the parameter "
    "down, near 0 its interval is the prior's.",
    "posterior predictive p-value": "share of data sets replicated from the fit whose mean net "
    "rating exceeds the observed one; near 0 or 1 the prompt misfits.",
}
"""What each number in the report means, in one line."""

REPORT_TEMPLATE = "plotly_white"
"""Plotly template of the report's figures. In the app's process the default template is Streamlit's,
whose colours are placeholders (#000001, #000002, ...) that only its front end replaces: in a report
every chain and every trace came out near-black (issue 16, item 19)."""

LIST_SHOWN = 10
"""Longer lists of names (e.g. the prior-dominated parameters) are counted per variable, with the
names themselves in a collapsed list."""

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.85rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.5rem; text-align: left; }
.warning { color: #8a4b00; }
dt { font-weight: bold; } dd { margin: 0 0 0.4rem 1.5rem; }
"""


def convergence_table(idata: az.InferenceData) -> pd.DataFrame:
    """R-hat, ESS and MCSE of every parameter (``arviz.summary``, kind "diagnostics").

    Parameters
    ----------
    idata : arviz.InferenceData
        A fit's ``idata``: posterior ``theta`` (chain, draw, comparison), ``alpha`` (chain, draw,
        prompt), ``b`` (chain, draw, prompt, threshold).

    Returns
    -------
    DataFrame
        ``parameter, label, threshold, mcse_mean, mcse_sd, ess_bulk, ess_tail, r_hat``, one row
        per scalar parameter, the largest R-hat first; ``label`` is the comparison or prompt id,
        ``threshold`` is set for b only. R-hat is NaN with a single chain.

    Raises
    ------
    SettingsError
        Fewer than 2 draws (a MAP fit).
    """
    if idata["posterior"].sizes["draw"] < 2:
        raise SettingsError(needs_posterior("diagnostics"))
    summary = az.summary(idata, var_names=["theta", "alpha", "b"], kind="diagnostics", fmt="xarray")
    parts = []
    for var in ("theta", "alpha", "b"):
        part = summary[var].to_series().unstack("metric").reset_index()
        label = "comparison" if var == "theta" else "prompt"
        parts.append(part.rename(columns={label: "label"}).assign(parameter=var))
    table = pd.concat(parts, ignore_index=True)
    table["threshold"] = table["threshold"].astype("Int64")
    columns = ["parameter", "label", "threshold", "mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "r_hat"]
    return table[columns].sort_values("r_hat", ascending=False, na_position="last", kind="stable", ignore_index=True)


def data_summary(data) -> dict:
    """Names and values describing an analysis input, for :func:`build_report`.

    Parameters
    ----------
    data : lib.inputs.AnalysisInput

    Returns
    -------
    dict
        Source, format, criterion, comparisons, prompts, rated cells, votes and the net-rating
        range (user text as given: :func:`build_report` escapes it).
    """
    rm = data.matrix
    return {
        "source": data.source,
        "format": data.fmt,
        "criterion": data.criterion or "(one criterion)",
        "comparisons (or persons)": rm.shape[0],
        "prompts (or items)": rm.shape[1],
        "rated cells": int((~np.isnan(rm.u)).sum()),
        "votes": int(rm.n_votes.sum()),
        "net ratings": f"{rm.categories.min()} to {rm.categories.max()}",
    }


def _shown(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    return str(value)


def _cell(value: object) -> str:
    """A value as escaped HTML; a list longer than ``LIST_SHOWN`` as its count per variable (the text
    before "[", e.g. 98 alpha, 524 b) and the names in a collapsed ``<details>`` list."""
    if not isinstance(value, list | tuple) or len(value) <= LIST_SHOWN:
        return html.escape(_shown(value))
    counts = pd.Series([str(v).split("[")[0] for v in value]).value_counts(sort=False)
    summary = f"{len(value)}: " + ", ".join(f"{n} {name}" for name, n in counts.items())
    return (
        f"{html.escape(summary)}<details><summary>list them</summary>"
        f"{html.escape(', '.join(map(str, value)))}</details>"
    )


def _pairs(values: dict) -> str:
    """A two-column HTML table of names and values, both escaped."""
    rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{_cell(v)}</td></tr>" for k, v in values.items())
    return f"<table>{rows}</table>"


def _figure(fig: go.Figure, n: int) -> str:
    """An interactive figure (plotly.js embedded with the first), in the report's template."""
    fig = go.Figure(fig).update_layout(template=REPORT_TEMPLATE)  # a copy: the page's figure is left alone
    # plotly escapes <, > and / in the figure's JSON, so user text in it cannot end the script.
    return fig.to_html(
        full_html=False,
        include_plotlyjs=n == 0,
        div_id=f"figure-{n}",
        default_height=f"{fig.layout.height or 450}px",
        config={"displaylogo": False},
    )


def _table(table: pd.DataFrame) -> str:
    """An HTML table, every cell escaped and formatted as the pages show it (:func:`lib.io.display.readable`)."""
    return readable(table).as_text().to_html(index=False, escape=True, border=0)


def build_report(
    data_summary: dict,
    fit,
    tables: dict[str, pd.DataFrame],
    figures: dict[str, go.Figure],
    ranking=None,
) -> str:
    """One self-contained HTML report of a fit: data, settings, diagnostics, figures and tables.

    Parameters
    ----------
    data_summary : dict
        Names and values describing the data (source, systems, prompts, votes, ...).
    fit : lib.irt.fit.GRMFit
        Its settings and diagnostics (with warnings) are reported.
    tables : dict of str to DataFrame
        Title -> table; shown with every cell HTML-escaped.
    figures : dict of str to plotly Figure
        Title -> figure; embedded as interactive plotly, plotly.js included once (inline), drawn
        with ``REPORT_TEMPLATE`` (distinct colours per chain or trace).
    ranking : lib.ranking.run.RankingResult, optional
        The Leaderboard page's result for the same data (``ui.common.current_ranking``): its
        settings, notes, skill forest and leaderboard table are added.

    Returns
    -------
    str
        A complete HTML document that needs no network to open. Every figure is a
        ``div.plotly-graph-div`` with id ``figure-<n>`` (n from 0 in the order given, the
        leaderboard's last).
    """
    diag = asdict(fit.diagnostics)
    warnings, timings = diag.pop("warnings"), diag.pop("timings")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>Human evaluation report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>Human evaluation report</h1>",
        f"<p>Generated {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. Graded response model "
        "(Samejima 1969) of net ratings, as in Sedoc &amp; Ungar (2020).</p>",
        "<h2>Data</h2>",
        _pairs(data_summary),
        "<h2>Fit settings</h2>",
        _pairs(asdict(fit.settings)),
        "<h2>Diagnostics</h2>",
        _pairs(diag),
    ]
    if warnings:
        items = "".join(f'<li class="warning">{html.escape(w)}</li>' for w in warnings)
        parts.append(f"<ul>{items}</ul>")
    else:
        parts.append("<p>No warnings.</p>")
    if timings:
        parts += ["<h3>Time per phase</h3>", _table(timings_table(timings))]
    parts.append("<h2>What the numbers mean</h2><dl>")
    parts += [f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in GLOSSARY.items()]
    parts.append("</dl>")
    if figures:
        parts.append("<h2>Figures</h2>")
    for n, (title, fig) in enumerate(figures.items()):
        parts.append(f"<section><h3>{html.escape(title)}</h3>{_figure(fig, n)}</section>")
    if tables:
        parts.append("<h2>Tables</h2>")
    for title, table in tables.items():
        parts.append(f"<section><h3>{html.escape(title)}</h3>{_table(table)}</section>")
    if ranking is not None:
        from lib.plots.ranking import skill_forest

        parts += [
            "<h2>Leaderboard</h2>",
            "<p>One skill per system (structured IRT; docs/leaderboard.md).</p>",
            _pairs(
                {
                    "sampler": ranking.fit.settings.sampler,
                    "likelihood": ranking.fit.data.likelihood,
                    "systems": len(ranking.leaderboard),
                }
                | ({"method": ranking.fit.route} if ranking.fit.route else {})
            ),
        ]
        parts += [f'<p class="warning">{html.escape(note)}</p>' for note in ranking.notes]
        parts.append(_figure(skill_forest(ranking.leaderboard), len(figures)))
        parts.append(_table(ranking.leaderboard))
    parts.append("</body></html>")
    return "\n".join(parts)
