"""The annotator never learns which system wrote a passage: the texts every page shows are checked for the
study's system names before the study is stored.

The title, the instructions, the example and the questions (criteria and their labels) are what every
annotator reads on every page; a system's name in any of them ("Counterfactual AI Writing Study (seed
001, ROME)" while ROME is one of the systems compared) tells annotators whose passages they judge. A name
is found case-insensitively as a whole word: not inside a longer word or number ("ROME" is found in
"rome," and "(ROME)", not in "Romeo"), so a researcher's text about "Rome" the city is found too and the
researcher confirms it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from lib.study.errors import StudyError


@dataclass(frozen=True)
class NameShown:
    """A system's name in one of the texts annotators read: ``where`` (``title``, ``instructions``,
    ``example``, ``questions``), the ``system`` and the ``excerpt`` around it."""

    where: str
    system: str
    excerpt: str


class SystemNamesShown(StudyError):
    """The study's texts name its systems (:func:`names_shown`); ``found`` lists where."""

    def __init__(self, found: list[NameShown]) -> None:
        self.found = found
        where = "; ".join(f"the system '{f.system}' appears in the {f.where} (…{f.excerpt}…)" for f in found[:10])
        more = f"; and {len(found) - 10} more" if len(found) > 10 else ""
        super().__init__(
            f"{where}{more}: annotators must not learn which system wrote a passage. Remove the name, or confirm "
            "that annotators may read it (--allow-system-names; the Studies page's checkbox)"
        )


EXCERPT_CHARS = 30
"""Characters on each side of a name in :attr:`NameShown.excerpt`."""


def _pattern(system: str) -> re.Pattern[str]:
    """``system`` as a whole word, any case, any run of spaces where the name has spaces."""
    words = r"\s+".join(re.escape(w) for w in system.split())
    return re.compile(rf"(?<![^\W_]){words}(?![^\W_])", re.IGNORECASE)


def study_texts(
    name: str, instructions: str, example: str, criteria: Iterable[str], labels: Mapping[str, str] | None
) -> dict[str, str]:
    """The texts every annotator of a study reads, by where they read them (for :func:`names_shown`): the
    title, the instructions, the example and the questions (the criteria and their labels)."""
    questions = " / ".join([*criteria, *(labels or {}).values()])
    return {"title": name, "instructions": instructions, "example": example, "questions": questions}


def names_shown(texts: Mapping[str, str], systems: Iterable[str]) -> list[NameShown]:
    """Where the texts annotators read name a system.

    Parameters
    ----------
    texts : mapping
        ``{where: text}``, e.g. ``{"title": ..., "instructions": ..., "example": ..., "questions": ...}``.
    systems : iterable of str
        The study's systems.

    Returns
    -------
    list of NameShown
        One per (text, system) found, in the order of ``texts``, then of the systems' names, longest first.
    """
    found = []
    names = sorted({s for s in systems if s.strip()}, key=lambda s: (-len(s), s))
    for where, text in texts.items():
        for system in names:
            match = _pattern(system).search(text)
            if match is not None:
                excerpt = text[max(0, match.start() - EXCERPT_CHARS) : match.end() + EXCERPT_CHARS]
                found.append(NameShown(where, system, " ".join(excerpt.split())))
    return found
