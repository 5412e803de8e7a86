"""Study planner: how many prompts and annotators a study needs to detect a difference, and its cost."""

from contextlib import nullcontext
from dataclasses import replace

import pandas as pd
import streamlit as st

from lib.engine.cluster import Engine
from lib.errors import InputError, PlanStopped
from lib.io.export import csv_text
from lib.planning.check import disagreements, simulator_check
from lib.planning.choice import CHEAPEST_COLUMNS, advice, cheapest, validity_notes
from lib.planning.design import (
    ANALYSES,
    GRM_ANALYSES,
    NUTS_CHECK_SETTINGS,
    PLANNED_STRATEGIES,
    PRESETS,
    RESPONSES,
    Assumptions,
    Design,
    PilotBank,
    fit_pilot,
    pilot_assumptions,
    pilot_key,
    pilot_summary,
)
from lib.planning.grid import PLAN_DEFAULTS, applicable_analyses, default_analyses, designs, pairs_read, parse_counts
from lib.planning.nuts import nuts_check
from lib.planning.power import (
    CALIBRATION_COLUMNS,
    COLUMNS,
    PAIR_COLUMNS,
    RANKING_COLUMNS,
    cached_parts,
    iter_plan,
    order_parts,
)
from lib.plots.planning import cost_table, highlight_cheapest, power_curve
from ui.common import current_input, sync_url
from ui.engine import scheduler_field
from ui.judges import planner_section
from ui.keys import PLANNER_BEST, PLANNER_NUTS, PLANNER_RESULT
from ui.navigation import serve_through_app
from ui.tables import show_table
from ui.text import escape_markdown

serve_through_app()  # opened by its URL on a fresh server, the page runs alone: app.py serves it

PILOT, TYPED = "From the pilot (Data page)", "Typed in"
# Every plan setting is bound to the URL: a reload (a new session, whose widgets start from their defaults)
# or a shared link opens the same plan, shown from the plan cache when it was run (issue 29).
URL = "query-params"
D = PLAN_DEFAULTS


@st.cache_data(show_spinner="Fitting the pilot's judgments (MAP)…", max_entries=8)
def cached_pilot(key: str, _data) -> PilotBank:
    """:func:`lib.planning.design.fit_pilot` (the command's rule), cached by data."""
    return fit_pilot(_data)


@st.cache_data(show_spinner="Checking the simulator against the pilot…", max_entries=8)
def cached_check(key: str, item_sd: float, _pilot: PilotBank) -> pd.DataFrame:
    """:func:`lib.planning.check.simulator_check` of the plan's pilot (its truth and prompt effect)."""
    return simulator_check(_pilot, item_sd=item_sd)


st.title("Study planner")
st.caption(
    "How many prompts and annotators does a study need to detect a difference of a given size, and what "
    "does it cost? Many studies of every design are simulated (from the pilot's fit, or from the "
    "assumptions you type) and each is analysed as you would: the project's graded response model, "
    "the usual t-test and sign test, and mixed models. Power is the share of studies each analysis detects at "
    "its usual 5% level, with its Monte-Carlo error; beside it, how often it declares a difference that is not "
    "there under the design (Card et al. 2020; Howcroft & Rieser 2021). The settings are kept in the page's "
    "address: a reload shows the same plan."
)
# Before the planner's own steps, which stop the page until a plan is run; shown only with a judge file.
planner_section()

