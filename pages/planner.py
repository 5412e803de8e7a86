"""Study planner: how many prompts and annotators a study needs to detect a difference, and its cost."""

from contextlib import nullcontext
from dataclasses import asdict, replace

import pandas as pd
import streamlit as st

from lib.commands.plan import default_analyses, designs, parse_counts
from lib.engine import Engine
from lib.errors import InputError
from lib.export import csv_text
from lib.irt.fit import data_key
from lib.planning.design import (
    ANALYSES,
    GRM_ANALYSES,
    NUTS_CHECK_SETTINGS,
    STRATEGIES,
    Assumptions,
    Design,
    assumptions_from_pilot,
)
from lib.planning.nuts import nuts_check
from lib.planning.power import CALIBRATION_COLUMNS, COLUMNS, PLAN_COLUMNS, RANKING_COLUMNS, cheapest, iter_plan
from lib.plots.planning import cost_table, highlight_cheapest, power_curve
from pages.common import current_fit, current_input
from pages.engine import scheduler_field
from pages.entry import served_by_app
from pages.text import escape_markdown

served_by_app()

PILOT, TYPED = "From the pilot (Data page)", "Typed in"


@st.cache_data(show_spinner="Fitting the pilot's prompt bank (MAP)…", max_entries=8)
def pilot_assumptions(key: str, fit_key: str | None, effect: float, _data, _fit) -> Assumptions:
    """:func:`lib.planning.design.assumptions_from_pilot`, cached by data and fit."""
    return assumptions_from_pilot(_data, _fit, effect=effect)


st.title("Study planner")
st.caption(
    "How many prompts and annotators does a study need to detect a difference of a given size, and what "
    "does it cost? Many studies of every design are simulated (from the pilot's fit, or from the "
    "assumptions you type) and each is analysed as you would: the project's graded response model and "
    "the usual t-test, Wilcoxon and sign tests. Power is the share of studies whose 95% interval "
    "excludes 0, with its Monte-Carlo error (Card et al. 2020; Howcroft & Rieser 2021)."
)

source = st.radio("Assumptions", [PILOT, TYPED], key="planner_source", horizontal=True)
effect = st.number_input("Smallest difference worth detecting (theta, logits)", 0.0, 5.0, 0.3, 0.05,
                         key="planner_effect")
try:
    if source == PILOT:
        data = current_input()
        if data is None:
            st.stop()
        fit = current_fit(data)
        n_comp, n_prompts = data.matrix.shape
        st.write(f"Pilot **{escape_markdown(data.source)}**: {n_comp} comparisons x {n_prompts} prompts; prompt "
                 "bank and abilities from " + ("your fit (Abilities page)" if fit is not None else "a MAP fit"))
        origin = (data_key(data.matrix), getattr(fit, "cache_key", None), float(effect))
        assumptions = pilot_assumptions(*origin, data, fit)
        bank = n_prompts
    else:
        c = st.columns(4)
        assumptions = Assumptions(
            n_systems=int(c[0].number_input("Systems", 2, 50, 2, key="planner_systems")),
            effect=float(effect),
            tie_rate=float(c[1].slider("Tie rate (equal systems)", 0.0, 0.9, 0.2, 0.05, key="planner_ties")),
            log_alpha_sd=float(c[2].number_input("SD of log alpha", 0.0, 2.0, 0.5, 0.1, key="planner_alpha_sd")),
            bank_size=int(c[3].number_input("Prompts in the bank", 1, 10_000, 200, key="planner_bank")),
        )
        assumptions.validate()
        origin, bank = repr(assumptions), assumptions.bank_size
except InputError as err:
    st.error(escape_markdown(err))
    st.stop()

st.subheader("Designs")
c = st.columns(4)
prompts_text = c[0].text_input("Prompts per comparison", ", ".join(str(k) for k in (10, 25, 50) if k <= bank)
                               or str(bank), key="planner_prompts")
annotators_text = c[1].text_input("Annotators per item", "1, 3", key="planner_annotators")
strategies = c[2].multiselect("Prompt choice", list(STRATEGIES), list(STRATEGIES), key="planner_strategies",
                              help="; ".join(f"{k}: {v}" for k, v in STRATEGIES.items()))
