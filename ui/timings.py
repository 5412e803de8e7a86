"""Where a fit's time went and how its sampling stopped, on a page (Abilities, Leaderboard); how long the
server took to answer a click."""

from __future__ import annotations

import time

import streamlit as st

from lib.inference.timings import timings_table
from ui.keys import RUN_STARTED
from ui.tables import show_table


def show_timings(timings: dict[str, float]) -> None:
    """An expander "Time per phase" with the seconds of each phase (:func:`lib.inference.timings.timings_table`,
    a static table: the page's data tables stay its only interactive ones); nothing when the fit has none
    (one read from a cache written before they were kept)."""
    if timings:
        with st.expander("Time per phase"):
            show_table(timings_table(timings).set_index("phase"), formats={"seconds": "%.3f"}, static=True)


def stopped_words(stopped: str) -> str:
    """How a fit sampled to a target ESS stopped (``Diagnostics.stopped``: "target" or "ceiling"), in the
    pages' words."""
    return "the target was reached" if stopped == "target" else "the ceiling (Draws) was reached first"


COMPUTED_IN = "Computed in"
"""How :func:`server_time_text` begins (the browser tests find the message by it)."""


def mark_run_start() -> None:
    """Note when this run of the app began: a click's rerun starts here (first thing in app.py)."""
    st.session_state[RUN_STARTED] = time.perf_counter()


def run_start() -> float:
    """``time.perf_counter()`` when this run began (:func:`mark_run_start`), else now (a page run on its own)."""
    return st.session_state.get(RUN_STARTED, time.perf_counter())


def server_time_text(started: float) -> str:
    """What the server measured, said as such: the seconds from ``started`` (:func:`run_start`) to now.

    The browser shows the result later than this: the click's trip to the server and the drawing of the
    page are not in it, and take longer on a busy machine (seconds on a loaded 2-core one)."""
    return (
        f"{COMPUTED_IN} {time.perf_counter() - started:.2f} s on the server: from the start of the run your "
        "click began to this message (reading the data, fitting, building the tables and charts). Not counted: the "
        "click's trip to the server and the browser drawing the page, longer on a busy machine."
    )
