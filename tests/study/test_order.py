"""Counterbalanced order (issue 33): over an annotator's pages every system is in every position equally
often, as a Latin square allows; the study stores the order and the export says it."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.study.order import balanced_orders

SYSTEMS = "abcdef"


def _positions(pages, orders) -> Counter:
    return Counter((page[i], pos) for page, order in zip(pages, orders, strict=True) for pos, i in enumerate(order))


@settings(max_examples=60, deadline=None)
@given(k=st.integers(2, 5), n=st.integers(1, 30), seed=st.integers(0, 2**16))
def test_pages_of_the_same_systems_are_latin_squares(k, n, seed):
    """Each system in each position floor(n / k) or ceil(n / k) times; every k pages a Latin square."""
    pages = [list(SYSTEMS[:k])] * n
    orders = balanced_orders(pages, np.random.default_rng(seed))
    assert all(sorted(o) == list(range(k)) for o in orders)
    counts = _positions(pages, orders)
    for s in SYSTEMS[:k]:
        assert {counts[(s, p)] for p in range(k)} <= {n // k, -(-n // k)}
    for block in range(n // k):
        square = orders[block * k : (block + 1) * k]
        assert all(len({row[p] for row in square}) == k for p in range(k))


@settings(max_examples=80, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(st.sampled_from(SYSTEMS), st.sampled_from(SYSTEMS)).filter(lambda p: p[0] != p[1]), max_size=40
    ),
    seed=st.integers(0, 2**16),
)
def test_pairs_show_each_system_first_on_half_its_pages(pairs, seed):
    """Pairwise pages of varying pairs: each system shown first on half of its pages, within one."""
    orders = balanced_orders([list(p) for p in pairs], np.random.default_rng(seed))
    first, seen = Counter(), Counter()
    for (a, b), order in zip(pairs, orders, strict=True):
        assert sorted(order) == [0, 1]
        first[(a, b)[order[0]]] += 1
        seen.update((a, b))
    for s, n in seen.items():
        assert abs(2 * first[s] - n) <= 1, (s, first[s], n)


def test_pages_added_later_balance_what_was_shown():
    """A running study's new pages (the adaptive step) even out the positions already shown."""
    seen = Counter({("a", 0): 3, ("b", 1): 3, ("c", 2): 3})
    orders = balanced_orders([list("abc")] * 2, np.random.default_rng(0), seen)
    counts = _positions([list("abc")] * 2, orders) + seen
    assert all(counts[(s, 0)] <= 1 for s in "bc") and counts[("a", 0)] == 3
