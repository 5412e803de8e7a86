"""Entry point: navigation, shared chrome and session defaults (run with ``make run``)."""

import streamlit as st

from lib.study.create import TOKEN_PARAM
from lib.study.crowd import CROWD_PARAM
from ui.access import needs_secret, serve_secret_page
from ui.annotate import serve_annotator
from ui.common import UPLOAD, current_fit, init_state, link_problems, sync_url
from ui.keys import ANALYSIS_INPUT, VIEW_DATASET
from ui.navigation import navigation
from ui.text import escape_markdown
from ui.timings import mark_run_start

st.set_page_config(page_title="Efficient human evaluation", layout="wide")
mark_run_start()  # a click's rerun starts here (the Abilities page says how long the server took since)
if TOKEN_PARAM in st.query_params or CROWD_PARAM in st.query_params:
    # An annotator's link (private, or a crowd study's): the annotation page alone, no navigation, no
    # analysis page, no URL state, no Streamlit chrome.
    serve_annotator()
    st.stop()
if needs_secret():
    # Served beyond this machine (or a secret is set): the secret's page alone until it is given.
    serve_secret_page()
    st.stop()
init_state()

page = navigation()
for problem in link_problems():
    st.warning(f"The link's settings were not used: {escape_markdown(problem)}")

page.run()
sync_url()

# Shared chrome after the page, so it shows what the page just did (data chosen, fit made).
with st.sidebar:
    data = st.session_state.get(ANALYSIS_INPUT)
    fit = current_fit(data) if data is not None else None
    if data is not None:
        # User text (file name, criterion) is escaped: it must not render as Markdown.
        st.caption(
            f"**Data:** {escape_markdown(data.source)}"
            + (f" · {escape_markdown(data.criterion)}" if data.criterion else "")
        )
    else:
        st.caption(
            "**Data:** none: "
            + (
                "your upload is not usable yet (Data page)"
                if st.session_state[VIEW_DATASET] == UPLOAD
                else "not read yet"
            )
        )
    if fit is None:
        st.caption("**Fit:** none yet (Abilities page)")
    else:
        d = fit.diagnostics
        st.caption(f"**Fit:** {d.sampler}, {d.chains}x{d.draws}" + (" ⚠️ check diagnostics" if d.warnings else " ✓"))