source = st.radio("Assumptions", [PILOT, TYPED], key="planner_source", bind=URL, horizontal=True)
c = st.columns(3)
effect = c[0].number_input(
    "Smallest difference worth detecting (theta, logits)",
    0.0,
    5.0,
    Assumptions.effect,
    0.05,
    key="planner_effect",
    bind=URL,
)
item_sd = c[1].number_input(
    "SD of the prompt x comparison effect (logits)",
    0.0,
    5.0,
    None,
    0.1,
    key="planner_item_sd",
    bind=URL,
    placeholder="the pilot's estimate, or 0",
    help="On each prompt a pair differs by theta + e, e ~ N(0, SD), shared by the prompt's "
    "annotators: more annotators per prompt do not average it away (Card et al. 2020). "
    "Empty: estimated from the pilot's votes, else 0 (or the preset's).",
)
annotator_sd = c[2].number_input(
    "SD of the annotator x comparison effect (logits)",
    0.0,
    5.0,
    None,
    0.1,
    key="planner_annotator_sd",
    bind=URL,
    placeholder="the pilot's estimate, or 0",
    help="Each annotator prefers B by a ~ N(0, SD) on every prompt; a design's "
    "annotators judge all its prompts, so few annotators do not average it away. With "
    "it every analysis is calibrated by simulation under the null. Empty: estimated "
    "from the pilot's votes, else 0 (or the preset's).",
)
given = {k: float(v) for k, v in (("item_sd", item_sd), ("annotator_sd", annotator_sd)) if v is not None}
try:
    if source == PILOT:
        data = current_input()
        if data is None:
            st.stop()
        sync_url()  # the data set is in the URL: a reload plans from the same pilot, never the default data
        n_comp, n_prompts = data.matrix.shape
        st.write(
            f"Planning from the pilot **{escape_markdown(data.source)}**"
            + (f" (criterion {escape_markdown(data.criterion)})" if data.criterion else "")
            + f": {n_comp} comparisons x {n_prompts} prompts, chosen on the **Data** page."
        )
        pilot = cached_pilot(pilot_key(data), data)
        st.caption(
            escape_markdown(pilot_summary(pilot)) + " The fit of the Abilities page is not used: it fits "
            "the net ratings of whole cells. The command line (`plan --input`) fits the same way."
        )
        names = [f"{b} vs {a}" for a, b in pilot.pair_names()]
        by_name = dict(zip(names, pilot.pair_names(), strict=True))
        wanted = [n for n, t in zip(names, abs(pilot.theta) >= effect, strict=True) if t]
        chosen = st.multiselect(
            "Pairs the study must detect (default: every pair whose pilot difference is at least the effect)",
            names,
            wanted,
            key="planner_pairs",
            bind=URL,
        )
        assumptions = pilot_assumptions(
            pilot, effect=float(effect), **given, pairs=tuple(by_name[n] for n in chosen) if chosen != wanted else None
        )
        st.caption(
            escape_markdown(pilot.components.summary()) + f". Simulated with SDs {assumptions.item_sd:.2f} "
            f"(prompt x comparison) and {assumptions.annotator_sd:.2f} (annotator x comparison)."
        )
        origin, bank = (pilot_key(data), float(effect), tuple(given.items()), tuple(chosen)), n_prompts
        check = cached_check(pilot_key(data) + repr(given), assumptions.item_sd, assumptions.pilot)
        st.subheader("Does the simulator look like the pilot?")
        differ = disagreements(check)
        if differ:
            st.warning(
                "The simulated data do not look like the pilot on "
                + "; ".join(escape_markdown(d) for d in differ)
                + ". Powers below assume the simulator's model; read them with care."
            )
        else:
            st.success(
                f"All {len(check)} statistics of the pilot lie within what data sets simulated from its fit "
                "give (predictive p-value at least 0.01)."
            )
        show_table(check, key="planner_check")
        st.download_button(
            "simulator_check.csv", csv_text(check), "simulator_check.csv", mime="text/csv", key="planner_dl_check"
        )
    else:
        c = st.columns(2)
        preset = c[0].selectbox(
            "Variance components",
            [None, *PRESETS],
            key="planner_preset",
            bind=URL,
            format_func=lambda k: "as typed above (0 when empty)" if k is None else k,
            help="; ".join(f"{k}: {v.help}" for k, v in PRESETS.items()),
        )
        response = c[1].selectbox(
            "Response model",
            list(RESPONSES),
            key="planner_response",
            bind=URL,
            disabled=preset is not None,
            help="; ".join(f"{k}: {v}" for k, v in RESPONSES.items()) + ". A preset uses the normal model.",
        )
        if preset is not None:
            given = {"item_sd": PRESETS[preset].item_sd, "annotator_sd": PRESETS[preset].annotator_sd, **given}
            st.caption(
                f"Preset {preset}: normal response model; Card et al.'s coefficient beta is an effect of "
                f"sqrt(2) beta / {PRESETS[preset].rating_sd:g}."
            )
        c = st.columns(4)
        assumptions = Assumptions(
            n_systems=int(c[0].number_input("Systems", 2, 50, Assumptions.n_systems, key="planner_systems", bind=URL)),
            effect=float(effect),
            response="normal" if preset is not None else response,
            **given,
            tie_rate=float(
                c[1].slider(
                    "Tie rate (equal systems)", 0.0, 0.9, Assumptions.tie_rate, 0.05, key="planner_ties", bind=URL
                )
            ),
            log_alpha_sd=float(
                c[2].number_input(
                    "SD of log alpha", 0.0, 2.0, Assumptions.log_alpha_sd, 0.1, key="planner_alpha_sd", bind=URL
                )
            ),
            bank_size=int(
                c[3].number_input("Prompts in the bank", 1, 10_000, Assumptions.bank_size, key="planner_bank", bind=URL)
            ),
        )
        assumptions.validate()
        origin, bank = repr(assumptions), assumptions.bank_size
    st.caption(f"Power is read on {escape_markdown(pairs_read(assumptions))}.")
