"""Data: choose a bundled data set or upload judgments, map columns, check and summarise them."""

import pandas as pd
import streamlit as st

from lib.datasets import DATASETS
from lib.errors import InputError
from lib.formats import FORMATS, ROLES, guess_columns, read_csv
from lib.inputs import AnalysisInput, analysis_input
from lib.plots.irt import net_rating_heatmap
from lib.ratings import fleiss_kappa
from pages.common import cached_bundled

UPLOAD = "upload"
NONE = "(none)"


@st.cache_data
def cached_table(data: bytes, name: str) -> pd.DataFrame:
    return read_csv(data, name)


@st.cache_data(show_spinner="Reading your file…")
def cached_upload(data: bytes, name: str, fmt: str, columns: dict, criterion: str | None,
                  merge: bool) -> AnalysisInput:
    # The table is parsed once per upload (cached_table), whatever the mapping.
    return analysis_input(cached_table(data, name), fmt, columns, file=name, criterion=criterion,
                          merge_redundant=merge)


def choose_upload() -> AnalysisInput | None:
    file = st.file_uploader("Judgments CSV (UTF-8)", type=["csv"], key="data_upload")
    if file is None:
        st.info("Upload a CSV of judgments, or pick a bundled data set above.")
        return None
    raw = file.getvalue()
    table = cached_table(raw, file.name)
    fmt = st.selectbox("Format", FORMATS, key="data_format",
                       help="pairwise: A/B/tie votes; bestworst: MOST/LEAST picks; ranking: a rank "
                            "per system; responses: person, item, score; ratings: scores per system")
    required, optional = ROLES[fmt]
    guesses = guess_columns(list(table.columns), fmt)
    st.caption("Map your columns onto the format's roles (guesses preselected).")
    columns = {}
    cols = st.columns(4)
    for n, role in enumerate(required + optional):
        options = list(table.columns) if role in required else [NONE, *table.columns]
        guess = guesses.get(role)
        index = options.index(guess) if guess in options else 0
        choice = cols[n % 4].selectbox(role + ("" if role in required else " (optional)"), options,
                                       index=index, key=f"data_role_{fmt}_{role}")
        columns[role] = "" if choice == NONE else choice
    criterion = None
    if "criterion" in optional and columns.get("criterion"):
        values = sorted(table[columns["criterion"]].unique())
        if len(values) > 1:
            criterion = st.selectbox("Criterion", values, key="data_up_criterion")
    merge = st.toggle("Average redundant prompts (correlation > 0.6)", value=True,
                      key="data_up_merge", disabled=fmt == "responses")
    return cached_upload(raw, file.name, fmt, columns, criterion, merge)


def choose_bundled(key: str) -> AnalysisInput:
    ds = DATASETS[key]
    st.caption(f"{ds.description}  \n**Licence:** {ds.licence}. **Source:** {ds.citation}")
    criterion = None
    if len(ds.criteria) > 1:
        criterion = st.selectbox("Criterion", ds.criteria, key="data_criterion")
    merge = st.toggle("Average redundant prompts (correlation > 0.6)", value=True,
                      key="data_merge", disabled=ds.fmt == "responses",
                      help="Sedoc & Ungar average prompts whose net ratings correlate above 0.6 "
                           "over comparisons, so that near-copies do not overstate significance.")
    return cached_bundled(key, criterion, merge)


def summary(data: AnalysisInput) -> None:
    rm = data.matrix
    cols = st.columns(6)
    cols[1].metric("comparisons" if data.fmt != "responses" else "persons", rm.shape[0])
    cols[2].metric("prompts" if data.fmt != "responses" else "items", rm.shape[1])
    if data.judgments is not None:
        votes = data.judgments.votes
        if data.criterion:
            votes = votes[votes["criterion"] == data.criterion]
        systems = pd.unique(votes[["system_a", "system_b"]].to_numpy().ravel())
        cols[0].metric("systems", len(systems))
        cols[3].metric("annotators", votes["annotator_id"].nunique())
        cols[4].metric("votes", len(votes))
        cols[5].metric("tie rate", f"{(votes['winner'] == 'tie').mean():.0%}")
        kappa, n = fleiss_kappa(votes)
        st.caption(f"Fleiss' kappa over a / b / tie: **{kappa:.3f}** ({n} prompt x comparison "
                   "cells with the most common number of votes).")
    elif data.ratings is not None:
        cols[0].metric("systems", data.ratings["system"].nunique())
    merged = rm.groups.groupby("group")["prompt_id"].agg(list)
    merged = merged[merged.map(len) > 1]
    if len(merged):
        with st.expander(f"{len(merged)} redundancy groups averaged "
                         f"({sum(map(len, merged))} prompts → {len(merged)})"):
            st.dataframe(pd.DataFrame({"group": merged.index, "prompts": merged.map(", ".join)}),
                         hide_index=True)
    st.plotly_chart(net_rating_heatmap(rm.u, list(rm.comparisons["comparison"]),
                                       list(rm.prompt_ids)), key="data_heatmap")


st.title("Data")
keys = list(DATASETS) + [UPLOAD]
key = st.radio("Judgments", keys, horizontal=True, key="dataset",
               format_func=lambda k: "Upload a CSV" if k == UPLOAD else DATASETS[k].title)
try:
    data = choose_upload() if key == UPLOAD else choose_bundled(key)
except InputError as err:
    st.error(f"Cannot use this data: {err}")
    data = None
if data is not None:
    st.session_state["analysis_input"] = data
    summary(data)
