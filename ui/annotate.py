"""The annotator's view: app.py serves only this when the URL holds ``study_token``.

One page per task: the researcher's instructions and example (Markdown sanitised: no images, no
links, no HTML), the item's text and the passages labelled A, B, ... in the stored shuffled order
(escaped: item text is shown literally), the choices (MOST / LEAST per criterion, A / B / tie, or a
rating of every passage per criterion on the study's scale with its ends labelled), checked by
:func:`lib.study.annotate.submit`, and the progress. Everything is in the database, so a refresh,
a closed tab or a server restart resumes at the first page without an answer.

When the database fails (stopped, unreachable, read-only, deleted: any error but the annotator's own,
a bad link, task or choice), the annotator reads a plain message and the page stays as it was, their
choices in the form, so pressing Submit again stores them once the database is back; the detail (the
database, the driver's error) goes to the operator's log only.
"""

from __future__ import annotations

import logging
import re

import streamlit as st

from lib.study.annotate import Page, Progress, open_page, submit
from lib.study.create import TOKEN_PARAM
from lib.study.errors import AnswerConflict, AnswerError, StudyError, TaskError, TokenError
from lib.study.tasks import TASKS, TIE, Scale, TaskSpec
from ui.text import escape_markdown

log = logging.getLogger(__name__)

UNREACHABLE = (
    "The study cannot be reached just now. Nothing you answered is lost: reload this page in a minute. "
    "If this persists, tell the researcher."
)
NOT_SAVED = (
    "Your answer could not be saved just now. Your choices are kept on this page: press Submit again in a moment. "
    "If this persists, tell the researcher."
)
_YOURS = (TokenError, TaskError, AnswerError)
"""The refusals an annotator reads as they are (their link, their task, their choices); any other error is
the database's, told in plain words (:data:`UNREACHABLE`, :data:`NOT_SAVED`)."""
_SHOWN = "annotate_shown"
"""Session key: ``(token, Progress)`` of the page last shown, shown again while the database fails."""

_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\(([^)]*)\)")
_AUTOLINK = re.compile(r"<[^>\n]*>|https?://\S+|www\.\S+|\S+@\S+")
_SPECIAL = re.compile(r"([$:&~|=])")


def safe_markdown(text: str) -> str:
    """The researcher's Markdown with what could reach out or run made inert.

    Images become ``[image: alt]`` and links ``text (address)``, both as plain text; HTML tags and bare
    addresses are shown literally (:func:`ui.text.escape_markdown`); ``$`` (LaTeX), ``:`` (Streamlit's
    icon and colour directives), ``&`` (entities), ``~``, ``|`` and ``=`` are escaped. Headings,
    emphasis, lists and paragraphs stay.
    """
    out = []
    for line in text.splitlines():
        pieces, last = [], 0
        for match in re.finditer(f"{_IMAGE.pattern}|{_LINK.pattern}|{_AUTOLINK.pattern}", line):
            pieces.append(_SPECIAL.sub(r"\\\1", line[last : match.start()]))
            token = match.group(0)
            if (image := _IMAGE.fullmatch(token)) is not None:
                pieces.append(escape_markdown(f"[image: {image.group(1)}]"))
            elif (link := _LINK.fullmatch(token)) is not None:
                pieces.append(escape_markdown(f"{link.group(1)} ({link.group(2)})"))
            else:
                pieces.append(escape_markdown(token))
            last = match.end()
        pieces.append(_SPECIAL.sub(r"\\\1", line[last:]))
        out.append("".join(pieces))
    return "\n".join(out)


