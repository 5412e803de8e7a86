"""Session-state keys: every key that app.py, a page or a helper reads or writes in ``st.session_state``
by name, in one place (a mistyped string key is a silent ``None``; a mistyped name is an error).

Streamlit forgets a widget's value when its page is not shown, so the user's choices live in keys
that are not widget keys (``view_*``, ``upload*``; :data:`ui.common.DEFAULTS` gives their session
defaults). The widget keys listed here are those whose value is also read or set through
``st.session_state``; the other widget keys stay beside their widgets. The strings are the keys
themselves: tests (``AppTest.session_state``) and a user's session use them as they are.
"""

from __future__ import annotations

# The view and the upload, shared by every page (ui.common.DEFAULTS)
VIEW_DATASET = "view_dataset"
"""A key of :data:`lib.judgments.datasets.DATASETS`, or ``ui.common.UPLOAD``."""
VIEW_CRITERION = "view_criterion"
VIEW_MERGE = "view_merge"
UPLOADED = "upload"
"""(file name, bytes) of the last file uploaded."""
UPLOAD_KEY = "upload_key"
UPLOAD_KEPT = "upload_kept"
UPLOAD_FORMAT = "upload_format"
UPLOAD_MAPPING = "upload_mapping"
UPLOAD_CRITERION = "upload_criterion"
UPLOAD_FILTER_COLUMN = "upload_filter_column"
UPLOAD_FILTER_VALUES = "upload_filter_values"
UPLOAD_DROP = "upload_drop"
LINK_PROBLEMS = "link_problems"
"""What of the URL's view could not be used (shown once by app.py)."""

# Results kept across pages
ANALYSIS_INPUT = "analysis_input"
FIT_SETTINGS = "fit_settings"
FIT = "fit"
RANKING = "ranking"
"""The Leaderboard's (key, result or the message of why it failed); read by the Studies page."""
JUDGE_FILE = "judge_file"
"""``(human data source, file name, bytes)`` of the judge file given on the Data page, or None."""
JUDGE_UPLOAD_ROUND = "judge_upload_round"
"""How many times the judge upload was cleared (a new widget key each time empties it)."""
PLANNER_RESULT = "planner_result"
PLANNER_NUTS = "planner_nuts"
PLANNER_BEST = "planner_best"
"""The Study planner's cheapest designs; read by the Studies page."""
STUDY_LEFT_OUT = "study_left_out"
"""(export name, what was left out) of judgments the Studies page opened; read by the Leaderboard."""
STUDIES_CHOSEN = "studies_chosen"
SELECTION_FULL_DONE = "selection_full_done"
REVISION_LLM = "revision_llm"
REVISION_CANDIDATES = "revision_candidates"
REVISION_CANDIDATE = "revision_candidate"
LB_ROBUSTNESS = "lb_robustness"

# Widget keys that are also read or set through st.session_state (the Data page's are seeded from the
# view and upload keys above by ui.common.restore)
DATASET = "dataset"
DATA_CRITERION = "data_criterion"
DATA_MERGE = "data_merge"
UP_FORMAT = "up_format"
UP_FILTER_COLUMN = "up_filter_column"
UP_FILTER_VALUES = "up_filter_values"
UP_CRITERION = "up_criterion"
UP_DROP_INCOMPLETE = "up_drop_incomplete"
ABIL_SAMPLER = "abil_sampler"
LB_LIKELIHOOD = "lb_likelihood"
LB_SAMPLER = "lb_sampler"
LB_INTRANSITIVITY = "lb_intransitivity"
LB_ANNOTATORS = "lb_annotators"
STUDIES_SOURCE = "studies_source"
STUDIES_ALLOW_NAMES = "studies_allow_names"

# Kept by the helpers for their own use
RUN_STARTED = "run_started"
"""``time.perf_counter()`` when the current run of app.py began (:func:`ui.timings.mark_run_start`)."""
OPERATOR_OK = "operator_ok"
"""The operator's secret was given in this session (:mod:`ui.access`)."""
ANNOTATE_SHOWN = "annotate_shown"
"""``(the link's query, (token, Progress))`` of the annotation page last shown, shown again while the
database fails (:mod:`ui.annotate`)."""
INSTRUCTIONS_SEEN = "instructions_seen_"
"""Prefix of the key (+ the link's token) set when this browser session has read that link's
instructions (pressed Start)."""
