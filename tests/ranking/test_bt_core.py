"""The one Bradley–Terry core (issue 32 item 2): invariants of the encoding, the fit and the sandwich.

Relabelling the systems permutes the skills; swapping a and b with the winner flips nothing; duplicating
every vote leaves the skills and halves the variance (the sandwich's ridge grows with the votes, so the halving
is exact). Each holds with covariates too (the contextual model of style control).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.errors import DesignError
from lib.judges.ppi import rectified_loss
from lib.ranking.bradley_terry import BradleyTerry, Loss, PairDataset, pair_design

FLIP = {"a": "b", "b": "a", "tie": "tie"}


@st.composite
def arenas(draw):
    """Votes among 3-6 systems with a finite maximum-likelihood estimate: a ring in which each system beats and
    loses to its neighbour (strongly connected) plus random votes; optionally a covariate per vote, +1 and -1 on
    a win each way of the ring's pairs (so that no covariate separates the outcomes) and random elsewhere."""
    k = draw(st.integers(3, 6))
    names = [f"s{i}" for i in range(k)]
    ring = [(names[i], names[(i + 1) % k], w) for i in range(k) for w in ("a", "b", "a", "b")]
    vote = st.tuples(st.integers(0, k - 1), st.integers(1, k - 1), st.sampled_from(["a", "b", "tie"]))
    extra = draw(st.lists(vote, max_size=40))
    rows = ring + [(names[i], names[(i + j) % k], w) for i, j, w in extra]
    votes = pd.DataFrame(rows, columns=["system_a", "system_b", "winner"])
    if draw(st.booleans()):
        seed = draw(st.integers(0, 2**16))
        ring_z = np.tile([1.0, 1.0, -1.0, -1.0], k)
        votes["z"] = np.concatenate([ring_z, np.random.default_rng(seed).normal(size=len(extra))])
    return votes


def _fit(votes: pd.DataFrame) -> tuple[pd.Series, pd.Series, np.ndarray]:
    """Skills and sandwich variances by system name, and the coefficients."""
    features = votes[["z"]].to_numpy() if "z" in votes else None
    data = PairDataset.from_votes(votes, features=features)
    model = BradleyTerry()
    fit = model.fit(data)
    var = np.diag(model.sandwich(fit))
    return pd.Series(fit.skill, data.systems), pd.Series(var[: data.k], data.systems), fit.coef


@settings(max_examples=40, deadline=None)
@given(arenas(), st.randoms(use_true_random=False))
def test_relabelling_the_systems_permutes_the_skills(votes, rnd):
    skill, var, coef = _fit(votes)
    names = sorted(skill.index)
    renamed = dict(zip(names, rnd.sample([f"t{i}" for i in range(len(names))], len(names)), strict=True))
    relabelled = votes.assign(system_a=votes["system_a"].map(renamed), system_b=votes["system_b"].map(renamed))
    skill2, var2, coef2 = _fit(relabelled)
    np.testing.assert_allclose(skill2[skill.index.map(renamed)], skill, atol=1e-8)
    np.testing.assert_allclose(var2[var.index.map(renamed)], var, rtol=1e-7)
    np.testing.assert_allclose(coef2, coef, atol=1e-8)


@settings(max_examples=40, deadline=None)
@given(arenas(), st.data())
def test_swapping_a_and_b_with_the_winner_flips_nothing(votes, data):
    swap = np.array(data.draw(st.lists(st.booleans(), min_size=len(votes), max_size=len(votes))))
    swapped = votes.copy()
    swapped.loc[swap, ["system_a", "system_b"]] = votes.loc[swap, ["system_b", "system_a"]].to_numpy()
    swapped.loc[swap, "winner"] = votes.loc[swap, "winner"].map(FLIP)
    if "z" in votes:  # a covariate is a's minus b's: it changes sign with the sides
        swapped.loc[swap, "z"] = -votes.loc[swap, "z"]
    skill, var, coef = _fit(votes)
    skill2, var2, coef2 = _fit(swapped)
    np.testing.assert_allclose(skill2[skill.index], skill, atol=1e-8)
    np.testing.assert_allclose(var2[var.index], var, rtol=1e-7)
    np.testing.assert_allclose(coef2, coef, atol=1e-8)


@settings(max_examples=40, deadline=None)
@given(arenas())
def test_duplicating_every_vote_leaves_the_skills_and_halves_the_variance(votes):
    skill, var, coef = _fit(votes)
    skill2, var2, coef2 = _fit(pd.concat([votes, votes], ignore_index=True))
    np.testing.assert_allclose(skill2[skill.index], skill, atol=1e-8)
    np.testing.assert_allclose(var2[var.index], var / 2, rtol=1e-7)
    np.testing.assert_allclose(coef2, coef, atol=1e-8)


