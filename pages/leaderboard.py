"""Leaderboard: one skill per system (structured IRT), ranks with intervals, Bradley–Terry beside it."""

import pandas as pd
import streamlit as st

from lib.errors import InputError
from lib.inference.settings import TARGET_CHUNK
from lib.io.export import csv_text
from lib.irt.fit import data_key
from lib.judgments.annotator_quality import names_vote_annotators
from lib.judgments.datasets import DATASETS, DEFAULT_DATASET
from lib.plots.ranking import (
    active_vs_uniform,
    category_heatmap,
    irt_vs_bradley_terry,
    rank_intervals,
    skill_forest,
    style_shift,
    win_heatmap,
)
from lib.ranking.budget import WIN_MATRIX_TOP
from lib.ranking.categories import COLUMN as CATEGORY_COLUMN
from lib.ranking.clusters import CLUSTER_MODES, DEFAULT_CLUSTERING, MIN_PROMPTS
from lib.ranking.data import (
    AnnotatorDesign,
    annotator_design_of,
    names_annotators,
    shows_position,
    systems_of,
)
from lib.ranking.fit import (
    DEFAULT_SAMPLER,
    LAPLACE,
    SAMPLERS,
    RankSettings,
    fitted_sampler,
    nuts_reason,
    rank_settings,
    resolve_annotator_effect,
)
from lib.ranking.leaderboard import P_BEST_HELP
from lib.ranking.likelihoods import LIKELIHOODS, default_likelihood
from lib.ranking.run import diagnostics_text, rank_systems
from lib.ranking.simulate import simulate_active_vs_uniform
from lib.ranking.style import has_style
from ui.common import cached_bundled, current_input
from ui.keys import (
    LB_ANNOTATORS,
    LB_INTRANSITIVITY,
    LB_LIKELIHOOD,
    LB_SAMPLER,
    RANKING,
    STUDY_LEFT_OUT,
    VIEW_DATASET,
    VIEW_MERGE,
)
from ui.navigation import serve_through_app
from ui.robustness import with_robustness
from ui.tables import show_table
from ui.text import escape_markdown
from ui.timings import show_timings, stopped_words

serve_through_app()  # opened by its URL on a fresh server, the page runs alone: app.py serves it

# With fewer systems than MIN_SYSTEMS (LAMP's 3 conditions, the app's default data) the page opens on
# HANNA's 11 systems: a leaderboard of three says little.
MANY_SYSTEMS = "hanna_means"
MIN_SYSTEMS = 4

# The fit's sizes and the keys of their widgets (a comment: a bare string here is shown by Streamlit).
SIZES = {"chains": "lb_chains", "draws": "lb_draws", "tune": "lb_tune", "target_ess": "lb_target"}

OWN_LIKELIHOOD = "(the data's own)"
SUM_TO_ZERO = "(none: skills sum to zero)"
# The annotator-severity switch: auto (RankSettings' default, decided by the scores), on, off.
SEVERITY_CHOICES = {"auto": None, "on": True, "off": False}


def choose_data(data):
    """The Data page's choice, or HANNA when that is the untouched default with few systems."""
    if st.session_state[VIEW_DATASET] != DEFAULT_DATASET or len(systems_of(data)) >= MIN_SYSTEMS:
        return data
    hanna = DATASETS[MANY_SYSTEMS]
    options = [MANY_SYSTEMS, DEFAULT_DATASET]
    labels = {
        MANY_SYSTEMS: hanna.title,
        DEFAULT_DATASET: f"the Data page's choice: {data.source} ({len(systems_of(data))} systems)",
    }
    key = st.radio(
        "Data for the leaderboard",
        options,
        format_func=labels.get,
        key="lb_source",
        help="A leaderboard of three systems says little, so this page opens on HANNA's 11 "
        "story generators. Choose any data set or your upload on the Data page to rank "
        "its systems here.",
    )
    if key == DEFAULT_DATASET:
        return data
    return cached_bundled(MANY_SYSTEMS, hanna.criteria[0], st.session_state[VIEW_MERGE])


