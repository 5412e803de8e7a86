"""Where a fit's time went and how its sampling stopped, on a page (Abilities, Leaderboard)."""

from __future__ import annotations

import streamlit as st

from lib.inference.timings import timings_table
from ui.tables import show_table


def show_timings(timings: dict[str, float]) -> None:
    """An expander "Time per phase" with the seconds of each phase (:func:`lib.inference.timings.timings_table`,
    a static table: the page's data tables stay its only interactive ones); nothing when the fit has none
    (one read from a cache written before they were kept)."""
    if timings:
        with st.expander("Time per phase"):
            show_table(timings_table(timings).set_index("phase"), static=True)


def stopped_words(stopped: str) -> str:
    """How a fit sampled to a target ESS stopped (``Diagnostics.stopped``: "target" or "ceiling"), in the
    pages' words."""
    return "the target was reached" if stopped == "target" else "the ceiling (Draws) was reached first"
