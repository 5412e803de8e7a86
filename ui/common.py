"""State shared by the IRT pages: the analysis input chosen on the Data page and the fit.

Not a page itself (app.py lists the pages); imported as ``ui.common``.

Streamlit forgets a widget's value when its page is not shown, so the user's choices live in
session_state keys that are not widget keys (``view_*``, ``upload*``); the Data page seeds its
widgets from them (:func:`restore`). The view (data set, criterion, merge) is also in the URL.
"""

from __future__ import annotations

from typing import Protocol

import pandas as pd
import streamlit as st

from lib.errors import FormatError, InputError
from lib.inputs import AnalysisInput, analysis_input, bundled_input
from lib.io.tables import combine_columns, guess_roles, read_csv
from lib.io.uploads import MAX_AGE_DAYS, keep_choices, kept_upload
from lib.io.uploads import keep_upload as store_upload
from lib.irt.data_checks import UNPAIRED, design_report
from lib.irt.settings import fit_settings
from lib.judgments.datasets import DATASETS, DEFAULT_DATASET
from lib.judgments.formats import FORMATS, guess_format
from ui.keys import (
    ANALYSIS_INPUT,
    FIT,
    FIT_SETTINGS,
    JUDGE_FILE,
    LINK_PROBLEMS,
    RANKING,
    UPLOAD_CRITERION,
    UPLOAD_DROP,
    UPLOAD_FILTER_COLUMN,
    UPLOAD_FILTER_VALUES,
    UPLOAD_FORMAT,
    UPLOAD_KEPT,
    UPLOAD_KEY,
    UPLOAD_MAPPING,
    UPLOADED,
    VIEW_CRITERION,
    VIEW_DATASET,
    VIEW_MERGE,
)
from ui.text import escape_markdown

UPLOAD = "upload"
"""The data-set key of the user's upload (the only one that is not in ``DATASETS``)."""

NO_FILTER = "(no filter)"

UPLOADER = "data_upload"
"""Widget key of the Data page's judgments uploader."""

UPLOAD_CHOICES = (
    UPLOAD_FORMAT,
    UPLOAD_MAPPING,
    UPLOAD_CRITERION,
    UPLOAD_FILTER_COLUMN,
    UPLOAD_FILTER_VALUES,
    UPLOAD_DROP,
)
"""The Data page's choices for reading the upload, kept on disk with it (:func:`sync_url`)."""

UPLOAD_WIDGETS = "up_"
"""Prefix of the widget keys that belong to one uploaded file (reset when another is uploaded)."""

CACHE_ENTRIES, CACHE_TTL_S = 8, 3600
"""Bounds of the cached readings, so uploads do not pile up in memory."""

DEFAULTS = {
    VIEW_DATASET: DEFAULT_DATASET,  # a key of lib.judgments.datasets.DATASETS, or UPLOAD
    VIEW_CRITERION: None,  # of the bundled data set; None: its first
    VIEW_MERGE: True,
    UPLOADED: None,  # (file name, bytes) of the last file uploaded
    UPLOAD_KEY: None,  # its key on disk (lib.io.uploads), carried in the URL so that a reload finds it; None: not kept
    UPLOAD_KEPT: None,  # the reading choices last stored with it
    UPLOAD_FORMAT: None,
    UPLOAD_MAPPING: {},  # format -> {role: column} ("" = unmapped)
    UPLOAD_CRITERION: None,
    UPLOAD_FILTER_COLUMN: NO_FILTER,  # keep only rows whose column has one of the values
    UPLOAD_FILTER_VALUES: [],
    UPLOAD_DROP: False,
    ANALYSIS_INPUT: None,  # set by the Data page (or a page that read the upload first); None: no usable data
    FIT_SETTINGS: fit_settings(),  # the command's defaults (the Abilities page chooses the cutpoints)
    FIT: None,  # the GRMFit shown on the Abilities and Prompts pages
    JUDGE_FILE: None,  # (human data source, file name, bytes) of the LLM-judge votes given on the Data page
}


def init_state() -> None:
    """Session defaults, the view taken from the URL on the session's first run (app.py calls
    this once per run)."""
    if VIEW_DATASET not in st.session_state:
        _view_from_url()
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)


