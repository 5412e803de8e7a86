"""Assignment: every regular item to per_item distinct annotators, balanced loads, gold at the set rate."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from lib.study.assign import assign, gold_count
from lib.study.errors import StudyError


@pytest.mark.parametrize(
    ("items", "annotators", "per_item"),
    [(10, 3, 3), (60, 16, 3), (7, 5, 2), (5, 7, 3), (13, 4, 1), (3, 3, 3), (9, 6, 6)],
)
def test_each_item_to_distinct_annotators_balanced(items, annotators, per_item):
    plan = assign(list(range(items)), [], [3] * items, annotators=annotators, per_item=per_item, gold_rate=0, seed=1)
    copies = Counter(itertools.chain.from_iterable(plan.pages))
    assert copies == dict.fromkeys(range(items), per_item)
    for pages in plan.pages:
        assert len(pages) == len(set(pages)), "an annotator got an item twice"
    loads = [len(p) for p in plan.pages]
    assert max(loads) - min(loads) <= 1
    assert sum(loads) == items * per_item


def test_shown_orders_are_permutations_and_vary():
    plan = assign(list(range(40)), [], [3] * 40, annotators=4, per_item=2, gold_rate=0, seed=3)
    orders = [tuple(o) for person in plan.orders for o in person]
    assert all(sorted(o) == [0, 1, 2] for o in orders)
    assert len(set(orders)) == 6  # all 3! orders occur over 80 pages


def test_gold_items_at_the_rate_each_once_per_annotator():
    regular, gold = list(range(20)), list(range(20, 26))
    plan = assign(regular, gold, [3] * 26, annotators=4, per_item=2, gold_rate=0.2, seed=0)
    for pages in plan.pages:
        n_gold = sum(p in gold for p in pages)
        assert n_gold == gold_count(10, 0.2, 6) == 2  # 2 of 12 pages: 17%, the nearest to 20%
        assert len(pages) == len(set(pages))
    assert gold_count(10, 0.5, 3) == 3  # capped by the gold items there are


def test_the_same_seed_gives_the_same_plan_and_another_differs():
    args = (list(range(12)), [], [3] * 12)
    kw = dict(annotators=3, per_item=2, gold_rate=0)
    assert assign(*args, **kw, seed=5) == assign(*args, **kw, seed=5)
    assert assign(*args, **kw, seed=5) != assign(*args, **kw, seed=6)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (dict(annotators=2, per_item=3, gold_rate=0), "3 distinct annotators"),
        (dict(annotators=3, per_item=1, gold_rate=1.0), "below 1"),
        (dict(annotators=3, per_item=1, gold_rate=0.1), "no item has a gold answer"),
    ],
)
def test_impossible_assignments_are_refused(kw, message):
    with pytest.raises(StudyError, match=message):
        assign([0, 1], [], [3, 3], seed=0, **kw)
