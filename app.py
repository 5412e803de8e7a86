"""Entry point: navigation, shared chrome and session defaults (run with ``make run``)."""

import streamlit as st

st.set_page_config(page_title="Efficient human evaluation", layout="wide")

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
