"""The operator's secret in front of the researcher's pages (rule: :mod:`lib.study.access`).

Not a page module; app.py serves :func:`secret_page` alone (hidden navigation) while
:func:`needs_secret` holds, so no researcher's page runs before the secret is given.
"""

from __future__ import annotations

import math

import streamlit as st

from lib.study import access
from lib.study.access import SECRET_ENV, operator_secret, secret_required
from ui.keys import OPERATOR_OK
from ui.text import escape_markdown


def needs_secret() -> bool:
    """Whether this session must give the operator's secret before a researcher's page is shown."""
    return not st.session_state.get(OPERATOR_OK) and secret_required(st.get_option("server.address"))


def secret_page() -> None:
    """Ask for the operator's secret, or say why the researcher's pages are closed."""
    st.title("Operator's secret")
    if operator_secret() is None:
        where = escape_markdown(st.get_option("server.address") or "every interface")
        st.error(
            f"This app is served beyond this machine (server.address = {where}), "
            f"so the researcher's pages need the operator's secret, and none is set: start the app with "
            f"`{SECRET_ENV}` set (docs/studies.md). Annotators' links work without it."
        )
        return
    with st.form("operator_secret"):
        given = st.text_input("Operator's secret", type="password")
        sent = st.form_submit_button("Open the researcher's pages")
    if not sent:
        return
    verdict = access.GATE.check(given, operator_secret())
    if verdict.ok:
        st.session_state[OPERATOR_OK] = True
        st.rerun()
    later = f" The next guess is taken in {math.ceil(verdict.wait_s)} s." if verdict.wait_s > 0 else ""
    if verdict.checked:
        st.error(f"That is not the operator's secret.{later}")
    else:
        st.error(f"Too many wrong guesses: this one was not checked.{later}")


def serve_secret_page() -> None:
    """Serve :func:`secret_page` alone: no navigation to the researcher's pages."""
    gate = st.Page(secret_page, title="Operator's secret", icon=":material/lock:", default=True)
    st.navigation([gate], position="hidden").run()
