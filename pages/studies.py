"""Studies: create a judgment study, hand out the annotators' links, follow it, open its judgments."""

import math
from dataclasses import dataclass
from urllib.parse import urlsplit

import streamlit as st

from lib.errors import InputError
from lib.io.export import csv_text
from lib.io.tables import read_csv
from lib.study.adaptive import Extended, extend
from lib.study.annotate import LABELS, Page, Progress
from lib.study.assign import MAX_PER_ITEM, gold_count, most_regular_pages
from lib.study.blinding import NameShown, names_shown, study_texts
from lib.study.checks import FAIL_SHARE
from lib.study.create import DEFAULT_PER_ITEM, create_study, parse_criteria, parse_labels, planned_design
from lib.study.db import backup_advice, describe
from lib.study.demo import DEMO_CRITERIA, DEMO_LABELS, DEMO_NAME, DEMO_TASK, demo_items, demo_texts
from lib.study.errors import StudyError
from lib.study.export import export_study
from lib.study.items import ItemSpec, read_items
from lib.study.summary import SPEEDER_RULE, crowd_table, list_studies, study_links, summarize
from lib.study.tasks import TASKS, Scale
from ui.annotate import preview
from ui.common import NO_FILTER, UPLOAD, UPLOAD_WIDGETS
from ui.keys import (
    ANALYSIS_INPUT,
    DATASET,
    PLANNER_BEST,
    RANKING,
    STUDIES_ALLOW_NAMES,
    STUDIES_CHOSEN,
    STUDIES_SOURCE,
    STUDY_LEFT_OUT,
    UPLOAD_CRITERION,
    UPLOAD_DROP,
    UPLOAD_FILTER_COLUMN,
    UPLOAD_FILTER_VALUES,
    UPLOAD_FORMAT,
    UPLOAD_MAPPING,
    UPLOADED,
    VIEW_DATASET,
)
from ui.navigation import serve_through_app
from ui.tables import show_table
from ui.text import escape_markdown

serve_through_app()  # opened by its URL on a fresh server, the page runs alone: app.py serves it

DEMO, OWN = "Seed 001 demo: ROME counterfactual passages", "Your items CSV"
PRIVATE, CROWD = "Private links, one per annotator", "One link for a crowd platform (Prolific, ...)"
DEFAULT_BASE = "http://localhost:8501"
PREVIEW_ID = 0  # the preview's page id (no task has it)


def base_url() -> str:
    """The app's address as the browser sees it (for the links), else the default one."""
    url = st.context.url
    parts = urlsplit(url) if isinstance(url, str) else None
    return f"{parts.scheme}://{parts.netloc}" if parts and parts.scheme and parts.netloc else DEFAULT_BASE


def source_defaults(source: str) -> dict[str, object]:
    """What belongs to an item source: the demo's task, criteria, labels, name, texts and prompts, or a
    blank form for the researcher's own items (nothing of the demo's is carried over)."""
    if source == DEMO:
        instructions, example = demo_texts()
        return {
            "studies_task": DEMO_TASK,
            "studies_criteria": ",".join(DEMO_CRITERIA),
            "studies_labels": ",".join(DEMO_LABELS),
            "studies_name": DEMO_NAME,
            "studies_instructions": instructions,
            "studies_example": example,
            "studies_prompts": 10,
        }
    return {
        "studies_task": next(iter(TASKS)),
        "studies_criteria": "",
        "studies_labels": "",
        "studies_name": "",
        "studies_instructions": "",
        "studies_example": "",
        "studies_prompts": 0,
    }


def _switch_source() -> None:
    """The source changed: its own task, criteria, labels, name, texts and prompts replace the form's."""
    st.session_state.update(source_defaults(st.session_state[STUDIES_SOURCE]))
    st.session_state.pop(STUDIES_ALLOW_NAMES, None)


