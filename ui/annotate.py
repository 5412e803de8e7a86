"""The annotator's view: app.py serves only this when the URL holds ``study_token`` (a private link) or
``study_link`` (a crowd study's one link, :mod:`lib.study.crowd`: the participant's place is found, or taken
on the first visit, from the platform id in the link).

One page per task: the researcher's instructions and example (Markdown sanitised: no images, no
links, no HTML), the item's text and the passages labelled A, B, ... in the stored counterbalanced order
(escaped: item text is shown literally), an attention check's instruction on its pages, the questions (MOST
/ LEAST per criterion, MORE ... with A / B / tie, or a rating of every passage per criterion on the study's
scale with its ends labelled; each named by the criterion's label, "MOST CONSISTENT"), checked by
:func:`lib.study.annotate.submit`, and the progress; at the end the completion code and the way back to the
crowd platform when the study has them. Streamlit's own chrome (toolbar, main menu, deploy button, running
indicator) is hidden. Everything is in the database, so a refresh, a closed tab or a server restart resumes
at the first page without an answer. The Studies page's preview (:func:`preview`) draws a page with the same
functions, so it is exactly what an annotator sees.

When the database fails (stopped, unreachable, read-only, deleted: any error but the annotator's own,
a bad link, task or choice), the annotator reads a plain message and the page stays as it was, their
choices in the form, so pressing Submit again stores them once the database is back; the detail (the
database, the driver's error) goes to the operator's log only.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

import streamlit as st

from lib.study.annotate import Page, Progress, open_page, submit
from lib.study.create import TOKEN_PARAM
from lib.study.crowd import CROWD_PARAM, join
from lib.study.errors import AnswerConflict, AnswerError, JoinError, StudyError, TaskError, TokenError
from lib.study.tasks import TASKS, TIE, Scale, TaskSpec, question
from ui.keys import ANNOTATE_SHOWN, INSTRUCTIONS_SEEN
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
_YOURS = (TokenError, TaskError, AnswerError, JoinError)
"""The refusals an annotator reads as they are (their link, their task, their choices); any other error is
the database's, told in plain words (:data:`UNREACHABLE`, :data:`NOT_SAVED`)."""

NO_CHROME = (
    "<style>[data-testid='stToolbar'], [data-testid='stMainMenu'], [data-testid='stAppDeployButton'], "
    "[data-testid='stStatusWidget'], [data-testid='stDecoration'] {display: none !important;}</style>"
)
"""Streamlit's chrome hidden from annotators (the toolbar, its main menu, the deploy button, the running
indicator): the project's ``client.toolbarMode = "viewer"`` already drops the developer options (deploy,
rerun, clear cache) for everyone; an annotator sees no menu at all."""

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


def _token() -> str:
    """The token of the annotator this URL is for: a private link's, or the place a crowd participant holds
    (taken on their first visit).

    Raises
    ------
    TokenError, JoinError
        A link that is not valid, a crowd link without a participant id, a study with no place left.
    StudyError
        The database cannot be reached.
    """
    if TOKEN_PARAM in st.query_params:
        return st.query_params.get(TOKEN_PARAM, "")
    params = {k: st.query_params.get(k, "") for k in st.query_params}
    return join(params.get(CROWD_PARAM, ""), params)


def _seen(token: str) -> str:
    """Session key: this browser session has read the instructions of this link (pressed Start)."""
    return f"{INSTRUCTIONS_SEEN}{token}"


def _opened(token: str) -> Progress:
    """The annotator's progress; their page is marked shown (its time starts) only once the instructions
    screen is behind them: Start pressed in this session, or a page answered already (a resumed link)."""
    progress = open_page(token, show=bool(st.session_state.get(_seen(token))))
    if progress.done > 0 and not st.session_state.get(_seen(token)):
        st.session_state[_seen(token)] = True
        progress = open_page(token)
    return progress


def annotation_page() -> None:
    """The annotator's page for the link in the URL (an unknown one gets a message, nothing else)."""
    st.html(NO_CHROME)
    key = str(sorted(st.query_params.to_dict().items()))  # the page last shown is kept per link
    try:
        token = _token()
        progress = _opened(token)
    except _YOURS as err:
        st.error(escape_markdown(err))
        return
    except StudyError as err:
        log.error("the annotator's page could not be read from the study database: %s", err, exc_info=err)
        shown = st.session_state.get(ANNOTATE_SHOWN)
        if shown is None or shown[0] != key:
            st.error(UNREACHABLE)
            return
        token, progress = shown[1]  # the page as it was, the annotator's choices still in its form
    else:
        st.session_state[ANNOTATE_SHOWN] = (key, (token, progress))
    st.title(escape_markdown(progress.study_name))
    if progress.done == 0 and progress.page is not None and not st.session_state.get(_seen(token)):
        instructions(progress, expanded=True)
        if st.button("Start", type="primary"):
            st.session_state[_seen(token)] = True
            st.rerun()
        return
    if progress.page is None:
        finished(progress)
        return
    instructions(progress, expanded=False)
    _page(token, progress, progress.page)


