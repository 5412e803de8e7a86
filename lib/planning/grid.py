"""The grid of candidate designs a plan compares, built from what the user types (``python -m lib plan``
and the Study planner page share it), and the pairs its power is read on, in words."""

from __future__ import annotations

from collections.abc import Sequence

from lib.errors import SettingsError
from lib.planning.design import ANALYSES, Assumptions, Design
from lib.typed import whole_numbers


def parse_counts(text: str, option: str) -> list[int]:
    """Whole numbers >= 1 typed as ``"25, 50, 100"``, unique, in the given order.

    Parameters
    ----------
    text : str
        Comma-separated numbers (prompts per comparison, annotators per item, ...).
    option : str
        The option or field they were typed in, for the message.

    Returns
    -------
    list of int
        The numbers, duplicates dropped, in the order typed.

    Raises
    ------
    SettingsError
        Text that is not whole numbers, or a number below 1 (``option`` names the field).
    """
    values = whole_numbers(text, option)
    if not values or min(values) < 1:
        raise SettingsError(f"{option} must list whole numbers of at least 1 (got '{text}')")
    return list(dict.fromkeys(values))


def designs(
    prompts: Sequence[int], annotators: Sequence[int], strategies: Sequence[str], analyses: Sequence[str]
) -> list[Design]:
    """Every :class:`lib.planning.design.Design` of the grid, prompts varying slowest.

    Parameters
    ----------
    prompts, annotators : sequences of int
        Prompts per comparison and annotators per (comparison, prompt).
    strategies, analyses : sequences of str
        Names in :data:`lib.planning.design.PLANNED_STRATEGIES` and :data:`lib.planning.design.ANALYSES`.

    Returns
    -------
    list of Design
        ``len(prompts) * len(annotators) * len(strategies) * len(analyses)`` designs.
    """
    return [Design(p, n, s, a) for p in prompts for n in annotators for s in strategies for a in analyses]


def default_analyses(assumptions: Assumptions) -> list[str]:
    """The registered calibrated analyses that apply to the assumptions' response model.

    Returns
    -------
    list of str
        Names in :data:`lib.planning.design.ANALYSES`, in registry order; the votes-only ones only
        when ``assumptions.response`` is ``"votes"``.
    """
    return [
        name for name, a in ANALYSES.items() if a.calibrated and (assumptions.response == "votes" or not a.votes_only)
    ]


def pairs_read(assumptions: Assumptions) -> str:
    """Which pairs power is read on, in words (the command's output and the page say it).

    Returns
    -------
    str
        Without a pilot, the stated pairs ``effect`` logits apart; with one, the pairs it must
        detect (named, or those whose pilot difference is at least ``effect``).
    """
    if assumptions.pilot is None:
        return (
            f"pairs {assumptions.effect:g} logits apart (systems S1..S{assumptions.n_systems} by true skill; "
            "they are alike, so power is their pooled share)"
        )
    names = [
        f"{b} vs {a}" for (a, b), t in zip(assumptions.pilot.pair_names(), assumptions.targets(), strict=True) if t
    ]
    rule = "named" if assumptions.pairs is not None else f"pilot difference at least {assumptions.effect:g} logits"
    return f"{len(names)} pair(s) ({rule}): {', '.join(names)}; power is the smallest of theirs"