def _view_from_url() -> None:
    """``?data=KEY&criterion=NAME&merge=0``: unknown values are reported, not silently ignored."""
    params, problems = st.query_params, []
    key = params.get("data")
    if key is not None:
        if key in DATASETS or key == UPLOAD:
            st.session_state[VIEW_DATASET] = key
        else:
            problems.append(f"unknown data set '{key}' (known: {', '.join(DATASETS)}, {UPLOAD})")
    if key == UPLOAD and params.get(UPLOAD) is not None:
        problems += _upload_from_url(params[UPLOAD])
    crit = params.get("criterion")
    if crit is not None:
        criteria = DATASETS[key].criteria if key in DATASETS else ()
        if crit in criteria:
            st.session_state[VIEW_CRITERION] = crit
        else:
            problems.append(f"unknown criterion '{crit}'" + (f" (known: {', '.join(criteria)})" if criteria else ""))
    merge = params.get("merge")
    if merge is not None:
        if merge in ("0", "1"):
            st.session_state[VIEW_MERGE] = merge == "1"
        else:
            problems.append(f"merge must be 0 or 1, not '{merge}'")
    st.session_state[LINK_PROBLEMS] = problems


def _upload_from_url(key: str) -> list[str]:
    """Restore the upload kept on disk under the link's key (a reload is a new session, with no upload in
    memory), with the Data page's choices; the problem in words when it is not kept (any more)."""
    found = kept_upload(key)
    if found is None:
        return [
            f"your upload is not kept on this server any more (uploads are kept {MAX_AGE_DAYS} days after "
            "their last use, and only the latest): upload the file again on the Data page"
        ]
    keep_choices(key, found.choices)  # written again: a reload is a use, which restarts its days
    st.session_state.update({UPLOADED: (found.name, found.data), UPLOAD_KEY: key, UPLOAD_KEPT: found.choices})
    st.session_state.update({k: v for k, v in found.choices.items() if k in UPLOAD_CHOICES})
    return []


def link_problems() -> list[str]:
    """What the link's settings had that could not be used (each shown once)."""
    return st.session_state.pop(LINK_PROBLEMS, [])


def sync_url() -> None:
    """Write the view into the URL, so a reload or a shared link opens the same view; with an upload kept on
    disk, its key, and its reading choices next to it when they changed (:mod:`lib.io.uploads`)."""
    key = st.session_state[VIEW_DATASET]
    kept = st.session_state.get(UPLOAD_KEY) if key == UPLOAD else None
    choices = {k: st.session_state.get(k, DEFAULTS[k]) for k in UPLOAD_CHOICES}
    if kept is not None and choices != st.session_state.get(UPLOAD_KEPT):
        if not keep_choices(kept, choices):  # removed from disk meanwhile: a reload cannot find it any more
            kept = st.session_state[UPLOAD_KEY] = None
        st.session_state[UPLOAD_KEPT] = choices
    want = {
        "data": key,
        "criterion": None if key == UPLOAD else bundled_criterion(key),
        "merge": "1" if st.session_state[VIEW_MERGE] else "0",
        UPLOAD: kept,
    }
    for name, value in want.items():
        if st.query_params.get(name) != value:
            if value is None:
                del st.query_params[name]
            else:
                st.query_params[name] = value


def restore(widget: str, state: str, options=None) -> None:
    """Seed a widget's key from its state key when Streamlit has dropped it (page not shown).

    ``options``: the widget's choices now; a value not among them (left by other choices, e.g.
    another data set's criterion) is neither kept in the widget nor restored.
    """
    value = st.session_state.get(state)
    if options is not None and widget in st.session_state and st.session_state[widget] not in options:
        del st.session_state[widget]
    if widget not in st.session_state and (options is None or value in options):
        st.session_state[widget] = value


def bundled_criterion(key: str) -> str | None:
    """The chosen criterion of a bundled data set with several, else its first; None with one."""
    crits = DATASETS[key].criteria
    if len(crits) < 2:
        return None
    chosen = st.session_state.get(VIEW_CRITERION)
    return chosen if chosen in crits else crits[0]


