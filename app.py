"""Entry point: navigation, shared chrome and session defaults (run with ``make run``)."""

import streamlit as st

from pages.common import UPLOAD, current_fit, init_state, link_problems, sync_url
from pages.entry import mark_served
from pages.text import escape_markdown

st.set_page_config(page_title="Efficient human evaluation", layout="wide")
init_state()
mark_served()

PAGES = {
    "Judgments and IRT": [
        st.Page("pages/data.py", title="Data", icon=":material/table:", default=True),
        st.Page("pages/abilities.py", title="Abilities", icon=":material/leaderboard:"),
        st.Page("pages/leaderboard.py", title="Leaderboard", icon=":material/trophy:"),
        st.Page("pages/prompts.py", title="Prompts", icon=":material/quiz:"),
        st.Page("pages/diagnostics.py", title="Diagnostics", icon=":material/monitor_heart:"),
        st.Page("pages/selection.py", title="Prompt selection", icon=":material/filter_alt:"),
        st.Page("pages/planner.py", title="Study planner", icon=":material/science:"),
    ],
    "Other analyses": [
        st.Page("pages/revision.py", title="Revision edits", icon=":material/edit_note:"),
        st.Page("pages/cost.py", title="Human cost", icon=":material/timer:"),
    ],
}

page = st.navigation(PAGES)
for problem in link_problems():
    st.warning(f"The link's settings were not used: {escape_markdown(problem)}")

page.run()
sync_url()

# Shared chrome after the page, so it shows what the page just did (data chosen, fit made).
with st.sidebar:
    data = st.session_state.get("analysis_input")
    fit = current_fit(data) if data is not None else None
    if data is not None:
        # User text (file name, criterion) is escaped: it must not render as Markdown.
        st.caption(f"**Data:** {escape_markdown(data.source)}"
                   + (f" · {escape_markdown(data.criterion)}" if data.criterion else ""))
    else:
        st.caption("**Data:** none: " + ("your upload is not usable yet (Data page)"
                                         if st.session_state["view_dataset"] == UPLOAD else "not read yet"))
    if fit is None:
        st.caption("**Fit:** none yet (Abilities page)")
    else:
        d = fit.diagnostics
        st.caption(f"**Fit:** {d.sampler}, {d.chains}x{d.draws}"
                   + (" ⚠️ check diagnostics" if d.warnings else " ✓"))
