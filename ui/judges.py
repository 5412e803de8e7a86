"""LLM-judge votes in the session: the judge file given beside the human votes on the Data page (or the
bundled judges of a data set), its analysis, and the Study planner's "With an LLM judge" section.

Not a page; imported by pages/data.py, pages/judges.py and pages/planner.py. The judge file is kept
in ``session_state[JUDGE_FILE]`` (``ui.common.DEFAULTS``) with the human votes it was given for, so
it survives other pages and never meets another data set's votes.
"""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd
import streamlit as st

from lib.errors import InputError
from lib.inputs import AnalysisInput
from lib.io.tables import read_csv
from lib.judges.budget import plan_for_items, worth_for_items
from lib.judges.read import read_judge_file
from lib.judges.run import JudgeResult, judge_leaderboard, keep_share
from lib.judgments.datasets import bundled_judges
from lib.judgments.ratings import select_criterion
from ui.common import CACHE_ENTRIES, CACHE_TTL_S, current_input, init_state
from ui.keys import ANALYSIS_INPUT, JUDGE_FILE, JUDGE_UPLOAD_ROUND, VIEW_DATASET
from ui.tables import show_table
from ui.text import escape_markdown

JUDGES_PAGE, DATA_PAGE, PLANNER_PAGE = "pages/judges.py", "pages/data.py", "pages/planner.py"


class JudgeFile(NamedTuple):
    name: str
    raw: bytes
    bundled: bool  # the data set's bundled judges (the demo), not the user's file


def _judge_widget(data: AnalysisInput) -> str:
    # A file uploader cannot be emptied through state: a new key empties it when the file is forgotten, and one
    # key per data set keeps a file given for one data set from being taken for another's.
    return f"data_judge_upload_{st.session_state.get(JUDGE_UPLOAD_ROUND, 0)}_{data.source}"


def judge_file(data: AnalysisInput) -> JudgeFile | None:
    """The judge file given on the Data page for these human votes, else the bundled judges of the
    chosen data set (PandaLM's), else None.

    A file the Data page's uploader holds is kept first: the click that shows another page may stop the Data
    page's run before it kept the file, and the uploader's value lasts until the end of this run.
    """
    if (file := st.session_state.get(_judge_widget(data))) is not None:
        st.session_state[JUDGE_FILE] = (data.source, file.name, file.getvalue())
    kept = st.session_state.get(JUDGE_FILE)
    if kept is not None and kept[0] == data.source:
        return JudgeFile(kept[1], kept[2], bundled=False)
    bundled = bundled_judges(st.session_state[VIEW_DATASET])
    return JudgeFile(bundled.name, bundled.read_bytes(), bundled=True) if bundled is not None else None


def human_votes(data: AnalysisInput) -> pd.DataFrame:
    """The human votes of the chosen criterion (a bundled data set's votes hold every criterion)."""
    assert data.judgments is not None  # callers check that the data has votes
    return select_criterion(data.judgments.votes, data.criterion)


@st.cache_data(show_spinner="Comparing the judges with the humans…", max_entries=CACHE_ENTRIES, ttl=CACHE_TTL_S)
def analyse(votes: pd.DataFrame, raw: bytes, name: str, share: float = 1.0, seed: int = 0) -> JudgeResult:
    """:func:`lib.judges.run.judge_leaderboard` of a judge file beside the human votes of a random
    ``share`` of the items (:func:`lib.judges.run.keep_share`)."""
    judges = read_judge_file(read_csv(raw, name), file=name)
    return judge_leaderboard(votes if share == 1 else keep_share(votes, share, seed), judges)


def no_votes_note(data: AnalysisInput) -> str:
    return (
        f"{escape_markdown(data.source)} holds {escape_markdown(data.fmt)} data: an LLM judge is compared with "
        "pairwise human votes (a pairwise, best-worst or ranking file, read as votes on pairs)."
    )


def judge_upload(data: AnalysisInput) -> None:
    """The Data page's optional judge file beside the human votes: read, matched and checked, kept in the session."""
    st.subheader("LLM-judge votes (optional)")
    if data.judgments is None:
        st.caption(no_votes_note(data))
        return
    st.file_uploader(
        "LLM-judge votes (optional): pairwise columns (prompt, system_a, system_b, choice) and a 'judge' column",
        type=["csv", "tsv", "txt"],
        key=_judge_widget(data),
        help="One row per verdict, on the same prompts and systems as the human votes; system_a is the response "
        "the judge saw first. A blank choice is an unusable verdict: it is counted and left out. See docs/judges.md.",
    )
    chosen = judge_file(data)  # keeps the uploader's file
    if chosen is None:
        st.caption("None given: the Judges page compares a judge's verdicts with these human votes.")
        return
    if chosen.bundled:
        st.caption(f"The bundled judges' verdicts, {escape_markdown(chosen.name)}, are used unless you give a file.")
    else:
        c = st.columns([3, 1])
        c[0].caption(f"Using {escape_markdown(chosen.name)} beside the human votes (upload another to replace it).")
        if c[1].button("Forget the judge file", key="data_judge_forget"):
            st.session_state[JUDGE_FILE] = None
            st.session_state[JUDGE_UPLOAD_ROUND] = st.session_state.get(JUDGE_UPLOAD_ROUND, 0) + 1
            st.rerun()
    try:
        result = analyse(human_votes(data), chosen.raw, chosen.name)
    except InputError as err:
        st.error(f"Cannot use the judge file: {escape_markdown(err)}")
        return
    d = result.diagnostics
    c = st.columns(5)
    c[0].metric("judges", len(result.quality.table))
    c[1].metric("usable verdicts", d["judge_verdicts"])
    c[2].metric("unusable verdicts", sum(d["unusable_verdicts"].values()), help="Blank choice: left out, not guessed.")
    c[3].metric("items with humans and the judge", d["labelled_items"])
    c[4].metric("items with the judge only", d["judge_only_items"])
    for note in result.notes:
        st.info(escape_markdown(note))
    st.page_link(
        JUDGES_PAGE, label="How good is the judge, and what is it worth: the Judges page", icon=":material/gavel:"
    )


