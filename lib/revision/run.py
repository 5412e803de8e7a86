"""One revision run, shared by the page and ``python -m lib revise``: edits from an engine (the
diff-based alignment or an LLM), the drafts each editor revised (failed drafts left out), the
located edits and Revision Distance per draft (Ma et al. 2024), and the edits as JSON lines."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from lib.revision.client import DraftTask, EditProposer, LLMSettings, results_to_tables
from lib.revision.diff_edits import diff_edits_table
from lib.revision.locate import locate_edits
from lib.revision.metrics import RUN_KEYS, revision_distance
from lib.revision.prompts import PromptTemplate
from lib.revision.revised import DRAFT_KEYS, revised_table
from lib.revision.schema import DIFF_EDITOR, EDIT_FIELDS

FAILURE_COLUMNS = ["text_id", "system", "error"]
RD_COLUMNS = ["text_id", "system", "revision_distance", "unlocated"]
"""Columns of the command's ``revision_distance.csv``."""


def llm_editor(model: str) -> str:
    """``editor`` label of the edits an LLM proposed."""
    return f"LLM: {model}"


@dataclass
class Revision:
    """Edits of one editor (an engine) and the drafts it revised.

    Attributes
    ----------
    editor : str
        :data:`~lib.revision.schema.DIFF_EDITOR` or :func:`llm_editor`.
    edits : DataFrame
        :data:`~lib.revision.schema.EDIT_COLUMNS` (LLM edits also ``path``, the answer path).
    evaluated : DataFrame
        ``text_id, system, editor, draft`` (:func:`lib.revision.revised.revised_table`): the drafts
        the editor revised; a failed draft is left out, so it neither scores 0 nor counts in agreement.
    failures : DataFrame
        ``text_id, system, error``: drafts the LLM could not revise, with the reason.
    """

    editor: str
    edits: pd.DataFrame
    evaluated: pd.DataFrame
    failures: pd.DataFrame


def _revision(drafts: pd.DataFrame, editor: str, edits: pd.DataFrame, failures: pd.DataFrame) -> Revision:
    failed = set(zip(failures["text_id"], failures["system"], strict=True))
    done = [(t, s) not in failed for t, s in zip(drafts["text_id"], drafts["system"], strict=True)]
    return Revision(editor, edits, revised_table(drafts, drafts.loc[done, DRAFT_KEYS].assign(editor=editor)), failures)


def with_reference(drafts: pd.DataFrame) -> pd.DataFrame:
    """The drafts that have a reference text (not missing, not blank), for the diff-based engine and
    the reference-based prompt.

    Parameters
    ----------
    drafts : DataFrame
        ``text_id, system, draft`` and optionally ``reference`` (none: no draft has one).
    """
    if "reference" not in drafts.columns:
        return drafts.iloc[:0].assign(reference=pd.Series(dtype=object))
    reference = drafts["reference"]
    return drafts[reference.notna() & (reference.astype(str).str.strip() != "")]


def llm_drafts(drafts: pd.DataFrame, template: PromptTemplate) -> pd.DataFrame:
    """The drafts an LLM revises with ``template``: those with a reference text for a prompt that needs
    one (:func:`with_reference`), else every draft, its reference left out (None).

    Parameters
    ----------
    drafts : DataFrame
        ``text_id, system, draft`` and optionally ``reference``.
    template : PromptTemplate
    """
    return with_reference(drafts) if template.needs_reference else drafts.assign(reference=None)


def diff_revision(drafts: pd.DataFrame) -> Revision:
    """Diff-based edits of every draft towards its reference (no LLM, no failures).

    Parameters
    ----------
    drafts : DataFrame
        ``text_id, system, draft, reference``.

    Raises
    ------
    FormatError
        A draft or reference too long to align (:func:`lib.revision.diff_edits.diff_edits_table`).
    """
    return _revision(drafts, DIFF_EDITOR, diff_edits_table(drafts), pd.DataFrame(columns=FAILURE_COLUMNS))