except InputError as err:
    st.error(escape_markdown(err))
    st.stop()

st.subheader("Designs")
c = st.columns(4)
prompts_text = c[0].text_input(
    "Prompts per comparison", ", ".join(map(str, D.prompts_for(bank))), key="planner_prompts", bind=URL
)
annotators_text = c[1].text_input(
    "Annotators per item", ", ".join(map(str, D.annotators)), key="planner_annotators", bind=URL
)
strategies = c[2].multiselect(
    "Prompt choice",
    list(PLANNED_STRATEGIES),
    D.strategies(),
    key="planner_strategies",
    bind=URL,
    help="; ".join(f"{k}: {v}" for k, v in PLANNED_STRATEGIES.items()),
)
applicable = applicable_analyses(assumptions)
analyses = c[3].multiselect(
    "Analyses",
    applicable,
    default_analyses(assumptions),
    key="planner_analyses",
    bind=URL,
    help="; ".join(f"{a}: {ANALYSES[a].help}" for a in applicable),
)
c = st.columns(5)
replicates = int(
    c[0].number_input("Simulated studies per design", 2, 5000, D.replicates, key="planner_replicates", bind=URL)
)
seed = int(c[1].number_input("Seed", 0, 2**31 - 1, D.seed, key="planner_seed", bind=URL))
target = float(c[2].number_input("Target power", 0.05, 0.99, D.target_power, 0.05, key="planner_target", bind=URL))
seconds = float(
    c[3].number_input(
        "Seconds per judgment",
        0.0,
        3600.0,
        D.seconds_per_judgment,
        5.0,
        key="planner_seconds",
        bind=URL,
        help="e.g. the effort medians of the Human cost page",
    )
)
rate = float(c[4].number_input("Cost per hour", 0.0, 10_000.0, D.cost_per_hour, 1.0, key="planner_rate", bind=URL))
scheduler = scheduler_field("planner_scheduler")

try:
    grid = designs(
        parse_counts(prompts_text, "Prompts per comparison"),
        parse_counts(annotators_text, "Annotators per item"),
        strategies,
        analyses,
    )
    if not grid:
        raise InputError("choose at least one prompt choice and one analysis")
    for design in grid:
        design.validate(assumptions)
except InputError as err:
    st.error(escape_markdown(err))
    st.stop()

settings = (origin, tuple(grid), replicates, seed, seconds, rate, scheduler)
if st.button(
    "Run plan",
    type="primary",
    key="planner_run",
    help=f"{len(grid)} designs x {replicates} simulated studies, on a Dask cluster",
):
    # Rows land in the session as each design size finishes: a stopped plan keeps them.
    state = st.session_state[PLANNER_RESULT] = {"settings": settings, "parts": [], "done": False}
    bar = st.progress(0.0, text="starting the Dask engine")

    def report(done: int, total: int) -> None:
        bar.progress(done / total, text=f"{done} of {total} simulated studies")

    try:
        with Engine(scheduler) as engine:
            for part in iter_plan(
                assumptions,
                grid,
                replicates=replicates,
                seed=seed,
                engine=engine,
                progress=report,
                seconds_per_judgment=seconds,
                cost_per_hour=rate,
            ):
                state["parts"].append(part)
        state["done"] = True
    except PlanStopped as err:  # the finished design sizes stay in the session (and the cache)
        st.error(escape_markdown(err))
    except InputError as err:
        st.error(escape_markdown(err))
        st.stop()
    bar.empty()