def _design(data) -> AnnotatorDesign:
    """Whether the scores of the likelihood chosen identify the annotators' severities (the default's rule)."""
    likelihood = st.session_state.get(LB_LIKELIHOOD, OWN_LIKELIHOOD)
    return annotator_design_of(data, None if likelihood == OWN_LIKELIHOOD else likelihood)


def _fit_sizes(data) -> None:
    """The sampler the fit runs may have changed (the one chosen, or the NUTS MAP + Laplace falls back to, as
    for annotator severities modelled by default): its sizes as ``python -m lib rank`` takes them when none
    are given (``rank_settings``)."""
    chosen = rank_settings(
        sampler=st.session_state[LB_SAMPLER],
        intransitivity=st.session_state.get(LB_INTRANSITIVITY, False),
        annotator_effect=SEVERITY_CHOICES[st.session_state.get(LB_ANNOTATORS, "auto")],
        design=_design(data),
    )
    for field, key in SIZES.items():
        st.session_state[key] = getattr(chosen, field) or 0


def settings_form(data, systems: list[str]) -> tuple[RankSettings, int, int, bool]:
    design = _design(data)
    defaults = rank_settings(design=design)  # the command's: MAP + Laplace (NUTS for modelled severities)
    for field, key in SIZES.items():  # until the user or the sampler the fit runs changes them
        st.session_state.setdefault(key, getattr(defaults, field) or 0)
    with st.expander("Settings", expanded=False):
        c = st.columns(4)
        likelihood = c[0].selectbox(
            "Likelihood",
            [OWN_LIKELIHOOD, *LIKELIHOODS],
            key=LB_LIKELIHOOD,
            on_change=_fit_sizes,
            args=(data,),
            help="  \n".join(f"**{k}**: {escape_markdown(spec.help)}" for k, spec in LIKELIHOODS.items()),
        )
        sampler = c[1].selectbox(
            "Sampler",
            list(SAMPLERS),
            index=list(SAMPLERS).index(DEFAULT_SAMPLER),
            key=LB_SAMPLER,
            on_change=_fit_sizes,
            args=(data,),
            help=f"Default: **{DEFAULT_SAMPLER}** (the page and the command line alike; it "
            "falls back to NUTS where a Gaussian at the mode is not trustworthy).  \n"
            + "  \n".join(f"**{k}**: {escape_markdown(s.help)}" for k, s in SAMPLERS.items()),
        )
        baseline = c[2].selectbox("Baseline system (skill 0)", [SUM_TO_ZERO, *systems], key="lb_baseline")
        n_next = c[3].number_input("Annotate next: batch size", 1, 1000, 20, key="lb_next")
        intransitivity = st.checkbox(
            "Intransitivity: a deviation per pair (scale tau estimated)",
            key=LB_INTRANSITIVITY,
            on_change=_fit_sizes,
            args=(data,),
            help="Needs a NUTS sampler and paired judgments.",
        )
        known = shows_position(data)
        position = st.checkbox(
            "Position bias: an effect gamma for the system shown first",
            value=known,
            disabled=not known,
            key="lb_position",
            help="Needs pairwise votes with a column saying which system was shown first "
            "(map it to the role 'position' on the Data page).",
        )
        own = likelihood == OWN_LIKELIHOOD
        spec = default_likelihood(data.judgments is not None) if own else LIKELIHOODS[likelihood]
        weighable = names_vote_annotators(data) and spec.per_vote
        weights = st.checkbox(
            "Weight annotators by reliability (Dawid–Skene)",
            disabled=not weighable,
            key="lb_weights",
            help="Each vote counts as much as its annotator's reliability: Cohen's kappa of their answers "
            "against the Dawid–Skene estimate of the truth (1 = always the truth, 0 = a spammer, whatever "
            "their strategy). Needs votes whose annotators are named (at least two) and the votes likelihood.",
        )
        paired = spec.paired
        cluster = st.selectbox(
            "Prompt-clustered intervals",
            list(CLUSTER_MODES),
            index=list(CLUSTER_MODES).index(DEFAULT_CLUSTERING),
            disabled=not paired,
            key="lb_cluster",
            help="Votes on the same prompt can lean the same way (a prompt favours some systems more than their "
            "skill says); intervals that treat them as independent are then too narrow. Default: "
            f"**{DEFAULT_CLUSTERING}** (the page and the command line alike).  \n"
            + "  \n".join(f"**{k}**: {escape_markdown(v.format(min=MIN_PROMPTS))}" for k, v in CLUSTER_MODES.items())
            + ("" if paired else "  \nNot used here: the ratings likelihood has its own prompt effect."),
        )
        judgments = data.judgments
        styled = judgments is not None and has_style(judgments.votes, judgments.responses)
        style = (
            st.checkbox(
                "Style control: the answers' length and markdown (headers, bold, list items) as covariates",
                disabled=not styled,
                key="lb_style",
                help="LMArena's style control: each vote's difference between the two answers in length and "
                "markdown counts is fitted beside the skills (votes model and Bradley–Terry), so a system that "
                "wins by writing longer answers drops; both leaderboards are shown. Needs pairwise votes with the "
                "answers' texts (map response_a and response_b on the Data page).",
            )
            and styled
        )
        categorised = judgments is not None and CATEGORY_COLUMN in judgments.votes
        by_category = (
            st.checkbox(
                "By category: a skill per system and category, shrunk towards its overall skill",
                disabled=not categorised,
                key="lb_by_category",
                help="One fit with a deviation of every system in every category, shrunk towards the system's "
                "overall skill by a spread learnt from all categories: a small category borrows strength from "
                "the others (python -m lib rank --by category). Needs pairwise votes with a category column (map "
                "it to the role 'category' on the Data page).",
            )
            and categorised
        )
        severity = None  # RankSettings' default: decided by the scores (off for paired judgments)
        if spec.severity:
            named = names_annotators(data)
            auto = "on" if design.identified else "off"
            choice = st.radio(
                "Annotator severity: an effect zeta per annotator (scale sigma_zeta estimated)",
                list(SEVERITY_CHOICES),
                format_func=lambda c: f"auto ({auto} for these scores)" if c == "auto" else c,
                horizontal=True,
                disabled=not named,
                key=LB_ANNOTATORS,
                on_change=_fit_sizes,
                args=(data,),
                help="A severe annotator gives lower scores to every system; without this, a system rated mostly "
                "by severe annotators ranks too low, and intervals are too narrow. **auto** (the default) models it "
                "where the scores identify it: two or more annotators whose scores link every system (an "
                "annotator column, mapped to the role 'annotator' on the Data page). Here: "
                + escape_markdown(design.note),
            )
            severity = SEVERITY_CHOICES[choice] if named else None
        # The sampler the fit runs: numpyro chosen, or the NUTS a Laplace fit falls back to, takes a target ESS
        chosen = resolve_annotator_effect(
            RankSettings(sampler=sampler, intransitivity=intransitivity, annotator_effect=severity), design
        )
        to_target = SAMPLERS[fitted_sampler(chosen)].to_target
        d = st.columns(5)
        chains = d[0].number_input("Chains (NUTS)", 1, 8, key="lb_chains")
        draws = d[1].number_input(
            "Draws (NUTS)",
            50,
            10000,
            step=100,
            key="lb_draws",
            help="per chain; with a target ESS, the most (MAP + Laplace: draws in all)",
        )
        tune = d[2].number_input("Tuning (NUTS)", 0, 10000, step=100, key="lb_tune")
        target = d[3].number_input(
            "Target ESS (NUTS)",
            0,
            100_000,
            step=100,
            key="lb_target",
            disabled=not to_target,
            help=f"numpyro, chosen or the NUTS a MAP + Laplace fit falls back to: warm up from jittered points "
            f"around the priors' centres, then draw {TARGET_CHUNK} per chain at a time until the bulk and tail ESS "
            "of every reported parameter reach it and their R-hat is at most 1.01 (or Draws per chain are drawn); "
            "0: exactly Draws."
            + ("" if to_target else f" Not used here: this fit runs {escape_markdown(fitted_sampler(chosen))}."),
        )
        win_top = d[4].number_input(
            "Win matrix: top systems",
            2,
            1000,
            WIN_MATRIX_TOP,
            key="lb_win_top",
            help="The win probabilities of every pair of the top K systems (K systems have K (K - 1) / 2 pairs).",
        )
    settings = RankSettings(
        likelihood=None if likelihood == OWN_LIKELIHOOD else likelihood,
        sampler=sampler,
        baseline=None if baseline == SUM_TO_ZERO else baseline,
        intransitivity=intransitivity,
        position_bias=position and known,
        annotator_effect=severity,
        annotator_weights=weights and weighable,
        cluster_prompts=cluster if paired else DEFAULT_CLUSTERING,
        style_control=style,
        by_category=by_category,
        chains=int(chains),
        draws=int(draws),
        tune=int(tune),
        target_ess=int(target) if target and to_target else None,
    )
    return settings, int(n_next), int(win_top), st.button("Rank", type="primary", key="lb_rank")


