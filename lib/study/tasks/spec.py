"""What every study task type is: :class:`TaskSpec` (what a page asks, how an answer is checked, what the
export holds and how agreement is measured), the Likert :class:`Scale`, and the conventions all types share.

The types themselves are modules beside this one, registered in :data:`lib.study.tasks.TASKS`:

- ``bestworst`` (best-worst scaling over the k systems of a page, as in seed 001's "Counterfactual AI
  Writing Study"): per criterion the MOST and the LEAST system, MOST != LEAST;
- ``pairwise``: per criterion the better of two systems, or a tie;
- ``likert``: per criterion a rating of every system shown, on a scale of ``points`` points
  (1 = the low end's label, ``points`` = the high end's; :class:`Scale`). A page shows all the
  systems of a prompt, each on its own scale: the prompt is read once, and the order shown (stored)
  lets a position effect on ratings be checked.

Choices are ``{criterion: {...}}``: ``{"most": system, "least": system}`` (best-worst),
``{"winner": system}`` or ``{"tie": true}`` (pairwise: a tie is encoded apart from system names, so a
system may be called "tie"; schema revision 0003 rewrote the earlier ``{"winner": "tie"}``) or
``{system: rating}`` (Likert). Gold answers use the same shape (a Likert gold answer may rate only some
of the systems). The questions name a criterion by its label ("MOST CONSISTENT", :func:`question`; the
label defaults to the criterion's name). The form answers with the labels shown (A, B, ...) and, for a pairwise tie,
``{"winner": "tie"}``: labels are letters, so the form's tie option never meets a system name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from lib.study.errors import AnswerError, StudyError

if TYPE_CHECKING:
    import numpy as np

    from lib.study.agreement import Agreement

TIE = "tie"
"""The form's tie option, a gold cell's tie, and the key of a stored pairwise tie (``{"tie": true}``)."""
GOLD_PICKS = {"most": 1, "least": -1, TIE: 0, "": 0}
"""A best-worst / pairwise gold cell's value and its score (pairwise: the higher score wins; equal
scores tie)."""
MIN_POINTS, MAX_POINTS = 2, 10
"""The points a Likert scale may have."""
QUESTIONS = {"most": "MOST {}", "least": "LEAST {}", "winner": "MORE {}"}
"""How the form asks for a pick, given a criterion's label (seed 001's "MOST CONSISTENT / LEAST FLUENT")."""


def question(key: str, label: str) -> str:
    """The form's question for one key of a pick (``most``, ``least``, ``winner``) about a criterion's label,
    e.g. ``question("most", "consistent") == "MOST CONSISTENT"``; for a rated task's key (a passage's label
    A, B, ...) ``"A: FLUENT"``."""
    return QUESTIONS[key].format(label.upper()) if key in QUESTIONS else f"{key}: {label.upper()}"


@dataclass(frozen=True)
class Scale:
    """A Likert scale: ratings 1 to ``points``, the two ends labelled.

    Raises
    ------
    StudyError
        ``points`` outside [:data:`MIN_POINTS`, :data:`MAX_POINTS`], or a label empty or longer than
        100 characters.
    """

    points: int = 5
    low: str = "very poor"
    high: str = "excellent"

    def __post_init__(self) -> None:
        """Check the points and the labels."""
        if isinstance(self.points, bool) or not isinstance(self.points, int):
            raise StudyError("the scale's number of points must be a whole number")
        if not MIN_POINTS <= self.points <= MAX_POINTS:
            raise StudyError(f"a Likert scale has {MIN_POINTS} to {MAX_POINTS} points, not {self.points}")
        for end in (self.low, self.high):
            if not end.strip() or len(end) > 100:
                raise StudyError("label both ends of the scale, in at most 100 characters each")

    def to_json(self) -> dict[str, object]:
        """What the study table stores."""
        return asdict(self)

    @classmethod
    def from_json(cls, stored: Mapping[str, Any] | None) -> Scale | None:
        """The scale a study stored (None: the task has no scale)."""
        return None if stored is None else cls(**stored)

    def rating(self, value: object, what: str) -> int:
        """``value`` as a rating of this scale, or AnswerError saying why not."""
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= self.points:
            raise AnswerError(f"{what}: a rating is a whole number from 1 to {self.points}, not {value!r}")
        return value


@dataclass(frozen=True)
class TaskSpec:
    """One task type.

    Attributes
    ----------
    name : str
        ``--task`` and the Studies page's choice.
    help : str
        What an annotator does on a page.
    format : str
        The :mod:`lib.judgments.formats` format of the study's export (what the Data page reads it as).
    min_systems, max_systems : int
        How many systems a page shows (``max_systems`` 0: all the prompt's systems).
    keys : tuple of str
        The keys of one criterion's pick (empty for a rated task: its keys are the systems shown).
    tie : bool
        Whether the pick offers a tie (the form's :data:`TIE` option, stored as ``{"tie": true}``).
    rated : bool
        Whether each system shown gets a rating on the study's :class:`Scale` (else the page picks
        among them).
    check : callable
        ``check(choice, systems, criterion, scale)``: the choice normalised, or AnswerError.
    gold : callable
        ``gold(cells, systems, scale)``: the gold answer of one criterion of an item from its cells
        (``{system: text}``, lower case), None when all are blank, or AnswerError.
    gold_help : str
        The gold cells allowed (for messages).
    asked : callable
        ``asked(systems, rng, scale)``: the answer an instructed attention check asks for on one criterion
        (:func:`lib.study.checks.make_checks`), drawn with the numpy Generator ``rng``.
    columns : tuple of str
        The export's columns (:mod:`lib.study.export`; the Data page guesses every role from these names).
    rows : callable
        ``rows(base, choice, responses, order)``: the export's rows of one criterion of one answered page,
        ``base`` (annotator, page, prompt_id, prompt_text, criterion, seconds) completed from the choice, the
        texts ``{system: response}`` and the systems in the order shown.
    roles : dict
        The :mod:`lib.judgments.formats` roles of the export's columns (the Data page guesses the same).
    agreement : Agreement
        How agreement so far is measured (:mod:`lib.study.agreement`).
    """

    name: str
    help: str
    format: str
    min_systems: int
    max_systems: int
    keys: tuple[str, ...]
    tie: bool
    rated: bool
    check: Callable[[Mapping[str, object], Sequence[str], str, Scale | None], dict[str, object]]
    gold: Callable[[Mapping[str, str], Sequence[str], Scale | None], dict[str, object] | None]
    gold_help: str
    asked: Callable[[Sequence[str], np.random.Generator, Scale | None], dict[str, object]]
    columns: tuple[str, ...]
    rows: Callable[[dict, dict, dict, list[str]], list[dict]]
    roles: dict[str, str] = field(hash=False)
    agreement: Agreement

    def relabel(self, choice: Mapping[str, object], systems: Mapping[str, str], criterion: str) -> dict[str, object]:
        """One criterion's choice with the form's labels (A, B, ...) replaced by ``systems[label]``:
        the values of a pick (an unknown label becomes "?", refused by ``check``; the form's tie option
        becomes ``{"tie": True}``), the keys of a rating.

        Raises
        ------
        AnswerError
            A rating of a label not shown.
        """
        if self.rated:
            if set(choice) - set(systems):
                raise AnswerError(f"{criterion}: rate only the passages shown")
            return {systems[label]: v for label, v in choice.items()}
        out: dict[str, object] = {}
        for key, value in choice.items():
            if self.tie and value == TIE:
                out[TIE] = True
            else:
                out[key] = systems.get(value, "?") if isinstance(value, str) else value
        return out

    def judgments(self, n_systems: int) -> int:
        """Judgments one criterion of a page holds: a rating per system shown, else one pick."""
        return n_systems if self.rated else 1


def export_columns(*own: str) -> tuple[str, ...]:
    """A task's export columns: the ones every row has (who, which page, prompt and criterion; the page's
    seconds last, :mod:`lib.study.export`) around the task's ``own``."""
    return ("annotator", "page", "prompt_id", "prompt_text", "criterion", *own, "seconds")


def pick(choice: Mapping[str, object], key: str, allowed: Sequence[str], criterion: str) -> str:
    """The system a choice names for ``key`` (MOST, LEAST, the winner), or AnswerError: none, or one not shown."""
    value = choice.get(key)
    if not isinstance(value, str) or value == "":
        raise AnswerError(f"{criterion}: choose the {key.upper()} passage")
    if value not in allowed:
        raise AnswerError(f"{criterion}: {key.upper()} must be one of the passages shown")
    return value


def gold_picks(cells: Mapping[str, str], systems: Sequence[str]) -> bool:
    """Whether a pick task's gold cells of one criterion give an answer (False: all blank), or AnswerError for a
    cell outside :data:`GOLD_PICKS`."""
    if not any(cells[s] for s in systems):
        return False
    if any(cells[s] not in GOLD_PICKS for s in systems):
        raise AnswerError("unknown gold value")
    return True
