"""Revision edits: Revision Distance (Ma et al. 2024) from human, uploaded, diff-based or LLM edits."""

from __future__ import annotations

import io
import os

import numpy as np
import pandas as pd
import streamlit as st

from lib.errors import InputError
from lib.io.export import csv_text
from lib.io.tables import guess_roles
from lib.plots.revision import category_figure, revision_distance_figure
from lib.revision import run
from lib.revision.client import LLMSettings
from lib.revision.credentials import choose_key
from lib.revision.io import (
    DRAFT_OPTIONAL,
    DRAFT_REQUIRED,
    EDIT_OPTIONAL,
    EDIT_REQUIRED,
    column_roles,
    drafts_from_table,
    edits_from_table,
    read_table,
)
from lib.revision.lamp import WRITERS, LampData, load_lamp
from lib.revision.locate import render_edit_list, render_side_by_side
from lib.revision.metrics import (
    category_table,
    compare_models,
    per_model,
    postedit_reproduction,
    span_agreement,
    summarize,
)
from lib.revision.prompts import PROMPTS
from lib.revision.revised import RULES, editor_counts, first_edited, revised_drafts, shared_drafts
from lib.revision.schema import DIFF_EDITOR, EDIT_FIELDS
from ui.keys import REVISION_CANDIDATE, REVISION_CANDIDATES, REVISION_LLM
from ui.mapping import column_mapping
from ui.navigation import serve_through_app
from ui.tables import show_table
from ui.text import escape_markdown

serve_through_app()  # opened by its URL on a fresh server, the page runs alone: app.py serves it

HUMAN, UPLOAD, DIFF, LLM = (
    "Human writers (LAMP)",
    "Uploaded edits",
    "Diff-based (towards a reference)",
    "LLM (OpenAI-compatible)",
)
LAMP_DRAFTS, UPLOADED_DRAFTS = "LAMP paragraphs (bundled)", "Upload a drafts CSV"


@st.cache_data(show_spinner=False)
def lamp_data() -> LampData:
    return load_lamp()


