"""Assignment: every regular item to per_item distinct annotators, balanced loads, gold and attention checks
at the set rates."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from lib.study.assign import assign, gold_count
from lib.study.errors import StudyError

ABC = ("a", "b", "c")


@pytest.mark.parametrize(
    ("items", "annotators", "per_item"),
    [(10, 3, 3), (60, 16, 3), (7, 5, 2), (5, 7, 3), (13, 4, 1), (3, 3, 3), (9, 6, 6)],
)
def test_each_item_to_distinct_annotators_balanced(items, annotators, per_item):
    plan = assign(list(range(items)), [], [ABC] * items, annotators=annotators, per_item=per_item, gold_rate=0, seed=1)
    copies = Counter(itertools.chain.from_iterable(plan.pages))
    assert copies == dict.fromkeys(range(items), per_item)
    for pages in plan.pages:
        assert len(pages) == len(set(pages)), "an annotator got an item twice"
    loads = [len(p) for p in plan.pages]
    assert max(loads) - min(loads) <= 1
    assert sum(loads) == items * per_item


def test_shown_orders_are_permutations_and_vary():
    plan = assign(list(range(40)), [], [ABC] * 40, annotators=4, per_item=2, gold_rate=0, seed=3)
    orders = [tuple(o) for person in plan.orders for o in person]
    assert all(sorted(o) == [0, 1, 2] for o in orders)
    assert len(set(orders)) == 6  # all 3! orders occur over 80 pages


def test_gold_items_at_the_rate_each_once_per_annotator():
    regular, gold = list(range(20)), list(range(20, 26))
    plan = assign(regular, gold, [ABC] * 26, annotators=4, per_item=2, gold_rate=0.2, seed=0)
    for pages in plan.pages:
        n_gold = sum(p in gold for p in pages)
        assert n_gold == gold_count(10, 0.2, 6) == 2  # 2 of 12 pages: 17%, the nearest to 20%
        assert len(pages) == len(set(pages))
    assert gold_count(10, 0.5, 3) == 3  # capped by the gold items there are


def test_the_same_seed_gives_the_same_plan_and_another_differs():
    args = (list(range(12)), [], [ABC] * 12)
    kw = dict(annotators=3, per_item=2, gold_rate=0)
    assert assign(*args, **kw, seed=5) == assign(*args, **kw, seed=5)
    assert assign(*args, **kw, seed=5) != assign(*args, **kw, seed=6)


def test_attention_checks_at_their_rate_beside_gold_items():
    """20 regular items x 2 / 4 annotators = 10 regular pages each; with 20% gold and 10% checks an annotator
    has round(0.2 x 10 / 0.7) = 3 gold and round(0.1 x 10 / 0.7) = 1 check: 3 / 14 and 1 / 14 of the pages."""
    regular, gold, checks = list(range(20)), list(range(20, 26)), list(range(26, 29))
    plan = assign(
        regular, gold, [ABC] * 29, annotators=4, per_item=2, gold_rate=0.2, seed=0, checks=checks, check_rate=0.1
    )
    for pages in plan.pages:
        assert sum(p in gold for p in pages) == gold_count(10, 0.2, 6, 0.1) == 3
        assert sum(p in checks for p in pages) == gold_count(10, 0.1, 3, 0.2) == 1
        assert len(pages) == len(set(pages)) == 14


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (dict(annotators=2, per_item=3, gold_rate=0), "3 distinct annotators"),
        (dict(annotators=3, per_item=1, gold_rate=1.0), "below 1"),
        (dict(annotators=3, per_item=1, gold_rate=0.1), "no item has a gold answer"),
        (dict(annotators=3, per_item=1, gold_rate=0.5, check_rate=0.5), "add up to 1"),
    ],
)
def test_impossible_assignments_are_refused(kw, message):
    with pytest.raises(StudyError, match=message):
        assign([0, 1], [], [ABC, ABC], seed=0, **kw)
