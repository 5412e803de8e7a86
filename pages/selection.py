"""Prompt selection: how few prompts still tell two systems apart (Sedoc & Ungar 2020, Fig. 2)."""

from contextlib import nullcontext

import numpy as np
import pandas as pd
import streamlit as st

from lib.engine.cluster import Engine
from lib.errors import DesignError, InputError
from lib.io.export import csv_text
from lib.irt.fit import data_key
from lib.irt.settings import FULL_MODE_SETTINGS, FitSettings, default_cutpoints
from lib.plots.selection import se_curve, what_if_chart
from lib.selection.adaptive import what_if
from lib.selection.analysis import run
from lib.selection.curve import default_k_grid, parse_k_grid
from lib.selection.settings import DEFAULT_RANDOM_DRAWS, DEFAULT_TARGET_SE, MODES, THETA_SCALE
from lib.selection.strategies import STRATEGIES, check_strategies
from ui.common import current_input
from ui.engine import scheduler_field
from ui.keys import SELECTION_FULL_DONE
from ui.navigation import serve_through_app
from ui.tables import show_table
from ui.text import escape_markdown

serve_through_app()  # opened by its URL on a fresh server, the page runs alone: app.py serves it


@st.cache_data(show_spinner=False, max_entries=16)
def cached_run(
    key: str,
    mode: str,
    cutpoints: str,
    strategies: tuple,
    ks: tuple,
    n_random: int,
    theta0: float,
    _rm,
    _scheduler: str | None = None,
):
    """:func:`lib.selection.analysis.run`, cached by data (``key``) and settings (the bar lives
    inside so that cache hits replay nothing but its removal). The full mode's held-out comparisons
    run on a Dask cluster (``_scheduler``, else embedded): the same result wherever they run."""
    bar = st.progress(0.0, text="calibrating")

    def report(fraction: float, message: str) -> None:
        bar.progress(min(fraction, 1.0), text=message)

    with Engine(_scheduler) if mode == "full" else nullcontext() as engine:
        result = run(
            _rm,
            strategies,
            mode=mode,
            settings=FitSettings(cutpoints=cutpoints, **FULL_MODE_SETTINGS),
            k_grid=ks,
            n_random=n_random,
            theta0=theta0,
            progress=report,
            engine=engine,
        )
    bar.empty()
    return result


st.title("Prompt selection")
st.caption(
    "How few prompts can be judged and still tell two systems apart? For each comparison the prompts "
    "are calibrated on the other comparisons, each strategy picks k prompts, and the held-out "
    "ability is estimated from its own net ratings on them (EAP): its posterior SD is the SE "
    "(Sedoc & Ungar 2020, sec. 6.2, Fig. 2). Choose the data set on the **Data** page; "
    "*HANNA story ratings* (55 comparisons x 96 prompts) is closest to the paper's design."
)
data = current_input()
if data is None:
    st.stop()
rm = data.matrix
n_comp, n_prompts = rm.shape
merged = rm.groups["prompt_id"].nunique() - n_prompts
criterion = f" ({escape_markdown(data.criterion)})" if data.criterion else ""
st.write(
    f"**{escape_markdown(data.source)}**{criterion}: {n_comp} comparisons x {n_prompts} prompts"
    + (f" ({merged} redundant prompts merged into their groups)" if merged > 0 else "")
)
cutpoints = default_cutpoints(data.fmt)

with st.expander("Settings", expanded=True):
    st.markdown("**Strategies**")
    c = st.columns(3)
    chosen = [
        name
        for n, (name, strategy) in enumerate(STRATEGIES.items())
        if c[n % 3].checkbox(strategy.label, True, key=f"selection_use_{name}")
    ]
    c = st.columns([3, 2, 2])
    ks_text = c[0].text_input("k grid (prompts)", ", ".join(map(str, default_k_grid(n_prompts))), key="selection_ks")
    mode = c[1].radio(
        "Calibration",
        list(MODES),
        key="selection_mode",
        horizontal=True,
        help=" ".join(f"{name}: {text}." for name, text in MODES.items()),
    )
    target = c[2].number_input(
        "Target SE of theta",
        0.01,
        5.0,
        DEFAULT_TARGET_SE,
        0.01,
        key="selection_target",
        help=f"The same in both modes. Default {DEFAULT_TARGET_SE}: with theta's N(0, 1) prior a "
        "reliability of 0.91, the usual stopping rule of adaptive testing. For a 95% interval "
        "of width w, use w / 3.92.",
    )
    c = st.columns(3)
    n_random = int(c[0].number_input("Random draws", 1, 500, DEFAULT_RANDOM_DRAWS, key="selection_random"))
    theta0 = c[1].number_input(
        "theta0 for max_info", -4.0, 4.0, 0.0, 0.1, key="selection_theta0", help="0 = near-equal systems"
    )
    scheduler = scheduler_field("selection_scheduler", c[2]) if mode == "full" else None

try:
    ks = parse_k_grid(ks_text, n_prompts)
    check_strategies(chosen)
except InputError as err:
    st.error(escape_markdown(err))
    st.stop()