@st.cache_data(show_spinner=False)
def scored(edits: pd.DataFrame, drafts: pd.DataFrame, evaluated: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    return run.score(edits, drafts, evaluated)


@st.cache_data(show_spinner=False)
def diff_revision(drafts: pd.DataFrame) -> run.Revision:
    return run.diff_revision(drafts)


@st.cache_data(show_spinner=False, max_entries=4)
def uploaded_table(data: bytes, name: str) -> pd.DataFrame:
    return read_table(io.BytesIO(data), name)


def configured(name: str) -> str:
    """A setting from the environment, else from st.secrets (absent secrets file is fine)."""
    if os.environ.get(name):
        return os.environ[name]
    try:
        return str(st.secrets.get(name, ""))
    except Exception:  # no secrets.toml
        return ""


def fail(err: InputError) -> None:
    st.error(escape_markdown(err))
    st.stop()


def mapped_upload(
    label: str, types: list[str], hint: str, key: str, required, optional, parse
) -> tuple[pd.DataFrame, str]:
    """An uploaded file read by ``parse(table, name, columns={role: column})`` and its name; stops (with
    ``hint``, a request to map a column, or the error) until there is one that parses."""
    up = st.file_uploader(label, type=types, key=f"{key}_file")
    if up is None:
        st.info(hint)
        st.stop()
    try:
        table = uploaded_table(up.getvalue(), up.name)
    except InputError as err:
        fail(err)
    columns = [str(c) for c in table.columns]
    mapping, missing = column_mapping(
        columns, required, optional, guess_roles(columns, column_roles([*required, *optional])), key=key
    )
    if missing:
        st.warning(escape_markdown(f"Choose the column of: {', '.join(missing)}"))
        st.stop()
    try:
        return parse(table, up.name, columns=mapping), up.name
    except InputError as err:
        fail(err)


st.title("Revision edits")
st.caption(
    "Ma et al. (2024): an editor (a writer, or an LLM acting as the user) proposes revision edits "
    "to a draft; their number is the **Revision Distance** (lower is better), and the edits explain it."
)

with st.sidebar:
    st.subheader("LLM connection")
    base_url = st.text_input(
        "Base URL",
        value=configured("OPENAI_BASE_URL"),
        key="revision_base_url",
        placeholder="https://api.openai.com/v1",
        help="Any OpenAI-compatible server.",
    )
    model = st.text_input("Model", value=configured("OPENAI_MODEL"), key="revision_model")
    typed_key = st.text_input(
        "API key",
        type="password",
        key="revision_api_key",
        help="Kept in this browser session only; never written to disk or logs. The "
        "app's own key is only sent to the server it is configured for.",
    )
    timeout = st.number_input(
        "Timeout per request (s)",
        min_value=1,
        max_value=600,
        value=60,
        key="revision_timeout",
        help="Longest wait for one answer (3 retries follow).",
    )
    try:
        base_url, api_key = choose_key(
            base_url, typed_key, {n: configured(n) for n in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
        )
        key_problem = None
    except InputError as err:
        api_key, key_problem = "", err
    st.caption(
        "Key: "
        + (
            "typed for this session"
            if typed_key.strip()
            else "needed for this Base URL"
            if key_problem
            else "the app's own (configured server)"
            if api_key
            else "none (fine for local servers)"
        )
    )

drafts_source = st.radio("Drafts", [LAMP_DRAFTS, UPLOADED_DRAFTS], horizontal=True, key="revision_drafts_source")
lamp = lamp_data()
lamp_drafts, lamp_edits, lamp_evaluated = lamp.drafts, lamp.edits, lamp.evaluated
human_revised = lamp_evaluated[["text_id", "system", "editor", "draft"]]
if drafts_source == LAMP_DRAFTS:
    drafts = lamp_drafts[["text_id", "system", "draft"]]
    per_writer = editor_counts(human_revised, lamp_edits).set_index("editor")["drafts"]
    st.caption(
        f"{len(drafts)} distinct LLM paragraphs from {drafts['system'].nunique()} models; writers "
        f"{', '.join(WRITERS)} revised {'/'.join(map(str, per_writer.reindex(list(WRITERS))))} of them "
        f"({shared_drafts(human_revised)} by all three: under a few ids a writer saw a different text). "
        "LAMP, BSD-3-Clause."
    )
else:
    drafts, _ = mapped_upload(
        "Drafts CSV: text_id, system, draft [, reference]",
        ["csv"],
        "Upload a CSV of drafts, or choose the bundled LAMP paragraphs.",
        "revision_drafts",
        DRAFT_REQUIRED,
        DRAFT_OPTIONAL,
        drafts_from_table,
    )

sources = ([HUMAN] if drafts_source == LAMP_DRAFTS else []) + [UPLOAD, DIFF, LLM]
source = st.radio("Edits", sources, horizontal=True, key="revision_source")

references = drafts
if source in (DIFF, LLM) and drafts_source == LAMP_DRAFTS:
    writer = st.selectbox("Reference text: the post-edit paragraph of writer", WRITERS, key="revision_ref_writer")
    references = lamp.with_reference(writer)

if source == HUMAN:
    edits, evaluated = lamp_edits, human_revised
elif source == UPLOAD:
    edits, edits_name = mapped_upload(
        "Edits (JSON lines or CSV): text_id, system, original_snippet, revised_snippet [, editor and the other "
        "schema fields]",
        ["jsonl", "json", "csv"],
        "Upload edits from another tool, e.g. the `edits.jsonl` of `python -m lib revise`.",
        "revision_edits",
        EDIT_REQUIRED,
        EDIT_OPTIONAL,
        edits_from_table,
    )
    rule = st.radio(
        "Drafts each editor revised",
        list(RULES),
        format_func=RULES.__getitem__,
        horizontal=True,
        key="revision_revised_rule",
        help="Revision Distance is a mean over the drafts an editor revised: a draft the editor never saw "
        "must not count as revised with no edits.",
    )
    try:
        revised_by = revised_drafts(drafts, edits, rule)
    except InputError as err:  # the edits cannot tell: the user states it above
        st.warning(f"{escape_markdown(err)} (*Drafts each editor revised*, above).")
        st.stop()
    evaluated = revised_by.evaluated
    counts = ", ".join(f"{r.editor} {r.drafts} ({r.with_edits} with edits)" for r in revised_by.per_editor.itertuples())
    left_out = len(revised_by.unassigned)
    st.caption(
        escape_markdown(f"Drafts each editor revised: {counts}. {revised_by.reason}")
        + (f" {left_out} of {len(drafts)} drafts have no editor and are left out." if left_out else "")
    )
elif source == DIFF:
    with_ref = run.with_reference(references)
    if with_ref.empty:
        st.warning("Diff-based edits need a reference text: upload drafts with a `reference` column.")
        st.stop()
    st.caption(f"Diff-based edits (no LLM): word-level alignment of {len(with_ref)} drafts with their reference.")
    try:
        revision = diff_revision(with_ref[["text_id", "system", "draft", "reference"]])
    except InputError as err:
        fail(err)
    edits, evaluated = revision.edits, revision.evaluated
else:
    prompt = st.radio(
        "Prompt",
        list(PROMPTS),
        horizontal=True,
        key="revision_prompt",
        help=", ".join(f"{p.name}: version {p.version}" for p in PROMPTS.values()),
    )
    template = PROMPTS[prompt]
    if key_problem is not None:
        fail(key_problem)
    concurrency = st.slider("Drafts in flight", 1, 16, 4, key="revision_concurrency")
    todo = run.llm_drafts(references, template)
    if template.needs_reference and todo.empty:
        st.warning(
            "The reference-based prompt needs a reference text: upload drafts with a `reference` "
            "column, or choose the reference-free prompt."
        )
        st.stop()
    run_key = run.llm_run_key(todo, base_url, model, template)
    if st.button(f"Propose edits for {len(todo)} drafts", type="primary", key="revision_run", disabled=not model):
        settings = LLMSettings(
            model=model, base_url=base_url, api_key=api_key, concurrency=concurrency, timeout=float(timeout)
        )
        bar = st.progress(0.0, text="Asking the LLM")
        st.session_state[REVISION_LLM] = (
            run_key,
            run.llm_revision(
                todo, settings, template, progress=lambda d, n: bar.progress(d / n, text=f"{d}/{n} drafts")
            ),
        )
    stored = st.session_state.get(REVISION_LLM)
    if not model:
        st.info("Set a model (and base URL, API key) in the sidebar to ask an LLM for edits.")
        st.stop()
    if stored is None or stored[0] != run_key:
        st.info("Press the button to propose edits; finished drafts are cached on disk, so a rerun is free.")
        st.stop()
    revision = stored[1]
    edits, evaluated = revision.edits, revision.evaluated
    if len(revision.failures):
        st.warning(f"{len(revision.failures)} draft(s) failed; the others are kept.")
        show_table(revision.failures)
    if evaluated.empty:
        st.error("No draft was revised; see the reasons above.")
        st.stop()
    st.caption(
        "Answer path per draft: "
        + ", ".join(f"{k}: {v}" for k, v in edits.drop_duplicates(["text_id", "system"])["path"].value_counts().items())
    )

try:
    located, per_draft = scored(edits, drafts, evaluated)
except InputError as err:
    fail(InputError(err.problem, file=edits_name if source == UPLOAD else "edits", rows=err.rows, column=err.column))
unlocated = located[~located["located"]]
if len(unlocated):
    with st.expander(
        f"{len(unlocated)} of {len(located)} edits could not be located in their draft "
        "(they still count towards Revision Distance)"
    ):
        show_table(unlocated[["text_id", "system", "editor", "original_snippet", "revised_snippet"]])

tab_rd, tab_side, tab_agree, tab_edits = st.tabs(
    ["Revision Distance", "Side by side", "Agreement with humans", "Edits"]
)
with tab_rd:
    by_model = per_model(per_draft)
    left, right = st.columns(2)
    with left:
        st.plotly_chart(
            revision_distance_figure(by_model, "system", "Revision Distance per model"), key="revision_fig_model"
        )
    with right:
        by_editor = summarize(per_draft, ["editor"])
        st.plotly_chart(
            revision_distance_figure(by_editor, "editor", "Revision Distance per editor"), key="revision_fig_editor"
        )
    st.markdown(
        "**Per model** (95 % t-interval over drafts; token-level edit distance = words changed by "
        "applying the located edits)"
    )
    show_table(by_model)
    st.markdown("**Per editor**")
    show_table(by_editor)
    models = sorted(per_draft["system"].unique())
    if len(models) >= 2:
        st.markdown("**Relative change between two models** (Table 2: positive = model B needs fewer edits)")
        a_col, b_col = st.columns(2)
        model_a = a_col.selectbox("Model A (baseline)", models, index=0, key="revision_model_a")
        model_b = b_col.selectbox("Model B", models, index=1, key="revision_model_b")
        if model_a != model_b:
            cmp = compare_models(per_draft, model_a, model_b)
            interval = (
                f"95 % bootstrap {cmp['ci_low']:+.1f} to {cmp['ci_high']:+.1f}"
                if np.isfinite(cmp["ci_low"])
                else "no interval: a model has one draft"
            )
            st.metric(
                escape_markdown(f"{model_a} → {model_b}"),
                f"{cmp['mean_a']:.2f} → {cmp['mean_b']:.2f} edits",
                f"{cmp['change_pct']:+.1f} % ({interval})",
            )
    group = st.radio("Category table by", ["system", "editor"], horizontal=True, key="revision_cat_by")
    table = category_table(located, per_draft, by=group)
    st.markdown(f"**Edits per draft by category** (Table 3; `revision_intention`), per {group}")
    show_table(table, hide_index=False)
    st.plotly_chart(category_figure(table, f"Edit categories per {group}"), key="revision_fig_cat")
    with st.expander("Revision Distance per draft"):
        show_table(per_draft)
    st.download_button(
        "Download Revision Distance per draft (CSV)", csv_text(per_draft), "revision_distance.csv", key="revision_dl_rd"
    )

with tab_side:
    keys = per_draft[["text_id", "system"]].drop_duplicates().reset_index(drop=True)
    labels = [f"{t} · {s}" for t, s in keys.itertuples(index=False)]
    start = first_edited(per_draft)  # open on a draft with edits
    first = 0 if start is None else int(keys.index[(keys["text_id"] == start[0]) & (keys["system"] == start[1])][0])
    choice = st.selectbox(
        "Draft", range(len(labels)), index=first, format_func=labels.__getitem__, key="revision_draft"
    )
    text_id, system = keys.iloc[choice]
    shown = per_draft[(per_draft["text_id"] == text_id) & (per_draft["system"] == system)]
    editors, edited = sorted(shown["editor"]), first_edited(shown.sort_values("editor"))
    editor = st.selectbox(
        "Editor", editors, index=0 if edited is None else editors.index(edited[2]), key="revision_editor"
    )
    mine = located[(located["text_id"] == text_id) & (located["system"] == system) & (located["editor"] == editor)]
    draft = drafts.loc[(drafts["text_id"] == text_id) & (drafts["system"] == system), "draft"].iloc[0]
    options = [None, *mine["edit_index"].tolist()]
    selected = st.selectbox(
        "Edit to emphasise", options, key="revision_edit", format_func=lambda k: "none" if k is None else f"#{k + 1}"
    )
    left_html, right_html = render_side_by_side(draft, mine, selected)
    left, right = st.columns(2)
    left.markdown(f"**Draft** ({len(mine)} edits, {int((~mine['located']).sum())} unlocated; hover a highlight)")
    with left:
        st.html(left_html)
    right.markdown("**Revised** (edits applied right to left; insertions marked)")
    with right:
        st.html(right_html)
    st.html(render_edit_list(mine, selected))
    show_table(mine[["edit_index", *EDIT_FIELDS, "match", "located", "overlaps", "applied"]])

with tab_agree:
    if drafts_source != LAMP_DRAFTS:
        st.info("Agreement needs human edits of the same drafts: choose the bundled LAMP paragraphs.")
    else:
        combined, revised = (
            (located, per_draft)
            if source == HUMAN
            else run.beside_writers(
                located, per_draft, scored(lamp_edits, lamp_drafts, human_revised)[0], lamp_evaluated
            )
        )
        candidates = [e for e in combined["editor"].unique() if e not in WRITERS] + list(WRITERS)
        # Other edits (another source): start at their own editor, set through session state so that the
        # browser shows the editor whose numbers the table holds (issue 16, item 16).
        if st.session_state.get(REVISION_CANDIDATES) != candidates:
            st.session_state[REVISION_CANDIDATES] = candidates
            st.session_state[REVISION_CANDIDATE] = candidates[0]
        candidate = st.selectbox("Edits to compare with the writers", candidates, key=REVISION_CANDIDATE)
        st.caption(
            "Span overlap: a candidate edit is correct when it overlaps a writer's edit (precision); a "
            "writer's edit is found when a candidate edit overlaps it (recall). Category agreement: "
            "share of matched edits with the same category. Writer vs writer is the human baseline."
        )
        agreement = span_agreement(combined, revised, candidate, WRITERS).round(3)
        if candidate == DIFF_EDITOR:  # diff-based edits carry no category
            agreement = agreement.drop(columns="category_agreement")
        show_table(agreement)
        if source == HUMAN:
            rep = postedit_reproduction(located, lamp_evaluated)
            st.caption(
                f"Applying each writer's located edits to the pre-edit paragraph reproduces their post-edit "
                f"text with mean similarity {rep['similarity'].mean():.3f} (unedited: "
                f"{rep['baseline'].mean():.3f}); exactly in {rep['exact'].mean():.0%} of paragraphs."
            )

with tab_edits:
    show_table(located)
    st.download_button("Download edits (JSON lines)", run.edits_jsonl(located), "edits.jsonl", key="revision_dl_edits")
