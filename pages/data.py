"""Data: choose a bundled data set or upload judgments, map columns, check and summarise them.

The user's choices are kept in session_state keys that are not widget keys (ui.common), so they
survive other pages; an upload whose mapping or design cannot be used leaves no data active.
"""

import pandas as pd
import streamlit as st

from lib.errors import InputError
from lib.inputs import AnalysisInput
from lib.irt.data_checks import design_report
from lib.judgments.datasets import DATASETS
from lib.judgments.formats import FORMATS, NO_ANNOTATOR_NOTE, guess_format
from lib.judgments.ratings import fleiss_kappa, merge_warning
from lib.plots.irt import net_rating_heatmap
from ui.common import (
    NO_FILTER,
    UPLOAD,
    UPLOAD_WIDGETS,
    UPLOADER,
    bundled_criterion,
    cached_bundled,
    cached_table,
    cached_upload,
    keep_upload,
    kept_note,
    restore,
    sync_url,
    upload_criteria,
    upload_mapping,
)
from ui.judges import judge_upload
from ui.keys import (
    ANALYSIS_INPUT,
    DATA_CRITERION,
    DATA_MERGE,
    DATASET,
    UP_CRITERION,
    UP_DROP_INCOMPLETE,
    UP_FILTER_COLUMN,
    UP_FILTER_VALUES,
    UP_FORMAT,
    UPLOAD_CRITERION,
    UPLOAD_DROP,
    UPLOAD_FILTER_COLUMN,
    UPLOAD_FILTER_VALUES,
    UPLOAD_FORMAT,
    UPLOAD_MAPPING,
    UPLOADED,
    VIEW_CRITERION,
    VIEW_DATASET,
    VIEW_MERGE,
)
from ui.mapping import column_mapping
from ui.navigation import serve_through_app
from ui.tables import show_table
from ui.text import escape_markdown

serve_through_app()  # opened by its URL on a fresh server, the page runs alone: app.py serves it


def merge_toggle(disabled: bool) -> bool:
    restore(DATA_MERGE, VIEW_MERGE)
    merge = st.toggle(
        "Average redundant prompts (correlation credibly > 0.6)",
        key=DATA_MERGE,
        disabled=disabled,
        help="Sedoc & Ungar average prompts whose net ratings correlate above 0.6 over "
        "comparisons, so that near-copies do not overstate significance. Merged "
        "only where r's one-sided 95% lower bound exceeds 0.6 over at least 10 "
        "independent comparisons (at most S - 1 for S systems), every member "
        "linked to every other.",
    )
    st.session_state[VIEW_MERGE] = merge
    return merge


def uploaded_file() -> tuple[str, bytes] | None:
    """The file uploaded now, else the one uploaded earlier in the session (the uploader widget
    forgets its file when another page is shown)."""
    file = st.file_uploader(
        "Judgments CSV (UTF-8 or UTF-16; comma, semicolon, tab or | separated)",
        type=["csv", "tsv", "txt"],
        key=UPLOADER,
    )
    keep_upload(file)
    return st.session_state[UPLOADED]


def row_filters(table: pd.DataFrame) -> dict[str, list[str]]:
    """``{column: values to keep}`` chosen by the user (empty: every row)."""
    with st.expander("Filter rows", expanded=st.session_state[UPLOAD_FILTER_COLUMN] != NO_FILTER):
        c = st.columns(2)
        options = [NO_FILTER, *table.columns]
        restore(UP_FILTER_COLUMN, UPLOAD_FILTER_COLUMN, options)
        column = c[0].selectbox("Keep only the rows whose column", options, key=UP_FILTER_COLUMN)
        st.session_state[UPLOAD_FILTER_COLUMN] = column
        if column == NO_FILTER:
            return {}
        values = sorted(set(table[column].str.strip()))
        if not set(st.session_state.get(UP_FILTER_VALUES, [])) <= set(values):
            del st.session_state[UP_FILTER_VALUES]  # values of the column chosen before
        st.session_state[UPLOAD_FILTER_VALUES] = [v for v in st.session_state[UPLOAD_FILTER_VALUES] if v in values]
        restore(UP_FILTER_VALUES, UPLOAD_FILTER_VALUES)
        keep = c[1].multiselect("has one of the values", values, key=UP_FILTER_VALUES)
        st.session_state[UPLOAD_FILTER_VALUES] = keep
    return {column: keep} if keep else {}