def run(data, settings: RankSettings, n_next: int, win_top: int):
    bar = st.progress(0.0, text="starting")
    result = rank_systems(
        data, settings, n_next=n_next, win_top=win_top, progress=lambda f, msg: bar.progress(min(f, 1.0), text=msg)
    )
    bar.empty()
    return result


def target_text(d) -> str:
    """How a fit sampled to a target ESS stopped, for the caption ("" for a fixed number of draws)."""
    if d.stopped is None:
        return ""
    return f" sampled to the target ESS {d.target_ess} ({stopped_words(d.stopped)})"


def show(result, data) -> None:
    fit, board = result.fit, result.leaderboard
    d, s = fit.diagnostics, fit.settings
    default = f" (the default sampler: {DEFAULT_SAMPLER})" if s.sampler == DEFAULT_SAMPLER else ""
    st.caption(
        f"{escape_markdown(fit.data.likelihood)} likelihood, {escape_markdown(d.sampler)}{default}"
        + (f", {d.draws} draws" if d.sampler == LAPLACE else f", {d.chains} chains x {d.draws} draws")
        + target_text(d)
        + f", {d.wall_s:.1f} s (estimated before the fit: {result.cost})."
        + (f" {escape_markdown(fit.route)}" if fit.route else "")
    )
    for note in result.notes:
        st.info(escape_markdown(note))
    for w in d.warnings:
        st.warning(escape_markdown(w))
    show_timings(d.timings)
    show_table(
        with_robustness(result, data, board),
        key="lb_table",
        column_config={"p_best": st.column_config.Column(help=P_BEST_HELP)},
    )
    order = list(board["system"])
    tabs = st.tabs(["Skills", "Ranks", "Win probabilities", "IRT vs Bradley–Terry"])
    tabs[0].plotly_chart(skill_forest(board), key="lb_forest")
    tabs[1].plotly_chart(rank_intervals(board), key="lb_ranks")
    shown = set(result.win_matrix["system_a"]) | set(result.win_matrix["system_b"])
    tabs[2].plotly_chart(win_heatmap(result.win_matrix, [s for s in order if s in shown]), key="lb_heatmap")
    if board["bt_rating"].notna().any():
        tabs[3].plotly_chart(irt_vs_bradley_terry(board), key="lb_bt")
    else:
        tabs[3].info("No Bradley–Terry baseline for these data (it needs pairwise votes).")
    show_style(result)
    show_categories(result, order)
    if result.intransitive is not None:
        st.subheader("Intransitive pairs")
        st.caption(
            f"tau (posterior mean) = {result.tau:.3f}. Pairs whose deviation interval excludes 0: "
            "the data say one beats the other directly more than their skills imply."
        )
        if len(result.intransitive):
            show_table(result.intransitive, key="lb_intransitive")
        else:
            st.write("None: every pair's deviation interval includes 0.")
    if result.position is not None:
        st.subheader("Position bias")
        st.caption(
            "gamma (logits) is added on the side of the system shown first: > 0 means annotators favour "
            "what they see first; an interval that excludes 0 means the bias is real."
        )
        show_table(result.position, key="lb_position_table")
    else:
        st.caption(
            "Position bias: not estimated (it needs pairwise votes with a column naming the system shown "
            "first, mapped to the role 'position' on the Data page)."
        )
    if result.severity is not None:
        st.subheader("Annotator severity")
        scale = ""
        if result.severity_scale is not None:
            z = result.severity_scale.iloc[0]
            scale = f" sigma_zeta = {z['mean']:.3f} (95% interval {z['low']:.3f} to {z['high']:.3f})."
        st.caption(
            "zeta (logits) is subtracted from every score an annotator gives: > 0 is a severe annotator, "
            "< 0 a lenient one; the skills are corrected for who rated what. Most severe first." + scale
        )
        show_table(result.severity, key="lb_severity_table")
        st.download_button(
            "annotators.csv", csv_text(result.severity), "annotators.csv", mime="text/csv", key="lb_dl_annotators"
        )
    downloads(result)
    if result.next_batch is not None:
        st.subheader("What to annotate next")
        st.caption(
            "The (pair, prompt) judgments that most reduce the uncertainty of the ranking under the "
            "current posterior, ready to send to annotators. score: the expected shrinkage of the pair's posterior "
            "SD (logits), weighted by how undecided its order is; relative_score: the score over the first row's."
        )
        show_table(result.next_batch, key="lb_next_table")  # significant digits: scores span orders of magnitude
        st.download_button(
            "next_batch.csv", csv_text(result.next_batch), "next_batch.csv", mime="text/csv", key="lb_dl_next"
        )
    show_reliability(result.annotator_quality)