@dataclass
class Draft:
    """The create form's fields."""

    demo: bool
    upload: object
    task: str
    criteria: str
    labels: str
    name: str
    scale: Scale | None
    per_item: int
    annotators: int
    prompts: int
    gold_rate: float
    check_rate: float
    seed: int
    crowd: bool
    completion_code: str
    redirect_url: str
    instructions: str
    example: str


def draft_fields() -> Draft | None:
    """The create form's widgets (None: a field cannot be used; the page says why)."""
    source = st.radio("Items", [DEMO, OWN], horizontal=True, key=STUDIES_SOURCE, on_change=_switch_source)
    for key, value in source_defaults(source).items():
        st.session_state.setdefault(key, value)
    demo = source == DEMO
    upload = None
    if not demo:
        upload = st.file_uploader(
            "Items CSV: prompt_id, prompt_text, system, response, optional gold_<criterion>",
            type=["csv", "tsv", "txt"],
            key="studies_items",
        )
    c = st.columns(4)
    task = c[0].selectbox(
        "Task",
        list(TASKS),
        disabled=demo,  # seed 001's form: its instructions ask for MOST / LEAST
        key="studies_task",
        help="; ".join(f"{t}: {spec.help}" for t, spec in TASKS.items()),
    )
    criteria = c[1].text_input("Criteria (comma-separated)", key="studies_criteria")
    labels = c[2].text_input(
        "Their labels in the questions",
        key="studies_labels",
        help="One word per criterion, in their order: 'consistent,fluent' asks for the MOST CONSISTENT and the "
        "LEAST FLUENT (blank: the criteria's names).",
    )
    name = c[3].text_input("Title (annotators read it)", key="studies_name")
    try:
        scale = scale_fields(task)
    except InputError as err:
        st.error(escape_markdown(err))
        return None
    planned = planned_design(st.session_state.get(PLANNER_BEST))  # set by the Study planner's page
    default = min(planned.per_item, MAX_PER_ITEM) if planned else DEFAULT_PER_ITEM
    c = st.columns(6)
    per_item = c[0].number_input("Annotators per item", 1, MAX_PER_ITEM, default, key="studies_per_item")
    annotators = c[1].number_input("Annotators", 1, 10_000, max(default, DEFAULT_PER_ITEM), key="studies_annotators")
    prompts = c[2].number_input("Prompts (0 = all)", 0, 100_000, key="studies_prompts")
    gold_rate = c[3].number_input("Gold rate", 0.0, 0.9, 0.0, 0.05, key="studies_gold_rate")
    check_rate = c[4].number_input(
        "Attention checks",
        0.0,
        0.5,
        0.0,
        0.05,
        key="studies_check_rate",
        help="Share of each annotator's pages that tell them what to choose ('choose passage B as MOST FLUENT'); "
        "annotators who fail them are flagged and left out of the judgments.",
    )
    seed = c[5].number_input("Seed", 0, 2**31 - 1, 0, key="studies_seed")
    st.caption(
        f"Annotators per item: {default} by default, from {escape_markdown(planned.describe())}."
        if planned
        else f"Annotators per item: {DEFAULT_PER_ITEM} by default; run the Study planner and its cheapest design "
        "reaching the target power becomes the default here."
    )
    crowd = st.radio("Recruitment", [PRIVATE, CROWD], horizontal=True, key="studies_recruit") == CROWD
    code = redirect = ""
    if crowd:
        c = st.columns(2)
        code = c[0].text_input("Completion code (blank: a random one)", key="studies_code", max_chars=100)
        redirect = c[1].text_input(
            "Redirect URL at the end (optional)",
            key="studies_redirect",
            help="e.g. https://app.prolific.com/submissions/complete?cc=CODE",
        )
    instructions = st.text_area("Instructions (Markdown)", height=150, key="studies_instructions")
    example = st.text_area("Example (Markdown)", height=120, key="studies_example")
    return Draft(
        demo,
        upload,
        task,
        criteria,
        labels,
        name,
        scale,
        int(per_item),
        int(annotators),
        int(prompts),
        float(gold_rate),
        float(check_rate),
        int(seed),
        crowd,
        code,
        redirect,
        instructions,
        example,
    )