def choose_upload() -> AnalysisInput | None:
    upload = uploaded_file()
    if upload is None:
        st.info("Upload a CSV of judgments, or pick a bundled data set above.")
        return None
    name, raw = upload
    st.caption(f"Using {escape_markdown(name)} (upload another file to replace it). " + kept_note())
    table = cached_table(raw, name)
    columns = list(table.columns)
    if st.session_state[UPLOAD_FORMAT] is None:
        st.session_state[UPLOAD_FORMAT] = guess_format(columns)
    formats = list(FORMATS)
    if UP_FORMAT not in st.session_state:  # a new upload, or the page shown again
        # Set even when None: the browser then clears the last file's format instead of showing it while
        # the page asks for one, which swallowed a first choice of that same format (issue 16, item 15).
        st.session_state[UP_FORMAT] = st.session_state[UPLOAD_FORMAT]
    fmt = st.selectbox(
        "Format",
        formats,
        index=None,
        key=UP_FORMAT,
        placeholder="choose the format",
        help="; ".join(f"{name}: {spec.help}" for name, spec in FORMATS.items()),
    )
    st.session_state[UPLOAD_FORMAT] = fmt
    if fmt is None:
        st.info("The format could not be told from the column names: choose it above.")
        return None

    spec = FORMATS[fmt]
    st.caption("Map your columns onto the format's roles (guesses preselected).")
    mapping, missing = column_mapping(
        columns,
        spec.required,
        spec.optional,
        upload_mapping(table, fmt),
        key=f"{UPLOAD_WIDGETS}{fmt}",
        combine=True,
    )
    st.session_state[UPLOAD_MAPPING] = {**st.session_state[UPLOAD_MAPPING], fmt: mapping}
    if missing:
        st.info(
            f"Choose a column for the required role{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)} (no column name was recognised for it)."
        )
        return None

    criterion = None
    if len(values := upload_criteria(table, mapping, name)) > 1:
        if st.session_state[UPLOAD_CRITERION] not in values:
            st.session_state[UPLOAD_CRITERION] = values[0]
        restore(UP_CRITERION, UPLOAD_CRITERION, values)
        criterion = st.selectbox("Criterion", values, key=UP_CRITERION)
    st.session_state[UPLOAD_CRITERION] = criterion
    filters = row_filters(table)
    restore(UP_DROP_INCOMPLETE, UPLOAD_DROP)
    drop = st.toggle(
        "Drop incomplete rows",
        key=UP_DROP_INCOMPLETE,
        help="Leave out the rows with a blank cell in a required role (of the chosen "
        "criterion); the rows left out are counted and listed.",
    )
    st.session_state[UPLOAD_DROP] = drop
    merge = merge_toggle(not spec.merge)
    data = cached_upload(raw, name, fmt, mapping, criterion, merge, filters, drop)
    if data.dropped_rows:
        rows = ", ".join(map(str, data.dropped_rows[:20])) + (" ..." if len(data.dropped_rows) > 20 else "")
        st.info(f"Dropped {len(data.dropped_rows)} incomplete rows (a blank required cell): rows {rows}.")
    return data


def choose_bundled(key: str) -> AnalysisInput:
    ds = DATASETS[key]
    st.caption(f"{ds.description}  \n**Licence:** {ds.licence}. **Source:** {ds.citation}")
    criterion = None
    if len(ds.criteria) > 1:
        st.session_state[VIEW_CRITERION] = bundled_criterion(key)
        restore(DATA_CRITERION, VIEW_CRITERION, ds.criteria)
        criterion = st.selectbox("Criterion", ds.criteria, key=DATA_CRITERION)
        st.session_state[VIEW_CRITERION] = criterion
    return cached_bundled(key, criterion, merge_toggle(not FORMATS[ds.fmt].merge))


def summary(data: AnalysisInput) -> None:
    rm = data.matrix
    cols = st.columns(6)
    rows, columns = FORMATS[data.fmt].labels
    cols[1].metric(rows, rm.shape[0])
    cols[2].metric(columns, rm.shape[1])
    if data.judgments is not None:
        votes = data.judgments.votes
        if data.criterion:
            votes = votes[votes["criterion"] == data.criterion]
        systems = pd.unique(votes[["system_a", "system_b"]].to_numpy().ravel())
        cols[0].metric("systems", len(systems))
        anonymous = NO_ANNOTATOR_NOTE in data.judgments.notes
        cols[3].metric("annotators", "anonymous" if anonymous else votes["annotator_id"].nunique())
        cols[4].metric("votes", len(votes))
        cols[5].metric("tie rate", f"{(votes['winner'] == 'tie').mean():.0%}")
        for note in data.judgments.notes:
            st.info(escape_markdown(note[:1].upper() + note[1:]) + ".")
        kappa, n = fleiss_kappa(votes)
        st.caption(
            f"Fleiss' kappa over a / b / tie: **{kappa:.3f}** ({n} prompt x comparison "
            "cells with the most common number of votes)."
        )
    elif data.ratings is not None and "system" in data.ratings:
        cols[0].metric("systems", data.ratings["system"].nunique())
    merged = rm.groups.groupby("group")["prompt_id"].agg(list)
    merged = merged[merged.map(len) > 1]
    if len(merged):
        with st.expander(f"{len(merged)} redundancy groups averaged ({sum(map(len, merged))} prompts → {len(merged)})"):
            show_table(pd.DataFrame({"group": merged.index, "prompts": merged.map(", ".join)}))
    st.plotly_chart(
        net_rating_heatmap(rm.u, list(rm.comparisons["comparison"]), list(rm.prompt_ids)), key="data_heatmap"
    )


st.title("Data")
keys = [*DATASETS, UPLOAD]
restore(DATASET, VIEW_DATASET, keys)
key = st.radio(
    "Judgments",
    keys,
    horizontal=True,
    key=DATASET,
    format_func=lambda k: "Upload a CSV" if k == UPLOAD else DATASETS[k].title,
)
st.session_state[VIEW_DATASET] = key
try:
    data = choose_upload() if key == UPLOAD else choose_bundled(key)
    report = design_report(data.matrix) if data is not None else None
except InputError as err:
    st.error(f"Cannot use this data: {escape_markdown(err)}")
    data = report = None
if report is not None:
    for problem in report.errors:
        st.error(f"Cannot use this data: {escape_markdown(problem)}")
    for warning in report.warnings:
        st.warning(escape_markdown(warning))
    if report.errors:
        data = None
# Never the previous data: after an upload that cannot be used, no data is active.
st.session_state[ANALYSIS_INPUT] = data
sync_url()
if data is not None:
    if (warning := merge_warning(data.matrix)) is not None:
        st.warning(escape_markdown(warning))
    summary(data)
    judge_upload(data)