def planner_section() -> None:
    """The Study planner's "With an LLM judge" section: shown when the human votes of the Data page have
    a judge file (given there, or the bundled one of the data set)."""
    init_state()
    data = st.session_state.get(ANALYSIS_INPUT)
    if data is None and bundled_judges(st.session_state[VIEW_DATASET]) is not None:
        data = current_input()  # a bundled data set opened by URL: read it as the Data page would
    if data is None or data.judgments is None or (chosen := judge_file(data)) is None:
        return
    with st.expander("With an LLM judge: how many human votes and judge verdicts to buy", expanded=False):
        try:
            result = analyse(human_votes(data), chosen.raw, chosen.name)
        except InputError as err:
            st.error(f"Cannot use the judge file: {escape_markdown(err)} (fix it on the Data page)")
            return
        buy_next(result, chosen)


def buy_next(result: JudgeResult, chosen: JudgeFile) -> None:
    """The cheapest numbers of human-voted and judge-only items for a target width or power, and what a planned
    study would be worth with each judge, this data as the pilot."""
    given = "the bundled demo" if chosen.bundled else "given on the Data page"
    st.caption(
        f"With the human votes and the verdicts of {escape_markdown(chosen.name)} ({given}) as a pilot: "
        "how many items to have humans vote on, and how many to leave to the judges alone, for every system's "
        "95% interval to be at most ± the target half-width, or for any two systems a given skill difference "
        "apart to be told apart with the target power, at the least cost (PPI power analysis, "
        "ppi_py.ppi_power; docs/judges.md). Items are assumed drawn like the pilot's."
    )
    quality = result.quality.table
    st.caption(
        "Measured on the pilot: "
        + "; ".join(
            f"**{escape_markdown(q.judge)}** agrees with the human majority on {q.agreement:.1%} of "
            f"{q.n_items} items (kappa {q.kappa:.2f})"
            for q in quality.itertuples()
        )
        + "."
    )
    current = float(((result.leaderboard["human_high"] - result.leaderboard["human_low"]) / 2).max())
    target = st.radio("Target", ["interval half-width", "power"], horizontal=True, key="planner_judge_target_kind")
    c = st.columns(3)
    if target == "power":
        power = c[0].number_input("Target power", 0.5, 0.99, 0.8, step=0.05, key="planner_judge_power")
        difference = c[0].number_input(
            "Skill difference to detect (logits)",
            0.01,
            5.0,
            round(max(0.01, current), 2),
            step=0.01,
            key="planner_judge_difference",
            help="Any two systems whose skills differ by this much are told apart by a two-sided 5% test with the "
            f"target power. The widest human-only half-width of the pilot is {current:.2f}.",
        )
        goal = {"power": power, "difference": difference}
    else:
        width = c[0].number_input(
            "Target half-width (logits)",
            0.01,
            5.0,
            round(max(0.01, current / 2), 2),
            step=0.01,
            key="planner_judge_target",
            help=f"The widest human-only half-width of the pilot is {current:.2f}.",
        )
        goal = {"half_width": width}
    human = c[1].number_input("Cost of a human vote", 0.001, 1e6, 1.0, key="planner_judge_cost_human")
    judge = c[2].number_input("Cost of a judge verdict", 0.0, 1e6, 0.01, format="%.4f", key="planner_judge_cost_judge")
    try:
        plan = plan_for_items(result, **goal, human_vote_cost=human, judge_verdict_cost=judge)
    except InputError as err:
        st.warning(f"No plan: {escape_markdown(err)}")
        return
    show_table(plan.table, key="planner_judge_plan")
    st.caption(f"Humans alone: the requirement of **{escape_markdown(plan.binding)}** decides.")
    st.caption("Per target: the spread of its estimate per item (logits) and the PPI correlation with the judges.")
    show_table(plan.targets, key="planner_judge_plan_systems")
    predicted_worth_section(result, plan)


def predicted_worth_section(result: JudgeResult, plan) -> None:
    """Before buying: the effective human sample size of a planned study with each judge, from this pilot."""
    st.markdown("**Before buying: what would each judge be worth?**")
    st.caption(
        "The effective human sample size of a study with these numbers of human-voted and judge-only items, "
        "predicted from the pilot for every judge together and each alone (the trace of the covariance the "
        "prediction-powered fit minimises; docs/judges.md)."
    )
    planned = plan.table.iloc[1]
    c = st.columns(2)
    n = c[0].number_input(
        "Human-voted items", 1, 10**7, max(1, int(planned["human_items"])), key="planner_judge_worth_n"
    )
    big_n = c[1].number_input(
        "Judge-only items", 1, 10**8, max(1, int(planned["judge_only_items"])), key="planner_judge_worth_big_n"
    )
    try:
        worth = worth_for_items(result, human_items=int(n), judge_only_items=int(big_n))
    except InputError as err:
        st.warning(f"No prediction: {escape_markdown(err)}")
        return
    show_table(worth, key="planner_judge_worth")
