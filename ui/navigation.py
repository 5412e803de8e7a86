"""The app's pages, and app.py serving a page opened by its URL on a fresh server.

Streamlit serves a ``pages/`` folder beside the entry point in its legacy multipage mode (every file
a page, run without app.py) until some session calls ``st.navigation``; from then on it ignores the
folder in every session (Streamlit's documentation of ``st.navigation``). The first script run of a
server process that imports :mod:`ui` is therefore either app.py (which calls ``st.navigation``
itself) or a page that the legacy mode runs alone because its URL was opened first. Importing
:mod:`ui` calls :func:`serve_through_app` once per process, so no page has to.
"""

from __future__ import annotations

import streamlit as st

from lib.paths import ROOT

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

_HANDED_OVER = "navigation_handed_over"
"""Session key set by :func:`serve_through_app` (its rerun must not hand over again)."""


def app_pages() -> dict[str, list[st.Page]]:
    """The ``st.Page`` objects of :data:`SECTIONS`, for ``st.navigation`` (files by their absolute path,
    so that they are found whichever script Streamlit runs as the entry point)."""
    first = SECTIONS[next(iter(SECTIONS))][0][0]
    return {
        section: [st.Page(ROOT / path, title=title, icon=icon, default=path == first) for path, title, icon in pages]
        for section, pages in SECTIONS.items()
    }


def serve_through_app() -> None:
    """Leave Streamlit's legacy ``pages/`` mode for good and rerun, so that app.py serves this session.

    Calls ``st.navigation`` with the app's pages (which ends the legacy mode in every session and
    resolves the page the URL asked for), then ``st.rerun``: the rerun runs app.py, which serves that
    page with its navigation, chrome and URL state. Once per session: the rerun imports :mod:`ui`
    again (the interrupted import did not complete) and must go on.
    """
    if st.session_state.get(_HANDED_OVER):
        return
    st.session_state[_HANDED_OVER] = True
    st.navigation(app_pages())
    st.rerun()