@st.cache_data(show_spinner="Reading the bundled data set…", max_entries=CACHE_ENTRIES, ttl=CACHE_TTL_S)
def cached_bundled(key: str, criterion: str | None, merge_redundant: bool) -> AnalysisInput:
    return bundled_input(key, criterion, merge_redundant=merge_redundant)


@st.cache_data(max_entries=CACHE_ENTRIES, ttl=CACHE_TTL_S)
def cached_table(data: bytes, name: str) -> pd.DataFrame:
    return read_csv(data, name)


@st.cache_data(show_spinner="Reading your file…", max_entries=CACHE_ENTRIES, ttl=CACHE_TTL_S)
def cached_upload(
    data: bytes,
    name: str,
    fmt: str,
    columns: dict,
    criterion: str | None,
    merge: bool,
    filters: dict,
    drop_incomplete: bool,
) -> AnalysisInput:
    # The table is parsed once per upload (cached_table), whatever the mapping.
    return analysis_input(
        cached_table(data, name),
        fmt,
        columns,
        file=name,
        criterion=criterion,
        merge_redundant=merge,
        filters=filters,
        drop_incomplete_rows=drop_incomplete,
    )


def current_input(unpaired: bool = False) -> AnalysisInput | None:
    """The analysis input in use: the Data page's choice, else the chosen bundled data set.

    After an upload that could not be used (or before any upload) this is None and the page says
    so: the previous or default data is never analysed in its place. An upload of unpaired ratings
    (no prompt rated for two systems) is returned when the page can rank it (``unpaired``: the
    Leaderboard's ratings likelihood); other pages say why they cannot use it and link to that one.
    """
    init_state()  # a page opened by URL before app.py's first run still finds its defaults
    data = st.session_state.get(ANALYSIS_INPUT)
    if data is not None:
        return data
    key = st.session_state[VIEW_DATASET]
    if key == UPLOAD:
        return _upload_in_use(unpaired)
    try:
        data = cached_bundled(key, bundled_criterion(key), st.session_state[VIEW_MERGE])
    except InputError as err:
        st.error(escape_markdown(err))
        return None
    st.session_state[ANALYSIS_INPUT] = data
    return data


class UploadedCSV(Protocol):
    """What the Data page's uploader gives (Streamlit's uploaded file)."""

    name: str

    def getvalue(self) -> bytes: ...


def keep_upload(file: UploadedCSV | None) -> None:
    """Keep a file given to the Data page's uploader as the session's upload, its choices reset when it is new,
    and on disk for a reload (:mod:`lib.io.uploads`; ``upload_key`` None when it could not be stored)."""
    if file is None or (file.name, file.getvalue()) == st.session_state[UPLOADED]:
        return
    for key in [k for k in st.session_state if str(k).startswith(UPLOAD_WIDGETS)]:
        del st.session_state[key]
    st.session_state.update(
        {
            UPLOADED: (file.name, file.getvalue()),
            UPLOAD_KEY: store_upload(file.name, file.getvalue()),
            UPLOAD_KEPT: None,
            UPLOAD_FORMAT: None,
            UPLOAD_MAPPING: {},
            UPLOAD_CRITERION: None,
            UPLOAD_FILTER_COLUMN: NO_FILTER,
            UPLOAD_FILTER_VALUES: [],
            UPLOAD_DROP: False,
        }
    )


def kept_note() -> str:
    """Whether a reload of the page keeps the upload, in words (the Data page says it under the file)."""
    if st.session_state.get(UPLOAD_KEY) is not None:
        return (
            f"It is kept on this server for {MAX_AGE_DAYS} days after its last use, so a reload of the page keeps it."
        )
    return (
        "It could not be stored on this server (larger than the limit, or the disk cannot be written): a reload "
        "of the page will ask for it again."
    )


