"""The task types a study can ask for: a registry of what a page asks and how an answer is checked.

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
from dataclasses import asdict, dataclass
from typing import Any

from lib.study.errors import AnswerError, StudyError

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
        The :mod:`lib.formats` format of the study's export (what the Data page reads it as).
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


def _pick(choice: Mapping[str, object], key: str, allowed: Sequence[str], criterion: str) -> str:
    value = choice.get(key)
    if not isinstance(value, str) or value == "":
        raise AnswerError(f"{criterion}: choose the {key.upper()} passage")
    if value not in allowed:
        raise AnswerError(f"{criterion}: {key.upper()} must be one of the passages shown")
    return value


def _check_bestworst(
    choice: Mapping[str, object], systems: Sequence[str], criterion: str, scale: Scale | None
) -> dict[str, object]:
    most, least = _pick(choice, "most", systems, criterion), _pick(choice, "least", systems, criterion)
    if most == least:
        raise AnswerError(f"{criterion}: the MOST and the LEAST passage must differ")
    return {"most": most, "least": least}


def _check_pairwise(
    choice: Mapping[str, object], systems: Sequence[str], criterion: str, scale: Scale | None
) -> dict[str, object]:
    if choice.get(TIE) is True:
        if len(choice) > 1:
            raise AnswerError(f"{criterion}: choose the better passage or a tie, not both")
        return {TIE: True}
    return {"winner": _pick(choice, "winner", systems, criterion)}


def _check_likert(
    choice: Mapping[str, object], systems: Sequence[str], criterion: str, scale: Scale | None
) -> dict[str, object]:
    if scale is None:
        raise StudyError("a Likert study needs its scale")
    if set(choice) - set(systems):
        raise AnswerError(f"{criterion}: rate only the passages shown")
    missing = [s for s in systems if choice.get(s) is None]
    if missing:
        raise AnswerError(f"{criterion}: rate every passage ({len(missing)} not rated)")
    return {s: scale.rating(choice[s], criterion) for s in systems}


def _gold_bestworst(cells: Mapping[str, str], systems: Sequence[str], scale: Scale | None) -> dict[str, object] | None:
    if not any(cells[s] for s in systems):
        return None
    if any(cells[s] not in GOLD_PICKS for s in systems):
        raise AnswerError("unknown gold value")
    most = [s for s in systems if cells[s] == "most"]
    least = [s for s in systems if cells[s] == "least"]
    if len(most) != 1 or len(least) != 1:
        raise AnswerError(f"the gold answer needs one MOST and one LEAST, found {len(most)} and {len(least)}")
    return {"most": most[0], "least": least[0]}


def _gold_pairwise(cells: Mapping[str, str], systems: Sequence[str], scale: Scale | None) -> dict[str, object] | None:
    if not any(cells[s] for s in systems):
        return None
    if any(cells[s] not in GOLD_PICKS for s in systems):
        raise AnswerError("unknown gold value")
    a, b = (GOLD_PICKS[cells[s]] for s in systems)
    return {"winner": systems[0] if a > b else systems[1]} if a != b else {TIE: True}


def _gold_likert(cells: Mapping[str, str], systems: Sequence[str], scale: Scale | None) -> dict[str, object] | None:
    scale = scale or Scale()
    gold: dict[str, object] = {}
    for s in systems:
        if cells[s]:
            if not (cells[s].isascii() and cells[s].isdigit()):  # "²".isdigit() and "٣".isdigit() hold too
                raise AnswerError(
                    f"gold rating: a rating is a whole number from 1 to {scale.points} in the digits 0-9, "
                    f"not {cells[s]!r}"
                )
            gold[s] = scale.rating(int(cells[s]), "gold rating")
    return gold or None


TASKS: dict[str, TaskSpec] = {
    t.name: t
    for t in (
        TaskSpec(
            "bestworst",
            "MOST and LEAST of the passages shown, per criterion",
            format="bestworst",
            min_systems=3,
            max_systems=0,
            keys=("most", "least"),
            tie=False,
            rated=False,
            check=_check_bestworst,
            gold=_gold_bestworst,
            gold_help="most, least or blank (one MOST and one LEAST per prompt)",
        ),
        TaskSpec(
            "pairwise",
            "the better of two passages (or a tie), per criterion",
            format="pairwise",
            min_systems=2,
            max_systems=2,
            keys=("winner",),
            tie=True,
            rated=False,
            check=_check_pairwise,
            gold=_gold_pairwise,
            gold_help="most on the better system, tie on both, or blank",
        ),
        TaskSpec(
            "likert",
            "a rating of each passage shown (1 to the scale's points), per criterion",
            format="ratings",
            min_systems=1,
            max_systems=0,
            keys=(),
            tie=False,
            rated=True,
            check=_check_likert,
            gold=_gold_likert,
            gold_help="a rating from 1 to the scale's points on the systems whose rating is known, or blank",
        ),
    )
}
"""The registry of task types, in the order they are offered."""


def task_spec(task: str) -> TaskSpec:
    """``TASKS[task]``, or StudyError naming the task types."""
    if task not in TASKS:
        raise StudyError(f"unknown task '{task}'; choose one of {', '.join(TASKS)}")
    return TASKS[task]


def check_choices(
    task: str,
    choices: Mapping[str, object],
    systems: Sequence[str],
    criteria: Sequence[str],
    scale: Scale | None = None,
) -> dict[str, dict[str, object]]:
    """An answer's choices checked against its page.

    Parameters
    ----------
    task : str
        A key of :data:`TASKS`.
    choices : mapping
        ``{criterion: {key: system}}`` (a pick; a pairwise tie ``{"tie": True}``) or ``{criterion: {system:
        rating}}`` (a rated task).
    systems : sequence of str
        The systems shown on the page.
    criteria : sequence of str
        The study's criteria: each needs a choice, and no other may be given.
    scale : Scale, optional
        The study's scale (a rated task).

    Returns
    -------
    dict
        The choices normalised (only the task's keys, criteria in the study's order).

    Raises
    ------
    AnswerError
        A criterion missing or unknown, a choice missing or not among the systems shown, MOST = LEAST,
        a passage not rated, a rating that is not a whole number on the scale: every criterion that fails
        is named, joined by "; ".
    """
    spec = task_spec(task)
    if not isinstance(choices, Mapping):
        raise AnswerError("the answer must give a choice per criterion")
    unknown = [str(c) for c in choices if c not in criteria]
    if unknown:
        raise AnswerError(f"unknown criterion {', '.join(unknown)}; the study asks for {', '.join(criteria)}")
    out, problems = {}, []
    for criterion in criteria:  # every criterion that fails is named, not only the first
        choice = choices.get(criterion)
        try:
            if not isinstance(choice, Mapping):
                raise AnswerError(f"{criterion}: no choice given")
            out[criterion] = spec.check(choice, systems, criterion, scale)
        except AnswerError as err:
            problems.append(str(err))
    if problems:
        raise AnswerError("; ".join(problems))
    return out


def gold_correct(gold: Mapping[str, Mapping[str, object]], choices: Mapping[str, Mapping[str, object]]) -> list[bool]:
    """Per criterion with a gold answer, whether the choices match it on every key the gold answer
    gives (MOST and LEAST; the winner; each gold rating exactly)."""
    return [all(choices.get(c, {}).get(k) == v for k, v in g.items()) for c, g in gold.items()]