def llm_run_key(
    drafts: pd.DataFrame, base_url: str | None, model: str, template: PromptTemplate
) -> tuple[str | None, str, str, str]:
    """What an LLM revision run's result belongs to: the server, the model, the prompt and these exact
    drafts and references (another LAMP writer's reference text is a new run).

    Parameters
    ----------
    drafts : DataFrame
        ``text_id, system, draft, reference`` (``reference`` may be None), as given to
        :func:`llm_revision`.
    base_url, model : str
        The LLM server (None: the client's default) and model.
    template : PromptTemplate

    Returns
    -------
    tuple
        ``(base_url, model, template.version, sha256)``, the last the hex SHA-256 of the four
        columns' row hashes (:func:`pandas.util.hash_pandas_object`, index left out).
    """
    texts = pd.util.hash_pandas_object(drafts[["text_id", "system", "draft", "reference"]], index=False)
    return base_url, model, template.version, hashlib.sha256(texts.to_numpy().tobytes()).hexdigest()


def llm_revision(
    drafts: pd.DataFrame,
    settings: LLMSettings,
    template: PromptTemplate,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> Revision:
    """Edits an LLM proposes for every draft (:class:`lib.revision.client.EditProposer`).

    Parameters
    ----------
    drafts : DataFrame
        ``text_id, system, draft`` and, for a template that needs one, ``reference``.
    settings : LLMSettings
    template : PromptTemplate
        The reference is sent only when the template needs it.
    progress : callable, optional
        ``progress(done, total)`` after each draft.

    Returns
    -------
    Revision
        Drafts that failed are in ``failures`` with their reason, the others are kept.
    """
    tasks = [
        DraftTask(r.text_id, r.system, r.draft, r.reference if template.needs_reference else None)
        for r in drafts.assign(reference=drafts.get("reference")).itertuples(index=False)
    ]
    editor = llm_editor(settings.model)
    edits, failures = results_to_tables(EditProposer(settings, template).run(tasks, progress=progress), editor)
    return _revision(drafts, editor, edits, failures)


def score(edits: pd.DataFrame, drafts: pd.DataFrame, evaluated: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Locate the edits in their drafts and count Revision Distance per revised draft.

    Parameters
    ----------
    edits : DataFrame
        :data:`~lib.revision.schema.EDIT_COLUMNS` (other columns such as ``path`` are dropped).
    drafts : DataFrame
        ``text_id, system, draft``.
    evaluated : DataFrame
        ``text_id, system, editor, draft``: every draft an editor revised.

    Returns
    -------
    located : DataFrame
        :func:`lib.revision.locate.locate_edits`.
    per_draft : DataFrame
        :func:`lib.revision.metrics.revision_distance`.

    Raises
    ------
    InputError
        An edit for a draft that is not among ``drafts``.
    """
    located = locate_edits(edits.drop(columns=["path"], errors="ignore"), drafts)
    return located, revision_distance(located, evaluated)


def beside_writers(
    located: pd.DataFrame, per_draft: pd.DataFrame, writers: pd.DataFrame, writers_revised: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Edits and revised drafts of another source beside the human writers' own, for agreement with them
    (:func:`lib.revision.metrics.span_agreement`).

    Parameters
    ----------
    located, per_draft : DataFrame
        The other source's located edits and drafts as scored (:func:`score`).
    writers, writers_revised : DataFrame
        The writers' located edits (:func:`score` of their edits) and their revised drafts.

    Returns
    -------
    tuple of DataFrame
        The edits (a new index) and the revised drafts, the other source's first.
    """
    return pd.concat([located, writers], ignore_index=True), pd.concat([per_draft, writers_revised])


def edits_jsonl(located: pd.DataFrame, *, editor: bool = True) -> str:
    """The located edits as JSON lines: ``text_id, system`` (``editor``), the six schema fields and
    ``located`` (bool), one edit per line, text as written (not ASCII-escaped).

    Parameters
    ----------
    editor : bool
        Include the ``editor`` column (the command's ``edits.jsonl`` has one editor and leaves it out).
    """
    columns = [*RUN_KEYS[:2], *(["editor"] if editor else []), *EDIT_FIELDS, "located"]
    return "".join(
        json.dumps({**r, "located": bool(r["located"])}, ensure_ascii=False) + "\n"
        for r in located[columns].to_dict("records")
    )
