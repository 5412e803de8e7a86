"""Diagnostics: convergence of a NUTS fit and posterior predictive checks, with an HTML report."""

import pandas as pd
import streamlit as st

from lib.errors import SettingsError
from lib.inference.convergence import ESS_MIN, RHAT_MAX
from lib.inference.diagnostics import NOT_CONVERGED
from lib.inference.settings import gives_posterior, posterior_samplers
from lib.irt.ppc import P_EXTREME, posterior_predictive
from lib.irt.summary import ability_table, prompt_table
from lib.plots.diagnostics import PARAMETERS, energy_plot, ppc_plot, rank_plot, trace_plot
from lib.plots.irt import ability_forest
from lib.report import build_report, convergence_table, data_summary
from ui.common import current_fit, current_input, current_ranking
from ui.navigation import serve_through_app
from ui.tables import show_table
from ui.text import escape_markdown

serve_through_app()  # opened by its URL on a fresh server, the page runs alone: app.py serves it

PARAMETER_NAMES = {"theta": "theta (ability of a comparison)", "alpha": "alpha (discrimination of a prompt)"}


@st.cache_data(max_entries=4, show_spinner="Computing R-hat and ESS…")
def cached_convergence(key: str, _idata):
    return convergence_table(_idata)


@st.cache_data(max_entries=4, show_spinner="Replicating the net ratings…")
def cached_ppc(key: str, _fit, _rm):
    return posterior_predictive(_fit, _rm)


st.title("Diagnostics")
st.caption(
    "Can the fit be trusted? Whether the NUTS chains agree (R-hat, ESS, trace, rank "
    "histograms, energy) and whether the model reproduces the net ratings (posterior "
    "predictive check)."
)
data = current_input()
fit = current_fit(data) if data is not None else None
if data is not None and fit is None:
    st.info("No fit yet: fit the model with a NUTS sampler on the **Abilities** page first.")
elif fit is not None and not gives_posterior(fit.diagnostics.sampler):
    st.info(
        "Diagnostics need a NUTS fit: the MAP preview is a single point, with no draws to "
        f"check. Choose {posterior_samplers()} on the **Abilities** page and fit again."
    )
elif fit is not None:
    rm, s = data.matrix, fit.settings
    st.caption(
        f"Fit with {s.sampler}, {s.cutpoints} cutpoints, {s.chains} chains x {s.draws} "
        f"draws ({s.tune} tuning), seed {s.seed}."
    )
    for w in fit.diagnostics.warnings:
        (st.error if w.startswith(NOT_CONVERGED) else st.warning)(escape_markdown(w))

    st.header("Convergence")
    c = st.columns(2)
    var = c[0].selectbox("Parameter", list(PARAMETERS), format_func=PARAMETER_NAMES.get, key="diag_var")
    dim = PARAMETERS[var]
    label = c[1].selectbox(dim.capitalize(), fit.idata.posterior[dim].to_numpy().tolist(), key=f"diag_label_{var}")
    figures = {"Trace": trace_plot(fit.idata, var, label), "Rank histograms": rank_plot(fit.idata, var, label)}
    c = st.columns(2)
    c[0].plotly_chart(figures["Trace"], key="diag_trace")
    c[1].plotly_chart(figures["Rank histograms"], key="diag_rank")
    try:
        figures["Energy"] = energy_plot(fit.idata)
        st.plotly_chart(figures["Energy"], key="diag_energy")
    except SettingsError as err:
        st.caption(escape_markdown(err))
    convergence = cached_convergence(fit.cache_key, fit.idata)
    st.caption(
        "R-hat, bulk and tail ESS and Monte Carlo SE of every parameter (arviz), largest "
        f"R-hat first: R-hat above {RHAT_MAX} or ESS below {ESS_MIN} call for longer chains."
    )
    show_table(convergence, key="diag_convergence")

    st.header("Posterior predictive check")
    check = cached_ppc(fit.cache_key, fit, rm)
    ppp = check.prompt_table()
    ppp = ppp.iloc[(ppp["p_value"] - 0.5).abs().sort_values(ascending=False, na_position="last").index]
    st.caption(
        f"{check.replicated.shape[0]} data sets replicated from the posterior at the rated "
        "cells. p-value: share of replicates whose mean net rating exceeds the observed one "
        f"(ties count half); below {P_EXTREME} or above {1 - P_EXTREME} the model misfits "
        "the prompt (e.g. a position bias, or a prompt read the other way round)."
    )
    fits, verdict = check.verdict()
    (st.success if fits else st.error)(escape_markdown(verdict))
    if ppp["misfit"].any():
        st.warning(f"{int(ppp['misfit'].sum())} of {len(ppp)} prompts misfit: see the table, most extreme first.")
    c = st.columns(2)
    figures["Posterior predictive check, all prompts"] = ppc_plot(check)
    c[0].plotly_chart(figures["Posterior predictive check, all prompts"], key="diag_ppc")
    pid = c[1].selectbox("Prompt (most extreme p-value first)", ppp["prompt_id"].tolist(), key="diag_ppc_prompt")
    figures["Posterior predictive check, one prompt"] = ppc_plot(check, pid)
    c[1].plotly_chart(figures["Posterior predictive check, one prompt"], key="diag_ppc_one")
    show_table(ppp, key="diag_ppc_table")

    st.header("Report")
    abilities = ability_table(fit, rm)
    figures["Ability per comparison"] = ability_forest(abilities)
    tables = {
        "Abilities": abilities,
        "Prompts": prompt_table(fit, rm),
        "Convergence": convergence,
        "Posterior predictive check: verdict": pd.DataFrame({"fits": [fits], "verdict": [verdict]}),
        "Posterior predictive check by category": check.category_table(),
        "Posterior predictive p-values": ppp,
    }
    st.caption(
        "One HTML file with the data summary, fit settings, diagnostics, these figures "
        "(interactive) and tables; it opens offline in any browser."
    )
    st.download_button(
        "report.html",
        lambda: build_report(data_summary(data), fit, tables, figures, ranking=current_ranking(data)),
        "report.html",
        mime="text/html",
        on_click="ignore",
        key="diag_report",
    )