applicable = default_analyses(assumptions)
analyses = c[3].multiselect("Analyses", applicable, [a for a in ("grm_bank", "t_test", "sign_test") if a in applicable],
                            key="planner_analyses", help="; ".join(f"{a}: {ANALYSES[a].help}" for a in applicable))
c = st.columns(5)
replicates = int(c[0].number_input("Simulated studies per design", 2, 5000, 100, key="planner_replicates"))
seed = int(c[1].number_input("Seed", 0, 2**31 - 1, 0, key="planner_seed"))
target = float(c[2].number_input("Target power", 0.05, 0.99, 0.8, 0.05, key="planner_target"))
seconds = float(c[3].number_input("Seconds per judgment", 0.0, 3600.0, 30.0, 5.0, key="planner_seconds",
                                  help="e.g. the effort medians of the Human cost page"))
rate = float(c[4].number_input("Cost per hour", 0.0, 10_000.0, 15.0, 1.0, key="planner_rate"))
scheduler = scheduler_field("planner_scheduler")

try:
    grid = designs(parse_counts(prompts_text, "Prompts per comparison"),
                   parse_counts(annotators_text, "Annotators per item"), strategies, analyses)
    if not grid:
        raise InputError("choose at least one prompt choice and one analysis")
    for design in grid:
        design.validate(assumptions)
except InputError as err:
    st.error(escape_markdown(err))
    st.stop()

settings = (origin, tuple(grid), replicates, seed, seconds, rate, scheduler)
if st.button("Run plan", type="primary", key="planner_run",
             help=f"{len(grid)} designs x {replicates} simulated studies, on a Dask cluster"):
    # Rows land in the session as each design size finishes: a stopped plan keeps them.
    state = st.session_state["planner_result"] = {"settings": settings, "parts": [], "done": False}
    bar = st.progress(0.0, text="starting the Dask engine")

    def report(done: int, total: int) -> None:
        bar.progress(done / total, text=f"{done} of {total} simulated studies")

    try:
        with Engine(scheduler) as engine:
            for part in iter_plan(assumptions, grid, replicates=replicates, seed=seed, engine=engine,
                                  progress=report, seconds_per_judgment=seconds, cost_per_hour=rate):
                state["parts"].append(part)
        state["done"] = True
    except InputError as err:
        st.error(escape_markdown(err))
        st.stop()
    bar.empty()

result = st.session_state.get("planner_result")
if result is None or result["settings"] != settings or not result["parts"]:
    st.info("Press **Run plan** to simulate the designs.")
    st.stop()
# Design sizes finish in any order; show them in the grid's.
grid_order = pd.DataFrame([asdict(d) for d in grid])
plan_df = grid_order.merge(pd.concat(result["parts"]), on=list(grid_order.columns))[PLAN_COLUMNS]
if not result["done"]:
    st.warning(f"The plan was stopped: showing the {len(plan_df)} designs that finished.")

best = cheapest(plan_df, target)
for x in ("prompts", "annotators"):
    st.plotly_chart(power_curve(plan_df, x, target), key=f"planner_curve_{x}")
st.subheader("Is the true best system ranked first?")
st.dataframe(plan_df[RANKING_COLUMNS], hide_index=True, key="planner_ranking")
st.caption("best_first: share of simulated studies whose estimated best system is the true best (ties in the "
           "estimate split evenly; empty when no system is truly best), with its Monte-Carlo SE; kendall_tau: "
           "Kendall's tau of the estimated to the true skills.")
calibration = plan_df[plan_df["critical_z"].notna()][CALIBRATION_COLUMNS]
if len(calibration):
    st.caption(f"grm_map is calibrated by simulation under the null: a difference is detected when |EAP / SD| "
               "exceeds its 95th percentile in the same simulated studies with the differences of the stated size "
               f"set to 0 ({calibration['critical_z'].min():.2f} to {calibration['critical_z'].max():.2f}, not "
               "1.96), and its intervals are widened by the same "
               f"factor ({calibration['calibration_factor'].min():.2f}x to "
               f"{calibration['calibration_factor'].max():.2f}x). Its nominal 95% intervals excluded 0 in up to "
               f"{calibration['nominal_false_detection'].max():.0%} of those null comparisons.")
