"""The Leaderboard's "How many votes hold the order": a column of the leaderboard (:mod:`lib.ranking.robustness`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from lib.errors import InputError
from lib.io.export import csv_text
from lib.ranking.robustness import (
    HOLDS,
    MAX_SHARE,
    ROBUSTNESS_TOP,
    UNCONFIRMED,
    check_robustness,
    estimate_text,
    vote_robustness,
)
from ui.keys import LB_ROBUSTNESS
from ui.tables import show_table
from ui.text import escape_markdown

COLUMN = "flips if N votes are dropped"
"""The leaderboard's column: on a system's row, how many votes hold it above the next system."""


def _cell(row) -> str:
    """A pair's entry of the column: the count and share when a refit confirmed it, else what was found."""
    if row.confirmed:
        return f"{row.votes_to_flip:,} ({row.share_of_votes:.2%})"
    return f"none within {MAX_SHARE:.0%}" if row.outcome == HOLDS else UNCONFIRMED


def with_robustness(result, data, board: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard with the column :data:`COLUMN` when "How many votes hold the order" is ticked.

    Computed once per fit and number of systems (kept in session state; it refits the leaderboard about once a
    pair), with its time estimated first; the pairs' table and ``robustness.csv`` are shown below it.

    Parameters
    ----------
    result : lib.ranking.run.RankingResult
    data : lib.inputs.AnalysisInput
        The input the leaderboard was fitted to.
    board : DataFrame
        The leaderboard as shown.

    Returns
    -------
    DataFrame
        ``board``, with :data:`COLUMN` after ``p_best`` when ticked (empty for the systems below the pairs).
    """
    try:
        check_robustness(data, result.fit.settings)
        why = None
    except InputError as err:
        why = str(err)
    c = st.columns([2, 1])
    on = c[0].checkbox(
        "How many votes hold the order",
        key="lb_robust",
        disabled=why is not None,
        help=escape_markdown(why)
        if why
        else "For each adjacent pair of the top systems: the fewest votes whose removal swaps them, found by each "
        "vote's influence on the fit and confirmed by refitting without them (Broderick, Giordano & Meager's "
        "AMIP). Each pair takes a refit or a few.",
    )
    top = int(
        c[1].number_input(
            "Pairs among the top", 2, max(2, len(board)), min(ROBUSTNESS_TOP, len(board)), key="lb_robust_top"
        )
    )
    if not on or why is not None:
        return board
    key = (result.fit.cache_key, top)
    kept = st.session_state.get(LB_ROBUSTNESS)
    if kept is None or kept[0] != key:
        st.caption(escape_markdown(estimate_text(result, top)) + ".")
        bar = st.progress(0.0, text="starting")
        try:
            table = vote_robustness(
                data, result, top=top, progress=lambda f, msg: bar.progress(min(f, 1.0), text=escape_markdown(msg))
            )
        except InputError as err:
            bar.empty()
            st.error(f"Cannot find how many votes hold the order: {escape_markdown(err)}")
            return board
        bar.empty()
        kept = (key, table)
        st.session_state[LB_ROBUSTNESS] = kept
    table = kept[1]
    cells = pd.Series([_cell(r) for r in table.itertuples()], index=table["system_a"])
    shown = board.copy()
    shown.insert(list(shown.columns).index("p_best") + 1, COLUMN, shown["system"].map(cells).fillna(""))
    st.caption(
        f"**{COLUMN}**: on a system's row, how many votes, dropped from the file, put the next system above it "
        "(refitted: the posterior mean skills swap). The rows of those votes are in robustness.csv."
    )
    with st.expander("How many votes hold the order: each pair"):
        show_table(table, key="lb_robustness_table")
        st.download_button("robustness.csv", csv_text(table), "robustness.csv", mime="text/csv", key="lb_dl_robustness")
    return shown