def show_reliability(quality) -> None:
    """The annotators' reliability, when the votes were weighted by it."""
    if quality is None:
        return
    st.subheader("Annotator reliability (the votes' weights)")
    st.caption(
        "Each annotator's votes count as much as their reliability, clipped to [0, 1]: kappa against the "
        "Dawid–Skene truth. agreement: the share of the others' answers to the same pair and prompt that "
        "equal theirs."
    )
    show_table(quality, key="lb_quality_table")


def downloads(result) -> None:
    """The command's three files."""
    c = st.columns(3)
    c[0].download_button(
        "leaderboard.csv", csv_text(result.leaderboard), "leaderboard.csv", mime="text/csv", key="lb_dl_board"
    )
    c[1].download_button(
        "win_matrix.csv", csv_text(result.win_matrix), "win_matrix.csv", mime="text/csv", key="lb_dl_wins"
    )
    c[2].download_button(
        "diagnostics.json", diagnostics_text(result), "diagnostics.json", mime="application/json", key="lb_dl_diag"
    )


# The columns of each leaderboard shown side by side with style control.
SIDE_BY_SIDE = ["system", "skill_mean", "skill_low", "skill_high", "p_best", "bt_rating"]


def show_style(result) -> None:
    """Style control: the coefficients, the leaderboards without and with it side by side, each system's shift
    (nothing without style control)."""
    if result.uncontrolled is None:
        return
    st.subheader("Style control")
    st.caption(
        "Each vote's difference between the two answers in length and markdown (normalised, standardised over "
        "the votes, as LMArena does) is fitted beside the skills. A coefficient > 0: the answer with more of it "
        "wins more often (logits per SD); the controlled skills are what remains."
    )
    show_table(result.style, key="lb_style_table")
    c = st.columns(2)
    c[0].markdown("**Without style control**")
    with c[0]:
        show_table(result.uncontrolled[SIDE_BY_SIDE], key="lb_uncontrolled")
    c[1].markdown("**With style control**")
    with c[1]:
        show_table(result.leaderboard[SIDE_BY_SIDE], key="lb_controlled")
    st.plotly_chart(style_shift(result.leaderboard), key="lb_style_shift")


