"""The grid of candidate designs a plan compares, built from what the user types (``python -m lib plan``
and the Study planner page share it, with their defaults: :data:`PLAN_DEFAULTS`), and the pairs its power
is read on, in words."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lib.errors import SettingsError
from lib.io.typed import whole_numbers
from lib.planning.design import ANALYSES, PLANNED_STRATEGIES, Assumptions, Design


@dataclass(frozen=True)
class PlanDefaults:
    """What a plan does when the user does not say: the one home of the command's and the page's defaults
    (issue 29: the page simulated 100 studies and 4 analyses, the command 200 and 6, so the same pilot gave
    different powers).

    Attributes
    ----------
    prompts, annotators : tuple of int
        The grid's prompts per comparison (those the bank holds: :meth:`prompts_for`) and annotators per item.
    replicates : int
        Simulated studies per design: a power of 0.8 is known to +-0.028, a false-detection rate of 5% to
        +-0.015 (the null twins of every replicate).
    target_power, seconds_per_judgment, cost_per_hour : float
    seed : int
    """

    prompts: tuple[int, ...] = (25, 50, 100, 200)
    annotators: tuple[int, ...] = (1, 3, 5)
    replicates: int = 200
    target_power: float = 0.8
    seconds_per_judgment: float = 30.0
    cost_per_hour: float = 15.0
    seed: int = 0

    def prompts_for(self, bank: int) -> list[int]:
        """The default prompts a bank of ``bank`` prompts can give (all of it when it holds fewer than the
        smallest)."""
        return [p for p in self.prompts if p <= bank] or [bank]

    @staticmethod
    def strategies() -> list[str]:
        """Every planned prompt strategy (:data:`lib.planning.design.PLANNED_STRATEGIES`)."""
        return list(PLANNED_STRATEGIES)


PLAN_DEFAULTS = PlanDefaults()
"""The defaults of ``python -m lib plan`` and of the Study planner page."""


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


def applicable_analyses(assumptions: Assumptions) -> list[str]:
    """The registered analyses that apply to the assumptions' response model: names in
    :data:`lib.planning.design.ANALYSES`, in registry order; the votes-only ones only when
    ``assumptions.response`` is ``"votes"``."""
    return [name for name, a in ANALYSES.items() if assumptions.response == "votes" or not a.votes_only]


def default_analyses(assumptions: Assumptions) -> list[str]:
    """The analyses a plan runs when the user names none (the command's and the page's): the applicable ones
    marked :attr:`lib.planning.design.Analysis.default`."""
    return [name for name in applicable_analyses(assumptions) if ANALYSES[name].default]


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