settings = (data_key(rm), mode, cutpoints, tuple(chosen), tuple(int(k) for k in ks), n_random, float(theta0))
# The full calibration runs only on request; once run, the same settings show it again.
if (
    mode == "full"
    and st.session_state.get(SELECTION_FULL_DONE) != settings
    and not st.button(
        "Run full calibration",
        type="primary",
        key="selection_run_full",
        help="NUTS fits of all comparisons and of each system group",
    )
):
    st.info("The full calibration samples the posterior (a few minutes); press the button to start.")
    st.stop()

try:
    result = cached_run(*settings, rm, scheduler)
except DesignError as err:
    st.error(escape_markdown(f"{err}; choose another data set on the Data page"))
    st.stop()
except InputError as err:
    st.error(escape_markdown(err))
    st.stop()
if mode == "full":
    st.session_state[SELECTION_FULL_DONE] = settings
for message in result.warnings:
    st.warning(escape_markdown(message))
cal = result.calibration

st.plotly_chart(se_curve(result.curve.summary, result.curve.mode, target), key="selection_curve_chart")
needed = result.needed(target)
st.subheader(f"Prompts needed for SE <= {target:.3f}")
shown = needed.assign(
    strategy=needed["strategy"].map(lambda s: STRATEGIES[s].label),
    k_needed=[str(k) if pd.notna(k) else "not reached" for k in needed["k_needed"]],
)
show_table(shown, key="selection_needed")
st.caption(
    "k_needed: the smallest k on the grid at which the curve's mean SE, averaged over all held-out "
    "comparisons, is at or below the target; se_best: the smallest mean SE the strategy reaches on the "
    'grid ("not reached": refine the grid or raise the target). Adaptive strategies choose prompts per '
    "comparison as the ratings come in, so they have no fixed subset."
)

c = st.columns(3)
c[0].download_button(
    "selection_curve.csv",
    csv_text(result.curve.summary),
    "selection_curve.csv",
    mime="text/csv",
    key="selection_dl_curve",
)
c[1].download_button(
    "prompts_needed.csv", csv_text(needed), "prompts_needed.csv", mime="text/csv", key="selection_dl_needed"
)
static = [s for s in chosen if not STRATEGIES[s].adaptive]
if static:
    pick = c[2].selectbox(
        "Subset of", static, format_func=lambda s: STRATEGIES[s].label, key="selection_subset_strategy"
    )
    texts = data.judgments.prompt_texts if data.judgments is not None else None
    subset, note = result.subset(pick, needed, texts)
    if subset is None:
        c[2].warning(escape_markdown(note))
    else:
        k_sub = subset["rank"].max()
        c[2].download_button(
            f"subset_{pick}.csv ({k_sub} prompts)",
            csv_text(subset),
            f"subset_{pick}.csv",
            mime="text/csv",
            key="selection_dl_subset",
        )
        with st.expander(f"Selected subset: {STRATEGIES[pick].label}, k = {k_sub}"):
            show_table(subset, key="selection_subset_table")

st.subheader("Adaptive what-if")
st.caption(
    "Step through adaptive selection prompt by prompt for one comparison (items calibrated without it) "
    "or for a new comparison simulated at a chosen true ability, next to a random order; each stops "
    "when the posterior SD of this ONE comparison falls to the same target. The table above averages "
    "the SE over every held-out comparison and reads it on the k grid, so the two can differ: "
    "comparisons far from theta = 0 (clearly different systems) learn little from each prompt and "
    "raise the average, and a simulated comparison follows the model exactly. For a real comparison "
    "the adaptive path here is the one the curve uses for it."
)
c = st.columns(3)
rule = c[0].selectbox(
    "Adaptive rule",
    [s for s in STRATEGIES if STRATEGIES[s].adaptive],
    format_func=lambda s: STRATEGIES[s].label,
    key="selection_rule",
)
HYPOTHETICAL = "A new comparison (simulated)"
which = c[1].selectbox("Comparison", [HYPOTHETICAL, *rm.comparisons["comparison"]], key="selection_which")
true_theta = c[2].slider(
    "True ability (new comparison)", -3.0, 3.0, 0.5, 0.1, key="selection_true", disabled=which != HYPOTHETICAL
)
try:
    if which == HYPOTHETICAL:
        wi = what_if(
            cal.whole, rule, prompt_ids=rm.prompt_ids, categories=rm.categories, true_theta=true_theta, target_se=target
        )
    else:
        i = int(np.flatnonzero(rm.comparisons["comparison"].to_numpy() == which)[0])
        wi = what_if(
            cal.loo(i),
            rule,
            prompt_ids=rm.prompt_ids,
            categories=rm.categories,
            codes_row=rm.codes()[i],
            target_se=target,
        )
except InputError as err:
    st.error(escape_markdown(err))
    st.stop()
st.plotly_chart(what_if_chart(wi, target), key="selection_whatif_chart")
st.caption(THETA_SCALE[mode])
stops = ", ".join(f"{STRATEGIES[o].label}: {s if s is not None else 'not reached'}" for o, s in wi.stop.items())
st.write(f"Prompts until SE <= {target:.3f}: {stops}.")
st.download_button("what_if.csv", csv_text(wi.path), "what_if.csv", mime="text/csv", key="selection_dl_whatif")