def show_categories(result, order: list[str]) -> None:
    """By category: the chosen category's leaderboard, the heatmap of systems x categories and the download
    (nothing when not ranked by category)."""
    table = result.by_category
    if table is None:
        return
    st.subheader("By category")
    spread = ""
    if result.category_spread is not None:
        z = result.category_spread.iloc[0]
        spread = f" Spread sigma_category = {z['mean']:.3f} (95% interval {z['low']:.3f} to {z['high']:.3f})."
    st.caption(
        "One fit: each system's skill in a category is its overall skill plus a deviation shrunk by the spread "
        "learnt from all categories, so a small category borrows strength from the others. Ranks and P(best) are "
        "within the category; n_votes counts the category's votes of the system." + spread
    )
    categories = sorted(table["category"].unique())
    chosen = st.selectbox("Category", categories, key="lb_category")
    show_table(table[table["category"] == chosen].drop(columns="category"), key="lb_category_table")
    st.plotly_chart(category_heatmap(table, order), key="lb_category_heatmap")
    st.download_button(
        "leaderboard_by_category.csv",
        csv_text(table),
        "leaderboard_by_category.csv",
        mime="text/csv",
        key="lb_dl_by_category",
    )


SIM_TARGET = 0.95


@st.cache_data(show_spinner="Simulating both rules…", max_entries=4)
def simulation(seed: int):
    return simulate_active_vs_uniform(target=SIM_TARGET, seed=seed)