st.subheader(f"Cheapest design reaching power {target:g}")
st.dataframe(best, hide_index=True, key="planner_cheapest")
st.caption("saving: the cost of the cheapest random-prompt design of the same analysis minus this one's "
           "(IRT-informed prompts at equal target power); empty where either misses the target.")
st.subheader("Cost of every design")
st.dataframe(highlight_cheapest(cost_table(plan_df[COLUMNS], best)), hide_index=True, key="planner_costs")
c = st.columns(4)
c[0].download_button("power.csv", csv_text(plan_df[COLUMNS]), "power.csv", mime="text/csv", key="planner_dl_power")
c[1].download_button("cheapest.csv", csv_text(best), "cheapest.csv", mime="text/csv", key="planner_dl_cheapest")
c[2].download_button("ranking.csv", csv_text(plan_df[RANKING_COLUMNS]), "ranking.csv", mime="text/csv",
                     key="planner_dl_ranking")
if len(calibration):
    c[3].download_button("calibration.csv", csv_text(calibration), "calibration.csv", mime="text/csv",
                         key="planner_dl_calibration")

checked = [a for a in analyses if a in GRM_ANALYSES]
if not checked:
    st.stop()
st.subheader("Check against NUTS")
st.caption("The plan's GRM analyses are fast approximations. Fit the GRM by NUTS (numpyro, 2 short chains) on the "
           "first simulated studies of one design and compare, comparison by comparison, the estimates, 95% "
           "intervals and whether they exclude 0 (grm_map's nominal interval, before calibration).")
sizes = list(dict.fromkeys((d.prompts, d.annotators, d.strategy) for d in grid))
c = st.columns(3)
size = c[0].selectbox("Design", sizes, format_func=lambda s: f"{s[0]} prompts x {s[1]} annotators, {s[2]}",
                      key="planner_nuts_design")
studies = int(c[1].number_input("Studies", 1, 20, 3, key="planner_nuts_studies"))
draws = int(c[2].number_input("Draws per chain", 50, 5000, NUTS_CHECK_SETTINGS.draws, 50, key="planner_nuts_draws"))
nuts_settings = (settings, size, studies, draws)
if st.button("Run NUTS check", key="planner_nuts_run",
             help=f"{studies} NUTS fits of the GRM (on the Dask scheduler if one is given); each compiles first"):
    fit_settings = replace(NUTS_CHECK_SETTINGS, draws=draws, tune=draws, seed=seed)
    nuts_bar = st.progress(0.0, text=f"{studies} NUTS fits (each compiles its model)")

    def nuts_report(done: int, total: int) -> None:
        nuts_bar.progress(done / total, text=f"{done} of {total} simulated studies fitted by NUTS")

    try:
        # an existing cluster, else here: one fit after another was faster than the embedded cluster's two at once
        with Engine(scheduler) if scheduler else nullcontext() as engine:
            found = nuts_check(assumptions, Design(*size), studies, seed=seed, settings=fit_settings,
                               analyses=tuple(checked), engine=engine, progress=nuts_report)
    except InputError as err:
        st.error(escape_markdown(err))
        st.stop()
    nuts_bar.empty()
    st.session_state["planner_nuts"] = {"settings": nuts_settings, "table": found}
nuts = st.session_state.get("planner_nuts")
if nuts is not None and nuts["settings"] == nuts_settings:
    table = nuts["table"]
    st.write(f"The intervals agree on excluding 0 in {table['agree'].mean():.0%} of {len(table)} comparisons; "
             f"NUTS R-hat up to {table['rhat_max'].max():.3f}, bulk ESS at least {table['ess_bulk_min'].min():.0f}, "
             f"{int(table.groupby('replicate')['divergences'].first().sum())} divergent transitions.")
    st.dataframe(table, hide_index=True, key="planner_nuts_table")
    st.download_button("nuts_check.csv", csv_text(table), "nuts_check.csv", mime="text/csv", key="planner_dl_nuts")