def draft_items(d: Draft) -> list[ItemSpec]:
    """The draft's items: the demo's, or the uploaded CSV's.

    Raises
    ------
    lib.errors.InputError
        No upload yet, no criterion, or a file the items cannot be read from.
    """
    if d.demo:
        return demo_items(d.prompts or None, task=d.task)
    if d.upload is None:
        raise StudyError("upload the items CSV first")
    table = read_csv(d.upload.getvalue(), d.upload.name)
    return read_items(
        table, d.task, parse_criteria(d.criteria), file=d.upload.name, max_prompts=d.prompts or None, scale=d.scale
    )


def preview_progress(d: Draft, items: list[ItemSpec]) -> Progress:
    """What the first annotator's first page will show (passages in the items file's order: each annotator's
    order is counterbalanced) and about how many pages they will have.

    Raises
    ------
    lib.study.errors.StudyError
        No criterion, labels that do not fit the criteria, or no regular item.
    """
    criteria = parse_criteria(d.criteria)
    labels = parse_labels(d.labels, criteria) or {}
    regular = sum(it.gold is None for it in items)
    n = most_regular_pages(regular, d.per_item, d.annotators)
    total = (
        n + gold_count(n, d.gold_rate, len(items) - regular, d.check_rate) + gold_count(n, d.check_rate, n, d.gold_rate)
    )
    first = next((it for it in items if it.gold is None), None)
    if first is None:
        raise StudyError("the items have no item to judge (every item is a gold item)")
    page = Page(
        PREVIEW_ID, 1, total, first.prompt_text, [(LABELS[i], text) for i, (_, text) in enumerate(first.responses)]
    )
    return Progress(
        d.name,
        d.task,
        criteria,
        d.instructions,
        d.example,
        "preview",
        0,
        total,
        page,
        d.scale,
        {c: labels.get(c, c) for c in criteria},
    )


def show_preview(d: Draft) -> tuple[list[ItemSpec] | None, list[NameShown]]:
    """The preview of what annotators will see, and the system names it shows (warned about)."""
    items, found = None, []
    with st.expander(
        "Preview: exactly what an annotator sees (the first page; the passages' order varies per annotator)"
    ):
        try:
            items = draft_items(d)
            progress = preview_progress(d, items)
        except InputError as err:
            st.info(f"No preview yet: {escape_markdown(err)}")
            return None, []
        with st.container(border=True):
            preview(progress)
        texts = study_texts(d.name, d.instructions, d.example, progress.criteria, progress.labels)
        found = names_shown(texts, {s for it in items for s in it.systems})
    return items, found


def create_form() -> None:
    d = draft_fields()
    if d is None:
        return
    items, found = show_preview(d)
    allow = False
    if found:
        st.warning(
            "Annotators would read a system's name: "
            + escape_markdown("; ".join(f"'{f.system}' in the {f.where} (…{f.excerpt}…)" for f in found))
            + ". Remove it, or confirm below."
        )
        allow = st.checkbox("Annotators may read these names", key=STUDIES_ALLOW_NAMES)
    if not st.button("Create study", type="primary", key="studies_create"):
        return
    try:
        if not d.name.strip():
            raise StudyError("give the study a title: annotators read it at the top of every page")
        items = items if items is not None else draft_items(d)
        criteria = parse_criteria(d.criteria)
        created = create_study(
            items,
            task=d.task,
            criteria=criteria,
            annotators=d.annotators,
            per_item=d.per_item,
            gold_rate=d.gold_rate,
            instructions=d.instructions,
            example=d.example,
            name=d.name,
            seed=d.seed,
            scale=d.scale,
            labels=parse_labels(d.labels, criteria),
            check_rate=d.check_rate,
            crowd=d.crowd,
            completion_code=d.completion_code,
            redirect_url=d.redirect_url,
            allow_system_names=allow,
        )
    except InputError as err:
        st.error(f"Cannot create the study: {escape_markdown(err)}")
        return
    st.session_state[STUDIES_CHOSEN] = created.study_id
    people = "places on its link" if d.crowd else "annotators"
    st.success(f"Study {created.study_id} created: {len(items)} items, {len(created.tokens)} {people}.")


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


