"""Which drafts each editor revised: the evaluated table behind Revision Distance.

Revision Distance is a mean over the drafts an editor revised (Ma et al. 2024), so a draft an
editor never saw must not count as revised with no edits. :func:`revised_table` builds the
evaluated table from (draft, editor) pairs for every source: an engine's run
(:mod:`lib.revision.run`), the LAMP writers (:mod:`lib.revision.lamp`) and uploaded edits, whose
pairs :func:`revised_drafts` finds from the edits or takes from the user's statement.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from lib.errors import DesignError, InputError, SettingsError
from lib.revision.schema import KEY_COLUMNS

DRAFT_KEYS = list(KEY_COLUMNS[:2])
"""A draft is (``text_id``, ``system``)."""

AUTO, EDITED, EVERY = "auto", "edited", "every"
RULES: dict[str, str] = {
    AUTO: "as the edits show",
    EDITED: "only the drafts with its edits",
    EVERY: "every draft (a draft without its edits scores 0)",
}
"""How the drafts each editor of uploaded edits revised are found: ``auto`` tells from the edits
and refuses when they cannot tell; ``edited`` and ``every`` are the user's statement."""


def revised_table(drafts: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The evaluated table: one row per (draft, editor) pair, with the draft's text.

    Parameters
    ----------
    drafts : DataFrame
        ``text_id, system, draft``, one row per draft.
    pairs : DataFrame
        ``text_id, system, editor`` (other columns, e.g. ``postedit``, are kept): the drafts each
        editor revised, one row per pair.

    Returns
    -------
    DataFrame
        ``pairs``' columns and ``draft``, in ``pairs``' order.

    Raises
    ------
    InputError
        A pair whose draft is not among ``drafts``, or a pair listed twice.
    """
    twice = pairs.duplicated([*DRAFT_KEYS, "editor"])
    if twice.any():
        t, s, e = pairs.loc[twice, [*DRAFT_KEYS, "editor"]].iloc[0]
        raise InputError(f"the draft text_id '{t}', system '{s}' is listed twice for editor '{e}'")
    table = pairs.merge(drafts[[*DRAFT_KEYS, "draft"]], on=DRAFT_KEYS, how="left", validate="many_to_one")
    missing = table["draft"].isna()
    if missing.any():
        t, s = table.loc[missing, DRAFT_KEYS].iloc[0]
        raise InputError(f"no draft with text_id '{t}', system '{s}' among the {len(drafts)} drafts")
    return table


def editor_counts(evaluated: pd.DataFrame, edits: pd.DataFrame) -> pd.DataFrame:
    """How many drafts each editor revised, and with how many of them it made an edit.

    Parameters
    ----------
    evaluated : DataFrame
        ``text_id, system, editor``: the drafts each editor revised.
    edits : DataFrame
        ``text_id, system, editor``: one row per edit.

    Returns
    -------
    DataFrame
        ``editor, drafts, with_edits`` (int64), editors sorted by name.
    """
    keys = [*DRAFT_KEYS, "editor"]
    edited = evaluated[keys].merge(edits[keys].drop_duplicates(), on=keys)
    drafts = evaluated.groupby("editor").size()
    with_edits = edited.groupby("editor").size().reindex(drafts.index, fill_value=0)
    return pd.DataFrame({"editor": drafts.index, "drafts": drafts.to_numpy(), "with_edits": with_edits.to_numpy()})


def shared_drafts(evaluated: pd.DataFrame) -> int:
    """How many drafts every editor in ``evaluated`` (``text_id, system, editor``) revised."""
    per_draft = evaluated.groupby(DRAFT_KEYS)["editor"].nunique()
    return int((per_draft == evaluated["editor"].nunique()).sum())


@dataclass(frozen=True)
class RevisedDrafts:
    """The drafts each editor of uploaded edits revised.

    Attributes
    ----------
    rule : str
        :data:`EDITED` or :data:`EVERY`: the rule found (``auto``) or stated.
    reason : str
        Why this rule, a sentence for the page (e.g. "Every editor has edits for every draft.").
    evaluated : DataFrame
        ``text_id, system, editor, draft`` (:func:`revised_table`).
    per_editor : DataFrame
        :func:`editor_counts`.
    unassigned : DataFrame
        ``text_id, system``: drafts no editor revised (rule ``edited``: drafts without any edit),
        left out of Revision Distance.
    """

    rule: str
    reason: str
    evaluated: pd.DataFrame
    per_editor: pd.DataFrame
    unassigned: pd.DataFrame


def _found_rule(edited: pd.DataFrame, editors: list[str], n_drafts: int) -> tuple[str, str]:
    """The rule the edits show, and why: one editor, or every editor on every draft -> every draft;
    every draft with edits from exactly one editor (editor-specific ids) -> the drafts with its edits.

    Raises DesignError otherwise, naming what the edits leave open."""
    per_editor = edited.groupby("editor").size().reindex(editors, fill_value=0)
    if len(editors) <= 1:
        return EVERY, "One editor: it revised every draft (a draft without its edits scores 0)."
    if (per_editor == n_drafts).all():
        return EVERY, "Every editor has edits for every draft."
    state = f"State which: '{RULES[EDITED]}' or '{RULES[EVERY]}'"
    shared = edited.duplicated(DRAFT_KEYS).any()
    unedited = n_drafts - len(edited.drop_duplicates(DRAFT_KEYS))
    if not shared and not unedited:
        return EDITED, "Every draft has edits from one editor only, so each editor revised the drafts it has edits for."
    if not shared:
        raise DesignError(
            f"the edits do not say which drafts each editor revised: no draft has edits from two editors, but "
            f"{unedited} of the {n_drafts} drafts have edits from none. Each editor may have revised only its "
            f"own drafts (those {unedited} then have no editor and are left out), or every draft with few "
            f"edits. {state}"
        )
    partial = ", ".join(f"{e}: {n} of {n_drafts}" for e, n in per_editor.items() if n < n_drafts)
    raise DesignError(
        f"the edits do not say which drafts each editor revised: editors share drafts, and some have edits "
        f"for only part of the {n_drafts} drafts ({partial}). A draft without an editor's edits may have been "
        f"revised with nothing to change (it counts 0) or never given to that editor. {state}"
    )


def revised_drafts(drafts: pd.DataFrame, edits: pd.DataFrame, rule: str = AUTO) -> RevisedDrafts:
    """The drafts each editor of uploaded edits revised, and the evaluated table.

    With ``auto``, one editor revised every draft (as ``python -m lib revise`` counts its own
    edits); several editors revised every draft when each has edits for every draft, and only the
    drafts with their edits when every draft has edits from exactly one of them (each editor's
    drafts under its own ids, as in LAMP's re-annotation files). Otherwise the edits cannot tell a
    draft revised with nothing to change from one never given to that editor, and the rule must be
    stated (``edited`` or ``every``); for any other assignment, give the pairs to
    :func:`revised_table`.

    Parameters
    ----------
    drafts : DataFrame
        ``text_id, system, draft``, one row per draft.
    edits : DataFrame
        ``text_id, system, editor``, one row per edit; edits of drafts not among ``drafts`` are
        ignored here (:func:`lib.revision.locate.locate_edits` refuses them).
    rule : str
        A key of :data:`RULES`.

    Returns
    -------
    RevisedDrafts

    Raises
    ------
    SettingsError
        ``rule`` is not a key of :data:`RULES`.
    DesignError
        ``auto``, and the edits cannot tell which drafts each editor revised (the message names the
        editors and what to state).
    """
    if rule not in RULES:
        raise SettingsError(f"unknown rule '{rule}' for the drafts each editor revised; one of {', '.join(RULES)}")
    keys = [*DRAFT_KEYS, "editor"]
    editors = list(pd.unique(edits["editor"]))
    edited = edits[keys].drop_duplicates().merge(drafts[DRAFT_KEYS], on=DRAFT_KEYS)
    reason = f"As stated: {RULES[rule]}."
    if rule == AUTO:
        rule, reason = _found_rule(edited, editors, len(drafts))
    pairs = drafts[DRAFT_KEYS].merge(pd.DataFrame({"editor": editors}), how="cross") if rule == EVERY else edited
    evaluated = revised_table(drafts, pairs)
    unassigned = drafts[DRAFT_KEYS].merge(pairs[DRAFT_KEYS].drop_duplicates(), how="left", indicator=True)
    return RevisedDrafts(
        rule,
        reason,
        evaluated,
        editor_counts(evaluated, edits),
        unassigned.loc[unassigned["_merge"] == "left_only", DRAFT_KEYS].reset_index(drop=True),
    )


def first_edited(per_draft: pd.DataFrame) -> tuple[str, str, str] | None:
    """``(text_id, system, editor)`` of the first draft in ``per_draft``
    (:func:`lib.revision.metrics.revision_distance`) with at least one edit; None when none has."""
    edited = per_draft.loc[per_draft["revision_distance"] > 0, KEY_COLUMNS]
    return None if edited.empty else tuple(edited.iloc[0])
