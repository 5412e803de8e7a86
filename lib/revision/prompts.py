"""Versioned prompt templates for the LLM acting as the user (Ma et al. 2024, Sec. 3, Appendix D).

Reference-based: revise the AI-generated draft towards the human-written text. Reference-free:
revise it towards the LLM's own idea of an ideal text (never written out). A template's
``version`` is part of the cache key: change the text, bump the version.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lib.errors import SettingsError
from lib.revision.schema import RevisionEdits

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

CATEGORIES: tuple[str, ...] = (
    "Awkward Word Choice and Phrasing",
    "Cliche",
    "Lack of Specificity and Detail",
    "Poor Sentence Structure",
    "Purple Prose (Unnecessary ornamental and overly verbose)",
    "Tense Inconsistency",
    "Unnecessary/Redundant Exposition",
)
"""Edit categories offered as ``revision_intention``: the LAMP writers' taxonomy, so that LLM and
human edits can be compared category by category."""

_RULES = """Rules for every edit:
- original_snippet is copied character for character from the AI-generated text, is unique in it,
  and does not overlap the original_snippet of another edit.
- revised_snippet is the text that replaces it (an empty string deletes it).
- One edit per distinct change; propose no edit for text that needs none (an empty list is fine).
- revision_level is one of: word, phrase, sentence, paragraph.
- revision_intention is one of: {categories}.
Return a JSON object {{"edits": [...]}} with the fields action_name, revision_description,
revision_level, revision_intention, original_snippet, revised_snippet."""


@dataclass(frozen=True)
class PromptTemplate:
    """A named, versioned prompt; ``user`` has ``{draft}`` (and ``{reference}``) placeholders."""

    name: str
    version: str
    system: str
    user: str
    needs_reference: bool


REFERENCE_BASED = PromptTemplate(
    name="reference-based",
    version="rd-reference-based-v1",
    system=(
        "You are the user of an AI writing assistant. You revise the AI-generated text so that it "
        "matches the human-written text in content, structure and style, the way a careful human "
        "editor would, and report each revision as a structured edit.\n" + _RULES
    ),
    user="###Human-written Text: {reference}\n\n###AI-generated Text: {draft}",
    needs_reference=True,
)

REFERENCE_FREE = PromptTemplate(
    name="reference-free",
    version="rd-reference-free-v1",
    system=(
        "You are the user of an AI writing assistant. You revise the AI-generated text towards the "
        "ideal text you would have wanted for this purpose (do not write that text out), the way a "
        "careful human editor would, and report each revision as a structured edit.\n" + _RULES
    ),
    user="###AI-generated Text: {draft}",
    needs_reference=False,
)

PROMPTS: dict[str, PromptTemplate] = {p.name: p for p in (REFERENCE_BASED, REFERENCE_FREE)}


def prompt_template(name: str) -> PromptTemplate:
    """The template called ``name`` (a key of :data:`PROMPTS`).

    Raises
    ------
    SettingsError
        If there is no such template (the message lists the names).
    """
    try:
        return PROMPTS[name]
    except KeyError:
        raise SettingsError(f"unknown prompt '{name}'; the prompts are {', '.join(PROMPTS)}") from None


def build_messages(
    template: PromptTemplate, draft: str, reference: str | None = None, *, json_mode: bool = False
) -> list[ChatCompletionMessageParam]:
    """Chat messages for one draft.

    Parameters
    ----------
    json_mode : bool
        Append the JSON schema to the system prompt, for servers without structured output.

    Raises
    ------
    SettingsError
        If the template needs a reference and none is given.
    """
    if template.needs_reference and not reference:
        raise SettingsError(f"the {template.name} prompt needs a reference text")
    system = template.system.format(categories="; ".join(CATEGORIES))
    if json_mode:
        system += "\nAnswer with the JSON object only, valid against this JSON schema:\n" + json.dumps(
            RevisionEdits.model_json_schema()
        )
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": template.user.format(draft=draft, reference=reference or "")},
    ]