def annotation_page() -> None:
    """The annotator's page for the token in the URL (an unknown token gets a message, nothing else)."""
    token = st.query_params.get(TOKEN_PARAM, "")
    try:
        progress = open_page(token)
    except _YOURS as err:
        st.error(escape_markdown(err))
        return
    except StudyError as err:
        log.error("the annotator's page could not be read from the study database: %s", err, exc_info=err)
        shown = st.session_state.get(_SHOWN)
        if shown is None or shown[0] != token:
            st.error(UNREACHABLE)
            return
        progress = shown[1]  # the page as it was, the annotator's choices still in its form
    else:
        st.session_state[_SHOWN] = (token, progress)
    st.title(escape_markdown(progress.study_name))
    seen = f"instructions_seen_{progress.label}"
    if progress.done == 0 and progress.page is not None and not st.session_state.get(seen):
        _instructions(progress, expanded=True)
        if st.button("Start", type="primary"):
            st.session_state[seen] = True
            st.rerun()
        return
    if progress.page is None:
        st.progress(1.0, text=f"All {progress.total} pages done")
        st.success("Thank you: every page is answered and saved. You can close this tab.")
        return
    _instructions(progress, expanded=False)
    _page(token, progress, progress.page)


def _instructions(progress: Progress, *, expanded: bool) -> None:
    with st.expander("Instructions", expanded=expanded):
        st.markdown(safe_markdown(progress.instructions) or "No instructions.")
    if progress.example.strip():
        with st.expander("Example", expanded=expanded):
            st.markdown(safe_markdown(progress.example))


def _page(token: str, progress: Progress, page: Page) -> None:
    st.progress(progress.done / progress.total, text=f"Page {progress.done + 1} of {progress.total}")
    if page.prompt_text:
        st.markdown(f"**The fact / prompt:** {escape_markdown(page.prompt_text)}")
    for label, text in page.passages:
        with st.container(border=True):
            st.markdown(f"**{label}.** {escape_markdown(text)}")
    labels = [label for label, _ in page.passages]
    spec = TASKS[progress.task]
    with st.form(f"page_{page.assignment_id}"):
        choices: dict[str, dict[str, object]] = {}
        for criterion in progress.criteria:
            st.markdown(f"**{escape_markdown(criterion.upper())}**")
            if spec.rated:
                choices[criterion] = _ratings(page, criterion, labels, progress.scale or Scale())
            else:
                choices[criterion] = _picks(page, criterion, labels, spec)
        sent = st.form_submit_button("Submit this page", type="primary")
    if sent:
        try:
            submit(token, page.assignment_id, choices)
        except AnswerConflict:
            st.rerun()  # answered in another tab: show the next page
        except _YOURS as err:
            st.error(escape_markdown(err))
        except StudyError as err:
            log.error("an answer could not be stored (the annotator was asked to submit again): %s", err, exc_info=err)
            st.error(NOT_SAVED)
        else:
            st.rerun()


def _picks(page: Page, criterion: str, labels: list[str], spec: TaskSpec) -> dict[str, object]:
    """One radio per key of the task (MOST and LEAST, or the winner among the labels and a tie)."""
    columns = st.columns(len(spec.keys))
    return {
        key: column.radio(
            escape_markdown(f"{key.upper()} {criterion}" if key != "winner" else f"Better ({criterion})"),
            labels if key != "winner" else [*labels, TIE],
            index=None,
            horizontal=True,
            key=f"choice_{page.assignment_id}_{criterion}_{key}",
        )
        for column, key in zip(columns, spec.keys, strict=True)
    }


def _ratings(page: Page, criterion: str, labels: list[str], scale: Scale) -> dict[str, object]:
    """A rating of every passage on the scale, its ends labelled (the researcher's words, escaped)."""
    ends = {1: f"1 · {scale.low}", scale.points: f"{scale.points} · {scale.high}"}
    return {
        label: st.radio(
            escape_markdown(f"{label}: {criterion}"),
            list(range(1, scale.points + 1)),
            index=None,
            horizontal=True,
            format_func=lambda v: escape_markdown(ends.get(v, str(v))),
            key=f"rating_{page.assignment_id}_{criterion}_{label}",
        )
        for label in labels
    }


def serve_annotator() -> None:
    """Serve the annotation page alone: no navigation, no other page of the app reachable."""
    st.navigation(
        [st.Page(annotation_page, title="Annotation", icon=":material/rate_review:", default=True)], position="hidden"
    ).run()
