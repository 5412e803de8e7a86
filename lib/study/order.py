"""Counterbalanced order: over an annotator's pages each system is shown in each position equally often, as a
Latin square allows.

A position effect (the first passage read is preferred, or the last) biases a system shown first more often
than the others; balancing positions within each annotator cancels it from their judgments, and the order
stored with each page lets the leaderboard estimate it (``position`` in the export, gamma in
:mod:`lib.ranking.model`).

- **Pages of k systems** (best-worst, Likert): the order of each page, in page order, is an assignment of its
  systems to positions of least cost, the cost of (system, position) being how often the annotator has seen
  that system there (:func:`scipy.optimize.linear_sum_assignment`, random tie-breaks). When every page shows
  the same k systems this deals Latin squares: in each run of k pages every system takes every position
  once (after m < k pages each system has k - m positions unused, a (k - m)-regular bipartite graph, which
  has a perfect matching by Hall's theorem: its cost 0 is the least), so over n pages a system is in each
  position floor(n / k) or ceil(n / k) times.
- **Pages of 2 systems** (pairwise) whose pairs differ from page to page: the pages are the edges of a
  multigraph on the systems; joining every system of odd degree to one extra vertex makes every degree even,
  and orienting each edge in the direction an Euler tour walks it (Hierholzer 1873) gives every vertex as
  many edges in as out. So each system is shown first on half its pages, within one (an odd number of pages).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

TIE_BREAK = 1e-3
"""Largest random cost added to break ties between equally used positions (below 1 / k for any page of
fewer than 1,000 systems: it never outweighs one use of a position)."""


def balanced_orders(
    pages: Sequence[Sequence[str]],
    rng: np.random.Generator,
    seen: Counter[tuple[str, int]] | None = None,
) -> list[list[int]]:
    """The shown order of each of an annotator's pages.

    Parameters
    ----------
    pages : sequence of sequences of str
        The systems of each page, in page order (the item's order).
    rng : numpy.random.Generator
        Breaks ties (which of equally balanced orders).
    seen : Counter, optional
        ``{(system, position): times}`` the annotator has been shown already (pages added to a running
        study); the new pages then balance the whole.

    Returns
    -------
    list of list of int
        Per page, the indices of its systems in the order shown (a permutation of ``range(len(page))``).
    """
    if seen is None and all(len(p) == 2 for p in pages) and len({frozenset(p) for p in pages}) > 1:
        return _euler_pairs(pages, rng)
    counts: Counter[tuple[str, int]] = Counter(seen or {})
    orders = []
    for systems in pages:
        k = len(systems)
        cost = np.array([[counts[(s, pos)] for pos in range(k)] for s in systems], dtype=float)
        rows, cols = linear_sum_assignment(cost + rng.uniform(0, TIE_BREAK, size=(k, k)))
        order = [0] * k
        for system, position in zip(rows, cols, strict=True):
            order[position] = int(system)
            counts[(systems[system], int(position))] += 1
        orders.append(order)
    return orders


def _euler_pairs(pages: Sequence[Sequence[str]], rng: np.random.Generator) -> list[list[int]]:
    """Orders of two-system pages: each system first on half of its pages, within one (module docstring)."""
    names = sorted({s for p in pages for s in p})
    index = {s: i for i, s in enumerate(names)}
    edges = [(index[a], index[b]) for a, b in pages]
    degree = Counter(v for e in edges for v in e)
    extra = len(names)  # joined to every system of odd degree: every degree becomes even
    edges += [(v, extra) for v in range(len(names)) if degree[v] % 2]
    adjacent: list[list[tuple[int, int]]] = [[] for _ in range(len(names) + 1)]
    for e, (u, v) in enumerate(edges):
        adjacent[u].append((v, e))
        adjacent[v].append((u, e))
    for neighbours in adjacent:
        rng.shuffle(neighbours)  # a list of pairs, shuffled in place
    first = [-1] * len(edges)  # the vertex each edge is walked from
    nxt = [0] * len(adjacent)
    for start in range(len(adjacent)):
        stack = [start]
        while stack:  # Hierholzer: every trail walked closes where it began, so in = out everywhere
            u = stack[-1]
            while nxt[u] < len(adjacent[u]) and first[adjacent[u][nxt[u]][1]] >= 0:
                nxt[u] += 1
            if nxt[u] == len(adjacent[u]):
                stack.pop()
                continue
            v, e = adjacent[u][nxt[u]]
            first[e] = u
            stack.append(v)
    return [[0, 1] if first[e] == index[a] else [1, 0] for e, (a, _) in enumerate(pages)]
