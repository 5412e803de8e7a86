"""State shared by the IRT pages: the analysis input chosen on the Data page and the fit.

Not a page itself (app.py lists the pages); imported as ``pages.common``.
"""

from __future__ import annotations

import streamlit as st

from lib.datasets import DATASETS, DEFAULT_DATASET
from lib.errors import InputError
from lib.inputs import AnalysisInput, bundled_input
from lib.irt.fit import FitSettings

DEFAULTS = {
    "dataset": DEFAULT_DATASET,  # a key of lib.datasets.DATASETS, or "upload"
    "criterion": None,
    "merge_redundant": True,
    "analysis_input": None,  # AnalysisInput set by the Data page (None: the default data set)
    "fit_settings": FitSettings(),
    "fit": None,  # the GRMFit shown on the Abilities and Prompts pages
}


def init_state() -> None:
    """Session defaults (app.py calls this once per run)."""
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)


@st.cache_data(show_spinner="Reading the bundled data set…")
def cached_bundled(key: str, criterion: str | None, merge_redundant: bool) -> AnalysisInput:
    return bundled_input(key, criterion, merge_redundant=merge_redundant)


def default_criterion(key: str) -> str | None:
    """First criterion of a bundled data set with several, else None."""
    crits = DATASETS[key].criteria
    return crits[0] if len(crits) > 1 else None


def current_input() -> AnalysisInput | None:
    """The analysis input in use: the Data page's choice, else the default bundled data set."""
    init_state()  # a page opened by URL before app.py's first run still finds its defaults
    data = st.session_state.get("analysis_input")
    if data is not None:
        return data
    key = DEFAULT_DATASET
    try:
        data = cached_bundled(key, default_criterion(key), st.session_state.get("merge_redundant", True))
    except InputError as err:
        st.error(str(err))
        return None
    st.session_state["analysis_input"] = data
    return data


def current_fit(data: AnalysisInput):
    """The session's fit if it was made on this data, else the last cached fit of this data,
    else None (a fit belongs to its data)."""
    from lib.irt.fit import fit_key, load_latest

    fit = st.session_state.get("fit")
    if fit is None or fit.cache_key != fit_key(data.matrix, fit.settings):
        fit = load_latest(data.matrix)
        st.session_state["fit"] = fit
    return fit
