"""Studies: create a judgment study, hand out the annotators' links, follow it, open its judgments."""

import math
from urllib.parse import urlsplit

import streamlit as st

from lib.errors import InputError
from lib.export import csv_text
from lib.study.adaptive import extend
from lib.study.assign import MAX_PER_ITEM
from lib.study.create import DEFAULT_PER_ITEM, create_study, parse_criteria, planned_design
from lib.study.db import backup_advice, describe
from lib.study.demo import DEMO_CRITERIA, DEMO_NAME, DEMO_TASK, demo_items, demo_texts
from lib.study.export import export_judgments
from lib.study.items import read_items
from lib.study.summary import AGREEMENT, SPEEDER_RULE, list_studies, study_links, summarize
from lib.study.tasks import TASKS, Scale
from lib.tables import read_csv
from ui.annotate import safe_markdown
from ui.common import NO_FILTER, UPLOAD
from ui.tables import show_table
from ui.text import escape_markdown

DEMO, OWN = "Seed 001 demo: ROME counterfactual passages", "Your items CSV"
DEFAULT_BASE = "http://localhost:8501"


def base_url() -> str:
    """The app's address as the browser sees it (for the links), else the default one."""
    url = st.context.url
    parts = urlsplit(url) if isinstance(url, str) else None
    return f"{parts.scheme}://{parts.netloc}" if parts and parts.scheme and parts.netloc else DEFAULT_BASE


def create_form() -> None:
    source = st.radio("Items", [DEMO, OWN], horizontal=True, key="studies_source")
    demo = source == DEMO
    upload = None
    if not demo:
        upload = st.file_uploader(
            "Items CSV: prompt_id, prompt_text, system, response, optional gold_<criterion>",
            type=["csv", "tsv", "txt"],
            key="studies_items",
        )
    instructions, example = demo_texts() if demo else ("", "")
    c = st.columns(3)
    task = c[0].selectbox(
        "Task",
        list(TASKS),
        index=list(TASKS).index(DEMO_TASK),
        disabled=demo,
        key="studies_task",
        help="; ".join(f"{t}: {spec.help}" for t, spec in TASKS.items()),
    )
    task = DEMO_TASK if demo else task  # seed 001's form: its instructions ask for MOST / LEAST
    criteria = c[1].text_input("Criteria (comma-separated)", ",".join(DEMO_CRITERIA), key="studies_criteria")
    name = c[2].text_input("Name", DEMO_NAME if demo else "", key="studies_name")
    try:
        scale = scale_fields(task)
    except InputError as err:
        st.error(escape_markdown(err))
        return
    planned = planned_design(st.session_state.get("planner_best"))  # set by the Study planner's page
    default = min(planned.per_item, MAX_PER_ITEM) if planned else DEFAULT_PER_ITEM
    c = st.columns(5)
    per_item = c[0].number_input("Annotators per item", 1, MAX_PER_ITEM, default, key="studies_per_item")
    annotators = c[1].number_input("Annotators", 1, 10_000, max(default, DEFAULT_PER_ITEM), key="studies_annotators")
    prompts = c[2].number_input("Prompts (0 = all)", 0, 100_000, 10 if demo else 0, key="studies_prompts")
    gold_rate = c[3].number_input("Gold rate", 0.0, 0.9, 0.0, 0.05, key="studies_gold_rate")
    seed = c[4].number_input("Seed", 0, 2**31 - 1, 0, key="studies_seed")
    st.caption(
        f"Annotators per item: {default} by default, from {escape_markdown(planned.describe())}."
        if planned
        else f"Annotators per item: {DEFAULT_PER_ITEM} by default; run the Study planner and its cheapest design "
        "reaching the target power becomes the default here."
    )
    instructions = st.text_area("Instructions (Markdown)", instructions, height=150, key="studies_instructions")
    example = st.text_area("Example (Markdown)", example, height=120, key="studies_example")
    with st.expander("Preview: what annotators read first (images, links and HTML shown as plain text)"):
        st.markdown(safe_markdown(instructions))
        st.divider()
        st.markdown(safe_markdown(example))
    if not st.button("Create study", type="primary", key="studies_create"):
        return
    try:
        if demo:
            items = demo_items(int(prompts) or None, task=task)
        elif upload is None:
            st.error("Upload the items CSV first.")
            return
        else:
            table = read_csv(upload.getvalue(), upload.name)
            items = read_items(
                table, task, parse_criteria(criteria), file=upload.name, max_prompts=int(prompts) or None, scale=scale
            )
        created = create_study(
            items,
            task=task,
            criteria=parse_criteria(criteria),
            annotators=int(annotators),
            per_item=int(per_item),
            gold_rate=float(gold_rate),
            instructions=instructions,
            example=example,
            name=name or "study",
            seed=int(seed),
            scale=scale,
        )
    except InputError as err:
        st.error(f"Cannot create the study: {escape_markdown(err)}")
        return
    st.session_state["studies_chosen"] = created.study_id
    st.success(f"Study {created.study_id} created: {len(items)} items, {len(created.tokens)} annotators.")


def scale_fields(task: str) -> Scale | None:
    """The rating scale of a rated task (points and the labels of its ends); None for the others.

    Raises
    ------
    lib.study.errors.StudyError
        A label left empty.
    """
    if not TASKS[task].rated:
        return None
    default = Scale()
    c = st.columns(3)
    points = c[0].number_input("Scale points", 2, 10, default.points, key="studies_points")
    low = c[1].text_input("Label of 1", default.low, max_chars=100, key="studies_low")
    high = c[2].text_input("Label of the top rating", default.high, max_chars=100, key="studies_high")
    return Scale(int(points), low, high)


