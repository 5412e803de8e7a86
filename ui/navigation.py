"""The app's pages, and app.py serving a page opened by its URL on a fresh server.

Streamlit serves a ``pages/`` folder beside the entry point in its legacy multipage mode (every file
a page, run without app.py) until some session calls ``st.navigation``; from then on it ignores the
folder in every session (Streamlit's documentation of ``st.navigation``). The first script run of a
server process is therefore either app.py (which calls ``st.navigation`` itself, :func:`navigation`)
or a page that the legacy mode runs alone because its URL was opened first. Every page therefore calls
:func:`serve_through_app` as its first statement; importing :mod:`ui` does nothing.
"""

from __future__ import annotations

import threading

import streamlit as st

from lib.io.paths import ROOT

SECTIONS = {
    "Judgments and IRT": [
        ("pages/data.py", "Data", ":material/table:"),
        ("pages/abilities.py", "Abilities", ":material/leaderboard:"),
        ("pages/leaderboard.py", "Leaderboard", ":material/trophy:"),
        ("pages/judges.py", "Judges", ":material/gavel:"),
        ("pages/prompts.py", "Prompts", ":material/quiz:"),
        ("pages/diagnostics.py", "Diagnostics", ":material/monitor_heart:"),
        ("pages/selection.py", "Prompt selection", ":material/filter_alt:"),
        ("pages/planner.py", "Study planner", ":material/science:"),
        ("pages/studies.py", "Studies", ":material/assignment:"),
    ],
    "Other analyses": [
        ("pages/revision.py", "Revision edits", ":material/edit_note:"),
        ("pages/cost.py", "Human cost", ":material/timer:"),
    ],
}
"""Navigation section -> its pages as (file relative to app.py, title, icon); the first page is the
default one."""

_LEGACY_MODE_OVER = threading.Event()
"""Set once this process has called ``st.navigation`` (:func:`navigation`): Streamlit has then left the
legacy ``pages/`` mode in every session, and no page needs handing over. Process-wide, as the
hand-over was when importing :mod:`ui` made it (once per process)."""


def app_pages() -> dict[str, list[st.Page]]:
    """The ``st.Page`` objects of :data:`SECTIONS`, for ``st.navigation`` (files by their absolute path,
    so that they are found whichever script Streamlit runs as the entry point)."""
    first = SECTIONS[next(iter(SECTIONS))][0][0]
    return {
        section: [st.Page(ROOT / path, title=title, icon=icon, default=path == first) for path, title, icon in pages]
        for section, pages in SECTIONS.items()
    }


def navigation() -> st.Page:
    """``st.navigation`` with the app's pages (app.py's call, and the hand-over's): the page to run."""
    page = st.navigation(app_pages())
    _LEGACY_MODE_OVER.set()
    return page


def serve_through_app() -> None:
    """Leave Streamlit's legacy ``pages/`` mode for good and rerun, so that app.py serves this session.

    Every page's first statement. Calls ``st.navigation`` with the app's pages (which ends the legacy
    mode in every session and resolves the page the URL asked for), then ``st.rerun``: the rerun runs
    app.py, which serves that page with its navigation, chrome and URL state. Once per process: after
    any ``st.navigation`` (app.py's or this one) there is no legacy mode left to leave.
    """
    if _LEGACY_MODE_OVER.is_set():
        return
    navigation()
    st.rerun()
