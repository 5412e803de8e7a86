"""Revision edit items as Pydantic models (Ma et al. 2024, Appendix D) and the tidy edits table.

One edit turns ``original_snippet`` (verbatim and unique in the draft) into ``revised_snippet``;
the Revision Distance of a draft is the number of its edits.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RevisionEdit(BaseModel):
    """One revision edit, with the fields of Ma et al.'s JSON action items (Appendix D)."""

    model_config = ConfigDict(extra="forbid")

    action_name: str = Field(description="Short verb for the edit, e.g. simplify, reorder, rephrase, delete.")
    revision_description: str = Field(description="One sentence saying what the edit changes.")
    revision_level: str = Field(description="Granularity: word, phrase, sentence or paragraph.")
    revision_intention: str = Field(description="Why the edit is made (its category).")
    original_snippet: str = Field(description="Text copied verbatim from the draft; unique in the draft.")
    revised_snippet: str = Field(description="The text that replaces original_snippet (empty to delete).")


class RevisionEdits(BaseModel):
    """The answer of the LLM acting as the user: all edits for one draft."""

    model_config = ConfigDict(extra="forbid")

    edits: list[RevisionEdit]


EDIT_FIELDS: tuple[str, ...] = tuple(RevisionEdit.model_fields)
"""The six schema fields, in Ma et al.'s order."""

KEY_COLUMNS: tuple[str, ...] = ("text_id", "system", "editor")
"""A draft is (``text_id``, ``system``); ``editor`` says who proposed the edits (writer, model, diff)."""

EDIT_COLUMNS: tuple[str, ...] = (*KEY_COLUMNS, "edit_index", *EDIT_FIELDS)
"""Columns of the tidy edits table every edit source produces (one row per edit)."""

DIFF_EDITOR = "diff-based"
"""``editor`` label of edits made by aligning draft and reference (no LLM)."""

MAX_TEXT_CHARS = 100_000
"""Longest draft, reference or snippet accepted (characters, about 15,000 words): bounds what one
draft may cost (the word alignment grows with the product of both lengths, an LLM bills per token)."""