def export_name(study_id: int) -> str:
    """The file name of a study's judgments (the Data page's upload, the Leaderboard's data source)."""
    return f"study_{study_id}.csv"


def open_in_data_page(study_id: int, task: str) -> None:
    """Hand the judgments to the Data page as an upload of the study's export (best-worst / pairwise /
    ratings)."""
    data = csv_text(export_judgments(study_id)).encode("utf-8")
    for key in [k for k in st.session_state if str(k).startswith("up_") or k == "dataset"]:
        del st.session_state[key]
    st.session_state.update(
        upload=(export_name(study_id), data),
        upload_format=TASKS[task].format,
        upload_mapping={},
        upload_criterion=None,
        upload_filter_column=NO_FILTER,
        upload_filter_values=[],
        upload_drop=False,
        view_dataset=UPLOAD,
        analysis_input=None,
    )
    st.switch_page("pages/data.py")


def shown(value: float, fmt: str) -> str:
    """A number for a metric, "—" when not known yet (NaN)."""
    return "—" if math.isnan(value) else fmt.format(value)


def show_study(study_id: int, task: str) -> None:
    links = study_links(study_id, base_url())
    with st.expander(f"Annotator links ({len(links)}): private, one per annotator"):
        st.code("\n".join(f"{a}  {link}" for a, link in zip(links.annotator, links.link, strict=True)), language=None)
        st.download_button(
            "links.csv", csv_text(links), f"study_{study_id}_links.csv", mime="text/csv", key="studies_links"
        )
    s = summarize(study_id)
    people = s.annotators
    c = st.columns(4)
    c[0].metric("pages answered", f"{int(people['done'].sum())} / {int(people['pages'].sum())}")
    c[1].metric("median s / judgment", shown(s.median_seconds_per_judgment, "{:.1f}"))
    c[2].metric("gold accuracy", shown(s.gold_accuracy, "{:.0%}"))
    c[3].metric("speeders", int(people["speeder"].sum()) if len(people) else 0)
    st.subheader("Per annotator")
    show_table(people, key="studies_people")
    st.caption(f"Speeders are {SPEEDER_RULE}.")
    st.subheader("Agreement so far")
    show_table(s.agreement, key="studies_agreement")
    st.caption(AGREEMENT[task].help)
    with st.expander("Per item"):
        show_table(s.items, key="studies_items_table")
    c = st.columns(2)
    table = export_judgments(study_id)
    c[0].download_button(
        "Download the judgments (CSV)", csv_text(table), export_name(study_id), mime="text/csv", key="studies_dl"
    )
    if c[1].button("Open the judgments in the Data page", disabled=table.empty, key="studies_open"):
        open_in_data_page(study_id, task)
    next_batch_section(study_id)


def next_batch_section(study_id: int) -> None:
    """Adaptive assignment: the Leaderboard's "annotate next" batch on this study's judgments, as new pages."""
    st.subheader("Next batch (adaptive)")
    kept = st.session_state.get("ranking")  # the Leaderboard's (key, result or message)
    result = None if kept is None or isinstance(kept[1], str) or kept[0][0] != export_name(study_id) else kept[1]
    if result is None or result.next_batch is None:
        st.caption(
            "Open the judgments in the Data page and rank them on the Leaderboard: its 'what to annotate next' "
            "batch (the pairs and prompts that most reduce the ranking's uncertainty) can then be added here "
            "as new pages for annotators who have not judged those items."
        )
        return
    batch = result.next_batch
    c = st.columns(2)
    per = c[0].number_input("More annotators per item", 1, 100, 1, key="studies_next_per")
    cap = c[1].number_input("Items at most", 1, 10_000, 10, key="studies_next_items")
    st.caption(f"The Leaderboard's batch: {len(batch)} (pair, prompt) judgments, best first.")
    if st.button("Add the next batch as new pages", key="studies_extend"):
        done = extend(study_id, batch, per_prompt=int(per), max_items=int(cap))
        st.success(f"{sum(done.pages.values())} new pages for {len(done.pages)} annotators.")
        if done.unplaced:
            st.info(
                "Not placed (judged by every annotator, or no such item): "
                + escape_markdown(", ".join(dict.fromkeys(done.unplaced)))
            )


st.title("Studies")
st.caption(
    "Serve a judgment form to annotators through private links, keep every answer in the study database, "
    "and open the judgments in the Data page (docs/studies.md)."
)
try:
    st.caption(f"Study database: {escape_markdown(describe())} · {backup_advice()} (docs/studies.md).")
    studies = list_studies()
except InputError as err:
    st.error(f"The study database cannot be used: {escape_markdown(err)}")
    st.stop()
with st.expander("Create a study", expanded=studies.empty):
    create_form()
    studies = list_studies()
if studies.empty:
    st.info("No study yet: create one above.")
    st.stop()
ids = studies["study_id"].tolist()
chosen = st.session_state.get("studies_chosen")
labels = dict(zip(ids, studies["name"], strict=True))
study_id = st.selectbox(
    "Study",
    ids,
    index=ids.index(chosen) if chosen in ids else len(ids) - 1,
    format_func=lambda i: f"{i} · {labels[i]}",
    key=f"studies_pick_{chosen}",
)
row = studies[studies.study_id == study_id].iloc[0]
st.caption(
    f"**Task:** {escape_markdown(row.task)} · **criteria:** {escape_markdown(row.criteria)} · "
    f"**annotators:** {row.annotators}"
)
try:
    show_study(int(study_id), str(row.task))
except InputError as err:
    st.error(escape_markdown(err))