@settings(max_examples=40, deadline=None)
@given(arenas(), st.integers(0, 2**16))
def test_identical_votes_counted_in_one_row_give_the_same_skills_and_sandwich(votes, seed):
    """:meth:`PairDataset.collapsed` (what the baseline fits: a row per pair, outcome and weight, with its count) gives
    the skills and the sandwich covariance of the votes one row each, with weights of a few values too."""
    votes = votes.drop(columns="z", errors="ignore")
    votes["weight"] = np.random.default_rng(seed).choice([0.5, 1.0, 2.0], len(votes))
    data = PairDataset.from_votes(votes)
    rows = data.collapsed()
    assert rows.n <= data.n and rows.count.sum() == data.n
    model = BradleyTerry()
    fits = [model.fit(d) for d in (data, rows)]
    np.testing.assert_allclose(fits[1].skill, fits[0].skill, rtol=0, atol=1e-9)
    np.testing.assert_allclose(model.sandwich(fits[1]), model.sandwich(fits[0]), rtol=1e-9, atol=1e-12)


def test_the_fit_is_the_stationary_point_of_the_loss_with_the_gradient_and_hessian_of_finite_differences():
    rng = np.random.default_rng(0)
    first, second = rng.integers(0, 4, 300), rng.integers(0, 4, 300)
    keep = first != second
    x = pair_design(first[keep], second[keep], 4).toarray()
    x = np.column_stack([x, rng.normal(size=keep.sum())])
    loss = Loss(x, rng.random(keep.sum()), rng.random(keep.sum()) + 0.5, ridge=0.3)
    theta, eps = rng.normal(size=5) * 0.3, 1e-6
    numeric = [(loss.value(theta + eps * e) - loss.value(theta - eps * e)) / (2 * eps) for e in np.eye(5)]
    np.testing.assert_allclose(loss.gradient(theta), numeric, rtol=1e-6, atol=1e-6)
    curvature = [(loss.gradient(theta + eps * e) - loss.gradient(theta - eps * e)) / (2 * eps) for e in np.eye(5)]
    np.testing.assert_allclose(loss.hessian(theta), np.array(curvature), rtol=1e-5, atol=1e-5)
    mode = loss.minimise()
    assert np.abs(loss.gradient(mode)).max() < 1e-8


def test_votes_without_a_finite_estimate_are_refused_by_the_one_solver():
    # system 0 wins every vote: Newton runs off past MAX_LOGIT instead of settling on a large skill
    x = pair_design(np.zeros(30, int), np.ones(30, int), 2, reference=0).toarray()
    with pytest.raises(DesignError, match="human votes give no finite"):
        rectified_loss(x, np.ones(30), np.ones(30), x[:0], np.ones(0), 0.0).minimise(what="human votes")


def test_the_sandwich_intervals_equal_their_value_in_fifty_digit_arithmetic():
    # PandaLM's votes: H and G summed over the distinct (a, b, outcome) rows and H^-1 G H^-1 solved in 50-digit
    # decimals at the fitted skills. The ridge 1e-5 N makes H^-1 stretch a common shift 1e4 times; unprojected,
    # G's rounding along it moved the half-widths by 3e-8 of their size here (8e-7 on LAMP's votes).
    from decimal import Decimal, getcontext

    from lib.judgments.datasets import load_judgments
    from lib.ranking.baseline import bradley_terry
    from lib.ranking.bradley_terry import HESSIAN_REG

    getcontext().prec = 50
    votes = load_judgments("pandalm_pairwise").votes
    data = PairDataset.from_votes(votes)
    skill = BradleyTerry().fit(data).skill
    k, r = data.k, [Decimal(float(s)) for s in skill]
    h = [[Decimal(0)] * k for _ in range(k)]
    g = [[Decimal(0)] * k for _ in range(k)]
    rows = pd.DataFrame({"a": data.first, "b": data.second, "o": data.outcome}).value_counts()
    for (a, b, o), n in rows.items():
        p = 1 / (1 + (r[b] - r[a]).exp())
        for i, j, sign in ((a, a, 1), (b, b, 1), (a, b, -1), (b, a, -1)):
            h[i][j] += sign * n * p * (1 - p)
            g[i][j] += sign * n * (Decimal(float(o)) - p) ** 2
    for i in range(k):
        h[i][i] += Decimal(HESSIAN_REG) * len(votes)
    h_inv = _inverse(h)
    var = [sum(h_inv[i][s] * g[s][t] * h_inv[t][i] for s in range(k) for t in range(k)) for i in range(k)]
    half = 1.959963984540054 * np.sqrt(np.array(var, dtype=float)) * 400 / np.log(10)
    board = bradley_terry(votes).set_index("system").loc[data.systems]
    np.testing.assert_allclose(board["bt_high"] - board["bt_rating"], half, rtol=1e-10)


def _inverse(m: list) -> list:
    """Gauss-Jordan inverse of a small matrix of Decimals."""
    n = len(m)
    a = [row[:] + [type(row[0])(int(i == j)) for j in range(n)] for i, row in enumerate(m)]
    for i in range(n):
        pivot = max(range(i, n), key=lambda r: abs(a[r][i]))
        a[i], a[pivot] = a[pivot], a[i]
        a[i] = [x / a[i][i] for x in a[i]]
        for r in range(n):
            if r != i:
                a[r] = [x - a[r][i] * y for x, y in zip(a[r], a[i], strict=True)]
    return [row[n:] for row in a]
