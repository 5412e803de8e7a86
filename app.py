"""Entry point: navigation, shared chrome and session defaults (run with ``make run``)."""

import streamlit as st

from pages.common import current_fit, init_state

st.set_page_config(page_title="Efficient human evaluation", layout="wide")
init_state()

PAGES = {
    "Judgments and IRT": [
        st.Page("pages/data.py", title="Data", icon=":material/table:", default=True),
        st.Page("pages/abilities.py", title="Abilities", icon=":material/leaderboard:"),
        st.Page("pages/prompts.py", title="Prompts", icon=":material/quiz:"),
        st.Page("pages/selection.py", title="Prompt selection", icon=":material/filter_alt:"),
    ],
    "Other analyses": [
        st.Page("pages/revision.py", title="Revision edits", icon=":material/edit_note:"),
        st.Page("pages/cost.py", title="Human cost", icon=":material/timer:"),
    ],
}

page = st.navigation(PAGES)

page.run()

# Shared chrome after the page, so it shows what the page just did (data chosen, fit made).
with st.sidebar:
    data = st.session_state.get("analysis_input")
    fit = current_fit(data) if data is not None else None
    st.caption(f"**Data:** {data.source if data else 'default (' + st.session_state['dataset'] + ')'}"
               + (f" · {data.criterion}" if data and data.criterion else ""))
    if fit is None:
        st.caption("**Fit:** none yet (Abilities page)")
    else:
        d = fit.diagnostics
        st.caption(f"**Fit:** {d.sampler}, {d.chains}x{d.draws}"
                   + (" ⚠️ check diagnostics" if d.warnings else " ✓"))
