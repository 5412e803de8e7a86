"""Every page is served through app.py, also when it is opened by its URL on a fresh server.

Not a page itself. Until some run of app.py calls ``st.navigation``, Streamlit serves a ``pages/``
folder in its first multipage mode: a page opened by its URL runs without app.py (no shared chrome,
no URL state) and the sidebar lists every module of the folder, helpers included, as a page.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

_SERVED = "entry_served_by_app"
"""Session key set once app.py has run in the session."""


def mark_served() -> None:
    """Called by app.py on every run."""
    st.session_state[_SERVED] = True


def served_by_app() -> None:
    """Call first on every page. On a session's first run in that first mode (app.py has not run
    yet), leave the mode as ``st.navigation`` does and rerun, so that app.py serves the page the
    URL asked for. Later runs are left alone: a rerun would drop the click that caused them."""
    if PagesManager.uses_pages_directory and not st.session_state.get(_SERVED):
        PagesManager.uses_pages_directory = False
        st.rerun()