def simulation_section() -> None:
    with st.expander("Does choosing what to annotate help? A simulation"):
        st.caption(
            "Simulated arena votes (6 systems, 40 prompts): both rules start from the same 30 random votes "
            "and add 10 at a time, either a random pair on a random prompt (uniform, the arena design) or "
            "the top of the 'annotate next' rule; after each batch the skills are refitted (Bradley–Terry, "
            f"MAP + Laplace). How many votes until the true best system has P(best) > {SIM_TARGET}?"
        )
        seed = st.number_input("Seed", 0, 10_000, 0, key="lb_sim_seed")
        if not st.button("Run the simulation", key="lb_sim"):
            return
        sim = simulation(int(seed))
        c = st.columns(2)
        for col, rule in zip(c, ("uniform", "active"), strict=True):
            n = sim.needed[rule]
            col.metric(f"votes needed: {rule}", "not within 2000" if n is None else n)
        st.plotly_chart(active_vs_uniform(sim.trace, sim.needed, SIM_TARGET), key="lb_sim_chart")


st.title("Leaderboard")
st.caption(
    "One skill s per system: the ability of a pair is s_B - s_A, with the prompts' discriminations "
    "of the graded response model. Ranks, P(best) and their intervals come from the posterior draws; "
    "the Bradley–Terry ratings on the same votes (ties as half a win, as LMArena does) stand beside it."
)
data = current_input(unpaired=True)  # unpaired ratings are ranked here (ratings likelihood)
if data is None:
    st.stop()
data = choose_data(data)
criterion = f" ({escape_markdown(data.criterion)})" if data.criterion else ""
st.write(f"**{escape_markdown(data.source)}**{criterion}: {len(systems_of(data))} systems")
left_out = st.session_state.get(STUDY_LEFT_OUT)  # (export name, what was left out), set by the Studies page
if left_out is not None and left_out[1] and left_out[0] == data.source:
    st.info(f"{escape_markdown(left_out[1])} (the Studies page can keep them).")
settings, n_next, win_top, clicked = settings_form(data, systems_of(data))
# Unpaired ratings have no net ratings (their matrix is empty): the scores themselves are hashed.
scores = None if data.ratings is None else int(pd.util.hash_pandas_object(data.ratings, index=False).sum())
key = (data.source, data.criterion, data_key(data.matrix), scores, settings, n_next, win_top)
kept = st.session_state.get(RANKING)  # (key, result or the message of why it failed)
# The Laplace fit takes seconds: it runs at once (once per data and settings); a NUTS fit (chosen, or the
# fallback of a Laplace fit that would not be trustworthy) waits for the button.
decided = resolve_annotator_effect(settings, annotator_design_of(data, settings.likelihood))
fast = settings.sampler == LAPLACE and nuts_reason(decided) is None
if clicked or (fast and (kept is None or kept[0] != key)):
    try:
        kept = (key, run(data, settings, n_next, win_top))
    except InputError as err:
        kept = (key, f"Cannot rank: {escape_markdown(err)}")
    st.session_state[RANKING] = kept
if kept is not None and kept[0] == key:
    if isinstance(kept[1], str):
        st.error(kept[1])
    else:
        show(kept[1], data)
else:
    why = nuts_reason(decided)
    st.info(
        "Press **Rank** to fit with these settings"
        + (f" (NUTS: MAP + Laplace is not trustworthy here, {escape_markdown(why)})." if why else ".")
    )
simulation_section()