result = st.session_state.get(PLANNER_RESULT)
if result is None or result["settings"] != settings or not result["parts"]:
    # A plan run before with these settings (before a reload: the settings are in the URL) is in the cache.
    kept = cached_parts(
        assumptions, grid, replicates=replicates, seed=seed, seconds_per_judgment=seconds, cost_per_hour=rate
    )
    if kept is None:
        st.info("Press **Run plan** to simulate the designs.")
        st.stop()
    result = st.session_state[PLANNER_RESULT] = {"settings": settings, "parts": kept, "done": True}
    st.caption("This plan was run before with these settings: shown from the plan cache.")
# Design sizes finish in any order; show them in the grid's.
plan_df, pairs_df = order_parts(result["parts"], grid)
if not result["done"]:
    st.warning(f"The plan was stopped: showing the {len(plan_df)} designs that finished.")

best = cheapest(plan_df, target)
# the Studies page's default annotators per item: a design at an analysis's usual 5% level only
st.session_state[PLANNER_BEST] = best[best["critical_z"].isna()]
if float(effect) == 0:
    st.info("Effect 0: there is no difference to detect, so power is each analysis's false-detection rate.")
for note in validity_notes(plan_df):
    st.warning(escape_markdown(note))
binding = best[best["reached"]]
if len(binding):
    st.info(
        "The cheapest design of each analysis reaches the target power for every pair; the pair that binds "
        "(the weakest there): "
        + "; ".join(
            f"{escape_markdown(r.analysis)}, {escape_markdown(r.strategy)}: **{escape_markdown(r.binding_pair)}**"
            for r in binding.itertuples()
        )
    )
for x in ("prompts", "annotators"):
    st.plotly_chart(power_curve(plan_df, x, target), key=f"planner_curve_{x}")
st.subheader(f"Cheapest design reaching power {target:g}")
for note in advice(best, plan_df, target):
    st.warning(escape_markdown(note))
show_table(best[CHEAPEST_COLUMNS], key="planner_cheapest")
st.caption(
    "Chosen at each analysis's usual 5% level where it holds for the design (false_detection not credibly above 6%), "
    "else, where no analysis holds it, at the threshold critical_z calibrated under the assumptions (declare a "
    "difference only when |z| exceeds it). saving: the cost of the cheapest random-prompt design of the same "
    "analysis minus this one's. prompts_needed, annotators_needed: where nothing reaches the target, what would, "
    "extrapolated from the power curve at the grid's most annotators (or prompts); inf: no number does."
)
st.subheader("Does each analysis hold its 5% level?")
show_table(
    plan_df[
        ["prompts", "annotators", "strategy", "analysis", "power", "false_detection", "false_detection_mc_se", "valid"]
    ],
    key="planner_validity",
)
st.caption(
    "false_detection: share of the same simulated studies with no true difference (the pairs of interest at 0) "
    "in which the analysis declares one at its usual 5% level, with its Monte-Carlo SE; valid: it does not "
    "exceed 6% beyond Monte-Carlo error. An invalid analysis is never chosen at that level. calibration.csv "
    "gives the threshold that would hold 5% under these assumptions, and the power at it."
)
st.subheader("Is the true best system ranked first?")
show_table(plan_df[RANKING_COLUMNS], key="planner_ranking")
st.caption(
    "best_first: share of simulated studies whose estimated best system is the true best (ties in the "
    "estimate split evenly; empty when no system is truly best), with its Monte-Carlo SE; kendall_tau: "
    "Kendall's tau of the estimated to the true skills."
)
st.subheader("Power of every pair")
show_table(pairs_df, key="planner_pairs_table")
st.caption(
    "effect: the pair's true difference in the simulation (B minus A, logits of one judgment); power.csv's "
    "power is the smallest over these pairs at each design (with a pilot), binding_pair names it."
)
st.subheader("Cost of every design")
show_table(highlight_cheapest(cost_table(plan_df[COLUMNS], best)), key="planner_costs")
c = st.columns(5)
c[0].download_button("power.csv", csv_text(plan_df[COLUMNS]), "power.csv", mime="text/csv", key="planner_dl_power")
c[1].download_button("cheapest.csv", csv_text(best), "cheapest.csv", mime="text/csv", key="planner_dl_cheapest")
c[2].download_button(
    "ranking.csv", csv_text(plan_df[RANKING_COLUMNS]), "ranking.csv", mime="text/csv", key="planner_dl_ranking"
)
c[3].download_button(
    "power_pairs.csv", csv_text(pairs_df[PAIR_COLUMNS]), "power_pairs.csv", mime="text/csv", key="planner_dl_pairs"
)
c[4].download_button(
    "calibration.csv",
    csv_text(plan_df[CALIBRATION_COLUMNS]),
    "calibration.csv",
    mime="text/csv",
    key="planner_dl_calibration",
)