def open_in_data_page(study_id: int, task: str, keep_failed: bool) -> None:
    """Hand the judgments to the Data page as an upload of the study's export (best-worst / pairwise /
    ratings); what was left out (annotators who failed the attention checks) is kept for the Leaderboard to
    say."""
    done = export_study(study_id, keep_failed=keep_failed)
    data = csv_text(done.table).encode("utf-8")
    for key in [k for k in st.session_state if str(k).startswith(UPLOAD_WIDGETS) or k == DATASET]:
        del st.session_state[key]
    st.session_state.update(
        {
            UPLOADED: (export_name(study_id), data),
            UPLOAD_FORMAT: TASKS[task].format,
            UPLOAD_MAPPING: {},
            UPLOAD_CRITERION: None,
            UPLOAD_FILTER_COLUMN: NO_FILTER,
            UPLOAD_FILTER_VALUES: [],
            UPLOAD_DROP: False,
            VIEW_DATASET: UPLOAD,
            ANALYSIS_INPUT: None,
            STUDY_LEFT_OUT: (export_name(study_id), done.said()),
        }
    )
    st.switch_page("pages/data.py")


def shown(value: float, fmt: str) -> str:
    """A number for a metric, "—" when not known yet (NaN)."""
    return "—" if math.isnan(value) else fmt.format(value)


def show_links(study_id: int) -> None:
    """The study's links: one private link per annotator, or a crowd study's one link and its places."""
    crowd = crowd_table(study_id, base_url())
    links = study_links(study_id, base_url())
    if crowd.empty:
        with st.expander(f"Annotator links ({len(links)}): private, one per annotator"):
            st.code(
                "\n".join(f"{a}  {link}" for a, link in zip(links.annotator, links.link, strict=True)), language=None
            )
            st.download_button(
                "links.csv", csv_text(links), f"study_{study_id}_links.csv", mime="text/csv", key="studies_links"
            )
        return
    with st.expander(f"Study link for a crowd platform ({len(links)} places)", expanded=True):
        st.caption(
            "Give the platform this one link: each participant's first visit takes a free place, the same "
            "participant id resumes it, and the link says so when every place is taken. Prolific fills in "
            "its placeholders; elsewhere put the worker's id in worker_id. The ids are stored only as a keyed hash."
        )
        st.code("\n".join(f"{p}: {link}" for p, link in zip(crowd.platform, crowd.link, strict=True)), language=None)


def show_study(study_id: int, task: str) -> None:
    show_links(study_id)
    s = summarize(study_id)
    people = s.annotators
    c = st.columns(5)
    c[0].metric("pages answered", f"{int(people['done'].sum())} / {int(people['pages'].sum())}")
    c[1].metric("median s / judgment", shown(s.median_seconds_per_judgment, "{:.1f}"))
    c[2].metric("gold accuracy", shown(s.gold_accuracy, "{:.0%}"))
    c[3].metric("failed attention checks", int(people["failed_checks"].sum()) if len(people) else 0)
    c[4].metric("speeders", int(people["speeder"].sum()) if len(people) else 0)
    st.subheader("Per annotator")
    show_table(people, key="studies_people")
    st.caption(
        f"Speeders are {SPEEDER_RULE}. failed_checks: at least {FAIL_SHARE:.0%} of the attention checks they "
        "answered went against the instruction (their judgments are left out of the export unless kept below). "
        "agreement: the share of the other annotators' answers to the same items that equal theirs; reliability: "
        "Cohen's kappa of their answers against the Dawid-Skene estimate of the truth (1 = always the truth, "
        "0 = no better than a spammer)."
    )
    st.subheader("Agreement so far")
    show_table(s.agreement, key="studies_agreement")
    st.caption(TASKS[task].agreement.help)
    with st.expander("Per item"):
        show_table(s.items, key="studies_items_table")
    keep = st.checkbox("Keep annotators who failed the attention checks", key="studies_keep_failed")
    done = export_study(study_id, keep_failed=keep)
    if done.failed:
        st.caption(escape_markdown(done.said()) + ".")
    c = st.columns(2)
    c[0].download_button(
        "Download the judgments (CSV)", csv_text(done.table), export_name(study_id), mime="text/csv", key="studies_dl"
    )
    if c[1].button("Open the judgments in the Data page", disabled=done.table.empty, key="studies_open"):
        open_in_data_page(study_id, task, keep)
    next_batch_section(study_id, crowd=not crowd_table(study_id, base_url()).empty)


