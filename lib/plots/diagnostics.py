"""Plotly figures of a NUTS fit's diagnostics: trace, rank histograms, energy, posterior predictive.

User text (comparison labels, prompt ids) goes into titles escaped (:mod:`lib.plots.labels`).
"""

from __future__ import annotations

import arviz as az
import numpy as np
import plotly.graph_objects as go
from arviz.plots.plot_utils import compute_ranks
from plotly.subplots import make_subplots

from lib.errors import SettingsError
from lib.irt.ppc import INTERVAL, PosteriorPredictive
from lib.irt.settings import needs_posterior
from lib.plots.labels import label as escape

PARAMETERS = {"theta": "comparison", "alpha": "prompt"}
"""Parameters the trace and rank plots show, with the dimension that labels them."""


def parameter_draws(idata: az.InferenceData, var: str, label: str) -> np.ndarray:
    """Draws of one parameter, e.g. theta of one comparison or alpha of one prompt.

    Parameters
    ----------
    idata : arviz.InferenceData
        A fit's ``idata`` (posterior ``theta`` (chain, draw, comparison), ``alpha`` (chain, draw,
        prompt)).
    var : {"theta", "alpha"}
    label : str
        The comparison (for theta) or prompt id (for alpha).

    Returns
    -------
    ndarray, shape (chain, draw)

    Raises
    ------
    SettingsError
        Unknown parameter or label, or fewer than 2 draws per chain (a MAP fit).
    """
    if var not in PARAMETERS:
        raise SettingsError(f"unknown parameter '{var}'; choose one of {', '.join(PARAMETERS)}")
    post = idata["posterior"]
    if post.sizes["draw"] < 2:
        raise SettingsError(needs_posterior("diagnostics"))
    dim = PARAMETERS[var]
    if label not in post[dim].to_numpy():
        raise SettingsError(f"unknown {dim} '{label}'")
    return post[var].sel({dim: label}).transpose("chain", "draw").to_numpy()


def _title(var: str, label: str) -> str:
    return f"{var} of {escape(label)}"


def trace_plot(idata: az.InferenceData, var: str, label: str) -> go.Figure:
    """Trace of one parameter: its value at every draw, one line per chain.

    Chains that mix well overlap as stationary noise around one level. Parameters and errors as
    :func:`parameter_draws`.
    """
    draws = parameter_draws(idata, var, label)
    fig = go.Figure(
        [go.Scatter(y=chain, mode="lines", name=f"chain {c}", line_width=1) for c, chain in enumerate(draws)]
    )
    fig.update_layout(
        title=f"Trace: {_title(var, label)}",
        xaxis_title="draw",
        yaxis_title=f"{var} (logits)" if var == "theta" else var,
    )
    return fig


def rank_plot(idata: az.InferenceData, var: str, label: str, bins: int | None = None) -> go.Figure:
    """Rank histograms per chain (Vehtari et al. 2021, as ``arviz.plot_rank``).

    All draws are ranked together (``arviz`` ranks); each chain's histogram of ranks is flat when
    the chains sample the same distribution. The dashed line is the flat count, draws / bins.

    Parameters
    ----------
    idata, var, label
        As :func:`parameter_draws`.
    bins : int, optional
        Number of rank bins; by default ``ceil(2 log2(draws)) + 1`` (Sturges' rule doubled, as arviz).

    Raises
    ------
    SettingsError
        As :func:`parameter_draws`.
    """
    draws = parameter_draws(idata, var, label)
    n_chains, n_draws = draws.shape
    ranks = compute_ranks(draws)
    bins = bins or int(np.ceil(2 * np.log2(n_draws)) + 1)
    edges = np.linspace(0, ranks.size, bins + 1)
    fig = make_subplots(rows=n_chains, cols=1, shared_xaxes=True, vertical_spacing=0.02)
    for c in range(n_chains):
        counts, _ = np.histogram(ranks[c], bins=edges)
        fig.add_trace(
            go.Bar(x=(edges[1:] + edges[:-1]) / 2, y=counts, width=np.diff(edges), name=f"chain {c}"), row=c + 1, col=1
        )
        fig.add_hline(y=n_draws / bins, line_dash="dash", row=c + 1, col=1)
        fig.update_yaxes(title_text=f"chain {c}", showticklabels=False, row=c + 1, col=1)
    fig.update_xaxes(title_text="rank (all chains)", row=n_chains, col=1)
    fig.update_layout(
        title=f"Rank histograms: {_title(var, label)}",
        showlegend=False,
        bargap=0,
        height=max(300, 110 * n_chains + 120),
    )
    return fig


def energy_plot(idata: az.InferenceData) -> go.Figure:
    """NUTS energy: the marginal energy against the energy transition distribution.

    The energy minus its mean and the change of energy between successive draws are shown as
    densities (Betancourt 2016, arXiv:1604.00695, as ``arviz.plot_energy``); when the transition
    distribution is much narrower than the marginal one, the sampler explores the posterior's tails
    slowly. The title gives the BFMI of every chain (``arviz.bfmi``; below 0.3 is a warning sign).

    Raises
    ------
    SettingsError
        A MAP fit, or a fit without ``energy`` in ``idata.sample_stats``.
    """
    if idata["posterior"].sizes["draw"] < 2:
        raise SettingsError(needs_posterior("diagnostics"))
    if "sample_stats" not in idata or "energy" not in idata["sample_stats"]:
        raise SettingsError("this fit did not record the NUTS energy (sample_stats 'energy'): no energy plot")
    energy = idata["sample_stats"]["energy"].transpose("chain", "draw").to_numpy()
    bfmi = az.bfmi(idata)
    marginal = (energy - energy.mean()).ravel()
    transition = np.diff(energy, axis=1).ravel()
    fig = go.Figure(
        [
            go.Histogram(x=marginal, histnorm="probability density", name="marginal energy", opacity=0.6),
            go.Histogram(x=transition, histnorm="probability density", name="energy transition", opacity=0.6),
        ]
    )
    fig.update_layout(
        barmode="overlay",
        xaxis_title="energy (centred)",
        yaxis_title="density",
        title="Energy: BFMI per chain " + ", ".join(f"{v:.2f}" for v in bfmi),
    )
    return fig


def ppc_plot(check: PosteriorPredictive, prompt_id: str | None = None) -> go.Figure:
    """Observed ratings per net-rating category against the replicates' counts.

    Bars: observed counts; markers with error bars: the replicates' mean count and central 94%
    interval (:mod:`lib.irt.ppc`). Over all prompts, or for ``prompt_id`` with its p-value.

    Raises
    ------
    SettingsError
        Unknown ``prompt_id``.
    """
    table = check.overall() if prompt_id is None else check.for_prompt(prompt_id)
    x = [str(c) for c in table["category"]]
    fig = go.Figure(
        [
            go.Bar(x=x, y=table["observed"], name="observed", opacity=0.7),
            go.Scatter(
                x=x,
                y=table["replicated_mean"],
                mode="markers",
                name=f"replicated (mean, {INTERVAL:.0%})",
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": table["replicated_high"] - table["replicated_mean"],
                    "arrayminus": table["replicated_mean"] - table["replicated_low"],
                },
            ),
        ]
    )
    if prompt_id is None:
        title = f"Posterior predictive check, all prompts ({check.replicated.shape[0]} replicates)"
    else:
        p = check.p_value[np.flatnonzero(check.prompt_ids == prompt_id)[0]]
        title = f"Posterior predictive check, prompt {escape(prompt_id)} (p = {p:.2f})"
    fig.update_layout(title=title, xaxis_title="net rating", yaxis_title="number of ratings", xaxis_type="category")
    return fig
