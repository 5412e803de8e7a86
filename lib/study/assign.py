"""Who judges what: each item to ``per_item`` distinct annotators, balanced, gold items mixed in.

The regular items' copies are dealt round-robin in item-major order: copy r of item i (after a
random permutation of items and annotators) goes to annotator ``(i * per_item + r) mod A``. The
``per_item`` copies of an item land on consecutive annotators, hence distinct ones when
``per_item <= A``, and the ``I * per_item`` copies are dealt in turn, so every annotator gets
``floor`` or ``ceil`` of ``I * per_item / A`` items. Each annotator then gets
``round(gold_rate * n / (1 - gold_rate - check_rate))`` distinct gold items besides their n regular ones
(at most every gold item), and as many instructed attention checks at ``check_rate``
(:mod:`lib.study.checks`), so that gold items are about ``gold_rate`` of their pages and checks about
``check_rate``, and their pages are put in a random order. The systems of each annotator's pages are shown in
counterbalanced orders (:func:`lib.study.order.balanced_orders`: every system in every position equally often,
as a Latin square allows).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lib.study.errors import StudyError
from lib.study.order import balanced_orders

MAX_PER_ITEM = 100
"""Most annotators an item may be given (the Studies page's bound)."""


@dataclass(frozen=True)
class Plan:
    """The assignment: ``pages[a]`` the item indices annotator a sees, in page order;
    ``orders[a][p]`` the positions of the item's systems as shown on page p (a permutation)."""

    pages: list[list[int]]
    orders: list[list[list[int]]]


def gold_count(n_regular: int, gold_rate: float, n_gold: int, other_rate: float = 0.0) -> int:
    """Extra pages (gold items, or attention checks) of an annotator with ``n_regular`` regular pages: about
    ``gold_rate`` of all their pages when ``other_rate`` of them are extra pages of the other kind, at most
    ``n_gold`` (each such item once)."""
    return min(n_gold, round(gold_rate * n_regular / (1 - gold_rate - other_rate))) if gold_rate > 0 else 0


def check_rates(gold_rate: float, check_rate: float) -> None:
    """Refuse a gold or attention-check rate outside [0, 1), or the two adding up to 1 or more (StudyError)."""
    for what, rate in (("gold", gold_rate), ("attention-check", check_rate)):
        if not 0 <= rate < 1:
            raise StudyError(f"the {what} rate must be at least 0 and below 1, not {rate}")
    if gold_rate + check_rate >= 1:
        raise StudyError(
            f"the gold rate and the attention-check rate add up to {gold_rate + check_rate:g}: keep it below 1"
        )


def most_regular_pages(n_regular: int, per_item: int, annotators: int) -> int:
    """The most regular pages one annotator gets (the ceiling of items x annotators per item / annotators)."""
    return math.ceil(n_regular * per_item / annotators)


def assign(
    regular: list[int],
    gold: list[int],
    systems: Sequence[Sequence[str]],
    *,
    annotators: int,
    per_item: int,
    gold_rate: float,
    seed: int,
    checks: Sequence[int] = (),
    check_rate: float = 0.0,
) -> Plan:
    """The pages of every annotator.

    Parameters
    ----------
    regular, gold : list of int
        Indices of the regular and the gold items.
    systems : sequence of sequences of str
        The systems of each item (by index), for the shown orders.
    annotators, per_item : int
        Number of annotators, and of distinct annotators per regular item.
    gold_rate : float
        Share of each annotator's pages that are gold items, in [0, 1).
    seed : int
        Seed of the random permutations.
    checks : sequence of int
        Indices of the instructed attention checks (:func:`lib.study.checks.make_checks`).
    check_rate : float
        Share of each annotator's pages that are attention checks; ``gold_rate + check_rate`` below 1.

    Returns
    -------
    Plan

    Raises
    ------
    StudyError
        ``per_item`` above the number of annotators, more annotators than regular pages (some links
        would have no page; the message gives the numbers that work), a rate outside [0, 1) or rates summing
        to 1 or more, gold items asked for but none given, or no regular item.
    """
    if not regular:
        raise StudyError("the study has no item to judge (every item is a gold item)")
    if not 1 <= per_item <= annotators:
        raise StudyError(
            f"each item needs {per_item} distinct annotators, but the study has {annotators}: "
            "ask for fewer per item or more annotators"
        )
    check_rates(gold_rate, check_rate)
    if gold_rate > 0 and not gold:
        raise StudyError("a gold rate was asked for but no item has a gold answer (gold_<criterion> columns)")
    _every_link_has_a_page(len(regular), per_item, annotators)
    rng = np.random.default_rng(seed)
    items = rng.permutation(regular)
    who = rng.permutation(annotators)
    pages: list[list[int]] = [[] for _ in range(annotators)]
    for i, item in enumerate(items):
        for r in range(per_item):
            pages[who[(i * per_item + r) % annotators]].append(int(item))
    for a in range(annotators):
        n = len(pages[a])
        extra = [
            int(x)
            for pool, rate, other in ((gold, gold_rate, check_rate), (checks, check_rate, gold_rate))
            for x in rng.choice(pool, size=gold_count(n, rate, len(pool), other), replace=False)
        ]
        mixed = pages[a] + extra
        pages[a] = [mixed[j] for j in rng.permutation(len(mixed))]
    orders = [balanced_orders([systems[item] for item in mine], rng) for mine in pages]
    return Plan(pages, orders)


def _every_link_has_a_page(n_items: int, per_item: int, annotators: int) -> None:
    """Refuse annotators that would get no regular page (their link would open on "every page is
    answered"), saying how many annotators, or annotators per item, would work."""
    pages = n_items * per_item
    if annotators <= pages:
        return
    empty = annotators - pages
    problem = (
        f"{n_items} item{'s' if n_items != 1 else ''} x {per_item} annotator{'s' if per_item != 1 else ''} per "
        f"item give {pages} page{'s' if pages != 1 else ''}: {annotators} annotators would leave {empty} "
        f"link{'s' if empty != 1 else ''} without a page; use at most {pages} annotators"
    )
    need = math.ceil(annotators / n_items)
    if need <= MAX_PER_ITEM:
        problem += f", or {need} annotators per item ({need * n_items} pages)"
    raise StudyError(problem)