checked = [a for a in analyses if a in GRM_ANALYSES]
if not checked:
    st.stop()
st.subheader("Check against NUTS")
st.caption(
    "The plan's GRM analyses are fast approximations. Fit the GRM by NUTS (numpyro, 2 short chains) on the "
    "first simulated studies of one design and compare, comparison by comparison, the estimates, 95% "
    "intervals and whether they exclude 0 (grm_map's nominal interval, before calibration)."
)
sizes = list(dict.fromkeys((d.prompts, d.annotators, d.strategy) for d in grid))
c = st.columns(3)
size = c[0].selectbox(
    "Design", sizes, format_func=lambda s: f"{s[0]} prompts x {s[1]} annotators, {s[2]}", key="planner_nuts_design"
)
studies = int(c[1].number_input("Studies", 1, 20, 3, key="planner_nuts_studies"))
draws = int(c[2].number_input("Draws per chain", 50, 5000, NUTS_CHECK_SETTINGS.draws, 50, key="planner_nuts_draws"))
nuts_settings = (settings, size, studies, draws)
if st.button(
    "Run NUTS check",
    key="planner_nuts_run",
    help=f"{studies} NUTS fits of the GRM (on the Dask scheduler if one is given); each compiles first",
):
    fit_settings = replace(NUTS_CHECK_SETTINGS, draws=draws, tune=draws, seed=seed)
    nuts_bar = st.progress(0.0, text=f"{studies} NUTS fits (each compiles its model)")

    def nuts_report(done: int, total: int) -> None:
        nuts_bar.progress(done / total, text=f"{done} of {total} simulated studies fitted by NUTS")

    try:
        # an existing cluster, else here: one fit after another was faster than the embedded cluster's two at once
        with Engine(scheduler) if scheduler else nullcontext() as engine:
            found = nuts_check(
                assumptions,
                Design(*size),
                studies,
                seed=seed,
                settings=fit_settings,
                analyses=tuple(checked),
                engine=engine,
                progress=nuts_report,
            )
    except InputError as err:
        st.error(escape_markdown(err))
        st.stop()
    nuts_bar.empty()
    st.session_state[PLANNER_NUTS] = {"settings": nuts_settings, "table": found}
nuts = st.session_state.get(PLANNER_NUTS)
if nuts is not None and nuts["settings"] == nuts_settings:
    table = nuts["table"]
    st.write(
        f"The intervals agree on excluding 0 in {table['agree'].mean():.0%} of {len(table)} comparisons; "
        f"NUTS R-hat up to {table['rhat_max'].max():.3f}, bulk ESS at least {table['ess_bulk_min'].min():.0f}, "
        f"{int(table.groupby('replicate')['divergences'].first().sum())} divergent transitions."
    )
    show_table(table, key="planner_nuts_table")
    st.download_button("nuts_check.csv", csv_text(table), "nuts_check.csv", mime="text/csv", key="planner_dl_nuts")