def finished(progress: Progress) -> None:
    """The end: every page answered; the completion code and the way back to the platform when set."""
    st.progress(1.0, text=f"All {progress.total} pages done")
    st.success("Thank you: every page is answered and saved. You can close this tab.")
    if progress.completion_code:
        st.markdown("Your completion code (enter it on the platform):")
        st.code(progress.completion_code, language=None)
    if progress.redirect_url:
        st.link_button("Return to the platform and finish", progress.redirect_url, type="primary")


def instructions(progress: Progress, *, expanded: bool) -> None:
    """The researcher's instructions and example (sanitised Markdown), in expanders."""
    with st.expander("Instructions", expanded=expanded):
        st.markdown(safe_markdown(progress.instructions) or "No instructions.")
    if progress.example.strip():
        with st.expander("Example", expanded=expanded):
            st.markdown(safe_markdown(progress.example))


def page_form(progress: Progress, page: Page, *, key: str = "", disabled: bool = False) -> tuple[dict, bool]:
    """The page's text, passages and questions in a form; its choices and whether Submit was pressed.

    ``key`` prefixes the widgets' keys (the Studies page's preview draws the same form beside its own
    widgets); ``disabled`` draws it without taking answers.
    """
    st.progress(progress.done / progress.total, text=f"Page {progress.done + 1} of {progress.total}")
    with st.container():  # on every page, so that a check's page is laid out as the others
        if page.prompt_text:
            st.markdown(f"**The fact / prompt:** {escape_markdown(page.prompt_text)}")
        if page.instruction:
            st.markdown(f"**{escape_markdown(page.instruction)}**")
    for label, text in page.passages:
        with st.container(border=True):
            st.markdown(f"**{label}.** {escape_markdown(text)}")
    labels = [label for label, _ in page.passages]
    spec = TASKS[progress.task]
    with st.form(f"{key}page_{page.assignment_id}"):
        choices: dict[str, dict[str, object]] = {}
        for criterion in progress.criteria:
            st.markdown(f"**{escape_markdown(criterion.upper())}**")
            ask = _Ask(f"{key}{page.assignment_id}_{criterion}", progress.label_of(criterion), labels, disabled)
            if spec.rated:
                choices[criterion] = _ratings(ask, progress.scale or Scale())
            else:
                choices[criterion] = _picks(ask, spec)
        sent = st.form_submit_button("Submit this page", type="primary", disabled=disabled)
    return choices, sent


def _page(token: str, progress: Progress, page: Page) -> None:
    choices, sent = page_form(progress, page)
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


@dataclass(frozen=True)
class _Ask:
    """One criterion's questions on a page: the widgets' key stem, the criterion's label, the passages'
    labels, and whether the form takes answers."""

    key: str
    label: str
    passages: list[str]
    disabled: bool


def _picks(ask: _Ask, spec: TaskSpec) -> dict[str, object]:
    """One radio per key of the task (MOST and LEAST, or the winner among the passages and a tie)."""
    columns = st.columns(len(spec.keys))
    return {
        key: column.radio(
            escape_markdown(question(key, ask.label)),
            [*ask.passages, TIE] if spec.tie else ask.passages,
            index=None,
            horizontal=True,
            key=f"choice_{ask.key}_{key}",
            disabled=ask.disabled,
        )
        for column, key in zip(columns, spec.keys, strict=True)
    }


def _ratings(ask: _Ask, scale: Scale) -> dict[str, object]:
    """A rating of every passage on the scale, its ends labelled (the researcher's words, escaped)."""
    ends = {1: f"1 · {scale.low}", scale.points: f"{scale.points} · {scale.high}"}
    return {
        passage: st.radio(
            escape_markdown(question(passage, ask.label)),
            list(range(1, scale.points + 1)),
            index=None,
            horizontal=True,
            format_func=lambda v: escape_markdown(ends.get(v, str(v))),
            key=f"rating_{ask.key}_{passage}",
            disabled=ask.disabled,
        )
        for passage in ask.passages
    }


def preview(progress: Progress) -> None:
    """What an annotator sees, drawn by the annotator's own functions: the title, the instructions and
    example, and the first page (its form disabled). For the Studies page, before a study is created."""
    st.title(escape_markdown(progress.study_name))
    instructions(progress, expanded=True)
    if progress.page is not None:
        page_form(progress, progress.page, key="preview_", disabled=True)


def serve_annotator() -> None:
    """Serve the annotation page alone: no navigation, no other page of the app reachable."""
    st.navigation(
        [st.Page(annotation_page, title="Annotation", icon=":material/rate_review:", default=True)], position="hidden"
    ).run()