def next_batch_section(study_id: int, *, crowd: bool) -> None:
    """Adaptive assignment: the Leaderboard's "annotate next" batch on this study's judgments, as new pages."""
    st.subheader("Next batch (adaptive)")
    kept = st.session_state.get(RANKING)  # the Leaderboard's (key, result or message)
    result = None if kept is None or isinstance(kept[1], str) or kept[0][0] != export_name(study_id) else kept[1]
    if result is None or result.next_batch is None:
        st.caption(
            "Open the judgments in the Data page and rank them on the Leaderboard: its 'what to annotate next' "
            "batch (the pairs and prompts that most reduce the ranking's uncertainty) can then be added here "
            "as new pages for annotators who have not judged those items."
        )
        return
    batch = result.next_batch
    c = st.columns(3)
    per = c[0].number_input("More annotators per item", 1, 100, 1, key="studies_next_per")
    cap = c[1].number_input("Items at most", 1, 10_000, 10, key="studies_next_items")
    new = c[2].checkbox(
        "New annotators where every annotator has judged an item",
        value=True,
        key="studies_next_new",
        help="New places on the study's link (crowd) or new private links, shown here.",
    )
    st.caption(f"The Leaderboard's batch: {len(batch)} (pair, prompt) judgments, best first.")
    if st.button("Add the next batch as new pages", key="studies_extend"):
        done = extend(study_id, batch, per_prompt=int(per), max_items=int(cap), new_annotators=new)
        show_extended(study_id, done, crowd=crowd)


def show_extended(study_id: int, done: Extended, *, crowd: bool) -> None:
    """What the next batch placed (with the new annotators' links) or, when nothing, why and what to do."""
    placed = sum(done.pages.values())
    if not placed:
        st.warning(
            "No page was placed. "
            + escape_markdown(" ".join(f"{p}." for p in done.problems()) or "The batch is empty.")
        )
        return
    st.success(f"{placed} new pages for {len(done.pages)} annotators.")
    if done.new and crowd:
        st.info(
            f"{len(done.new)} new place(s) on the study link ({', '.join(label for label, _ in done.new)}): raise "
            "the number of places on the crowd platform by as many."
        )
    elif done.new:
        links = study_links(study_id, base_url())
        fresh = links[links["annotator"].isin([label for label, _ in done.new])]
        st.info(f"{len(done.new)} new annotator(s) for the items every annotator had judged: send them their links.")
        st.code("\n".join(f"{a}  {link}" for a, link in zip(fresh.annotator, fresh.link, strict=True)), language=None)
    for problem in done.problems():
        st.warning(escape_markdown(problem) + ".")


st.title("Studies")
st.caption(
    "Serve a judgment form to annotators through private links or a crowd platform's link, keep every answer "
    "in the study database, and open the judgments in the Data page (docs/studies.md)."
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
chosen = st.session_state.get(STUDIES_CHOSEN)
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
