"""Judges: LLM-judge verdicts beside the human votes, the judge's quality and prediction-powered leaderboards."""

import json

import streamlit as st

from lib.errors import InputError
from lib.io.export import csv_text
from lib.judges.run import DEMO_SHARE, JUDGE_COLUMNS
from lib.plots.judges import judge_preference, three_leaderboards
from ui.common import current_input
from ui.judges import DATA_PAGE, PLANNER_PAGE, analyse, human_votes, judge_file, no_votes_note
from ui.navigation import serve_through_app
from ui.tables import show_table
from ui.text import escape_markdown

serve_through_app()  # opened by its URL on a fresh server, the page runs alone: app.py serves it


def highlight_changes(table):
    """Ranks that differ from the humans' rank, highlighted (a Styler for ``ui.tables.show_table``)."""

    def colour(row):
        return [
            "background-color: #f8d7da" if c in ("judge_rank", "ppi_rank") and row[c] != row["human_rank"] else ""
            for c in row.index
        ]

    return table.style.apply(colour, axis=1)


def show(result) -> None:
    d = result.diagnostics
    for note in result.notes:
        st.info(escape_markdown(note))
    c = st.columns(3)
    c[0].metric(
        "Effective human sample size",
        f"{d['effective_human_n']:.0f}",
        f"{d['effective_human_n'] / d['human_votes']:.2f} x the {d['human_votes']} human votes",
        help="How many human votes the human-only intervals would need to be as narrow as the "
        "prediction-powered ones (the ratio of their covariance traces).",
    )
    c[1].metric(
        "lambda (PPI++ weight of the judges)",
        f"{d['lambda']:.2f}",
        help="The judges' weights together (each judge's is in the table below); 0: humans only; 1: plain PPI.",
    )
    c[2].metric("Items rated by the judges only", d["judge_only_items"])

    st.subheader("How good is each judge, and what is it worth?")
    st.caption(
        "On the items both rated: agreement with the human majority, Cohen's kappa, the tie rate of all its "
        "verdicts and its position bias (how much more often than half the system shown first wins: from items "
        "it judged in both orders, else from system pairs shown in both orders over their prompts when the "
        "sides were randomised per vote; position_bias_from says which). ppi_weight is its PPI++ weight in the "
        "prediction-powered leaderboard; effective_human_n_alone the effective human sample size with this judge "
        "alone, effective_human_n_without with every judge but it (dropping it costs the difference)."
    )
    show_table(result.quality.table, key="judge_quality_table")  # a missing bias: empty, its reason beside it
    cols = st.columns(len(result.quality.confusion))
    for col, (judge, matrix) in zip(cols, result.quality.confusion.items(), strict=True):
        col.caption(f"Confusion matrix of **{escape_markdown(judge)}** (A = the pair's first system by name)")
        with col:
            show_table(matrix, key=f"judge_confusion_{judge}", hide_index=False)
    st.plotly_chart(judge_preference(result.quality.preference), key="judge_preference")

    st.subheader("Three leaderboards")
    st.caption(
        "Bradley–Terry skills (logits) from the human votes alone, the judge's verdicts alone and both "
        "(prediction-powered: the judge predicts every item, the human-labelled ones remove its bias). "
        "Ranks that differ from the humans' are highlighted; the rank-set holds every rank the system can "
        "take, all systems at once with 95% confidence."
    )
    board = result.leaderboard
    ranks = ["human_rank", "judge_rank", "ppi_rank", "rank_set_low", "rank_set_high"]
    shown = board[["system", *ranks, *(c for c in JUDGE_COLUMNS if c not in ranks)]]
    show_table(highlight_changes(shown), key="judge_board")
    st.plotly_chart(three_leaderboards(board, d["level"]), key="judge_skills")

    c = st.columns(3)
    c[0].download_button(
        "leaderboard.csv",
        csv_text(board[["system", *JUDGE_COLUMNS]]),
        "leaderboard.csv",
        mime="text/csv",
        key="judge_dl_board",
    )
    c[1].download_button(
        "judge_quality.csv",
        csv_text(result.quality.table),
        "judge_quality.csv",
        mime="text/csv",
        key="judge_dl_quality",
    )
    c[2].download_button(
        "diagnostics.json", json.dumps(d, indent=2), "diagnostics.json", mime="application/json", key="judge_dl_diag"
    )


st.title("Judges")
st.caption(
    "LLM-judge verdicts beside the human votes: how well the judge agrees with the humans, and "
    "leaderboards that use its cheap verdicts without inheriting its bias (prediction-powered inference, "
    "PPI++). See docs/judges.md."
)
data = current_input()
if data is None:
    st.stop()
if data.judgments is None:
    st.warning(no_votes_note(data) + " Choose a data set of votes on the Data page.")
    st.stop()
chosen = judge_file(data)
if chosen is None:
    st.info(
        f"No judge file for {escape_markdown(data.source)}: give one beside the human votes on the **Data** "
        "page (LLM-judge votes, optional). PandaLM's bundled judges are the demo."
    )
    st.page_link(DATA_PAGE, label="Give a judge file on the Data page", icon=":material/table:")
    st.stop()
try:
    votes = human_votes(data)
except InputError as err:
    st.error(escape_markdown(err))
    st.stop()
st.write(
    f"Human votes: **{escape_markdown(data.source)}** ({len(votes)} votes); judge verdicts: "
    f"**{escape_markdown(chosen.name)}**"
    + (" (bundled demo; give your own on the Data page)" if chosen.bundled else " (given on the Data page)")
)
try:
    everything = analyse(votes, chosen.raw, chosen.name)
except InputError as err:
    st.error(f"Cannot use the judge file: {escape_markdown(err)}")
    st.stop()
# Human votes on every judged item leave the judges nothing to add (lambda = 0): the page then opens on a
# share of them, as if only those had been bought, which is what a judge is for.
demo = everything.diagnostics["judge_only_items"] == 0
share = (
    st.slider(
        "Human votes used: share of the items (%)",
        5,
        100,
        round(100 * DEMO_SHARE) if demo else 100,
        step=5,
        key="judge_share",
        help="Keep the human votes of a random share of the items, as if only those had been bought: with "
        "the judges rating every item, this shows what their verdicts are worth.",
    )
    / 100
)
seed = int(st.number_input("Seed of the draw", 0, 2**31 - 1, 0, key="judge_seed", disabled=share == 1))
if share < 1:
    st.info(
        f"The human votes of {share:.0%} of the items are kept, as if only those had been bought, beside every "
        "verdict"
        + (
            ": with all of them every judged item has human votes and the judges add nothing (100% shows it)."
            if demo
            else "."
        )
    )
try:
    result = everything if share == 1 else analyse(votes, chosen.raw, chosen.name, share, seed)
except InputError as err:
    st.error(f"Cannot use the judge file: {escape_markdown(err)}")
    st.stop()
show(result)
st.page_link(
    PLANNER_PAGE,
    label="What to buy next: the cheapest mix of human votes and judge verdicts, in the Study planner",
    icon=":material/science:",
)