def _upload_in_use(unpaired: bool) -> AnalysisInput | None:
    """The upload read here, with the reason it cannot be used shown when it cannot (:func:`current_input`)."""
    # The click that showed this page may have stopped the Data page's run before it kept the file its
    # uploader had received: the uploader's value lasts until the end of this run.
    keep_upload(st.session_state.get(UPLOADER))
    if st.session_state[UPLOADED] is None:
        st.info("No upload yet: upload a CSV on the **Data** page.")
        return None
    name = escape_markdown(st.session_state[UPLOADED][0])
    try:
        data = read_upload()
    except InputError as err:
        st.warning(f"Your upload {name} could not be used: {escape_markdown(err)}  \nFix it on the **Data** page.")
        return None
    errors = design_report(data.matrix).errors
    if not errors:
        st.session_state[ANALYSIS_INPUT] = data
        return data
    if errors != [UNPAIRED]:
        problems = escape_markdown("; ".join(errors))
        st.warning(f"Your upload {name} could not be used: {problems}  \nFix it on the **Data** page.")
        return None
    if unpaired:
        return data
    st.warning(
        f"Your upload {name} holds unpaired ratings (no prompt was rated for two systems): this "
        "page's paired model needs prompts rated for at least two systems. The Leaderboard ranks "
        "unpaired ratings (ratings likelihood with a prompt effect)."
    )
    st.page_link(UNPAIRED_PAGE, label="Rank them on the Leaderboard", icon=":material/trophy:")
    return None


UNPAIRED_PAGE = "pages/leaderboard.py"
"""The page that can rank unpaired ratings."""


def upload_mapping(table: pd.DataFrame, fmt: str) -> dict[str, str]:
    """The upload's ``{role: column}`` for format ``fmt``: the user's choice, else the guesses from its names."""
    saved = st.session_state[UPLOAD_MAPPING].get(fmt)
    return saved if saved is not None else guess_roles(list(table.columns), FORMATS[fmt].column_roles, table)


def upload_criteria(table: pd.DataFrame, mapping: dict[str, str], name: str) -> list[str]:
    """The criteria named in the upload's criterion column, sorted ([] when no column has that role)."""
    if not mapping.get("criterion"):
        return []
    return sorted(set(combine_columns(table, mapping, file=name)[mapping["criterion"]].str.strip()) - {""})


def read_upload() -> AnalysisInput:
    """The stored upload read with the Data page's choices, and the page's defaults for those it has not made.

    A page shown right after an upload reads it here: the click that shows it stops the Data page's run,
    which may not have read the file yet (the first choices of a new upload are the page's guesses: the
    format and columns from their names, the first criterion).

    Raises
    ------
    lib.errors.InputError
        The format cannot be told from the column names, or the file cannot be read with these choices.
    """
    name, raw = st.session_state[UPLOADED]
    table = cached_table(raw, name)
    fmt = st.session_state[UPLOAD_FORMAT] or guess_format(list(table.columns))
    if fmt is None:
        raise FormatError(f"{name}: the format could not be told from the column names: choose it")
    mapping = upload_mapping(table, fmt)
    criteria = upload_criteria(table, mapping, name)
    criterion = st.session_state[UPLOAD_CRITERION]
    if len(criteria) < 2:
        criterion = None
    elif criterion not in criteria:
        criterion = criteria[0]
    column, values = st.session_state[UPLOAD_FILTER_COLUMN], st.session_state[UPLOAD_FILTER_VALUES]
    return cached_upload(
        raw,
        name,
        fmt,
        mapping,
        criterion,
        st.session_state[VIEW_MERGE],
        {column: values} if column != NO_FILTER and values else {},
        st.session_state[UPLOAD_DROP],
    )


def current_ranking(data: AnalysisInput):
    """The Leaderboard page's result (``session_state[RANKING]``: its key, then the result or a message)
    when it was made on this data (source, criterion and data key), else None; for the report."""
    from lib.irt.fit import data_key

    kept = st.session_state.get(RANKING)
    if kept is None or isinstance(kept[1], str) or data.matrix is None:
        return None
    source, criterion, key = kept[0][:3]
    return kept[1] if (source, criterion, key) == (data.source, data.criterion, data_key(data.matrix)) else None


def current_fit(data: AnalysisInput):
    """The session's fit if it was made on this data, else the last cached fit of this data,
    else None (a fit belongs to its data)."""
    from lib.irt.fit import fit_key, load_latest

    fit = st.session_state.get(FIT)
    if fit is None or fit.cache_key != fit_key(data.matrix, fit.settings):
        fit = load_latest(data.matrix)
        st.session_state[FIT] = fit
    return fit
