"""Net ratings, rescaling, redundancy groups and the checks around them, on hand-computed cases."""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from lib.errors import SettingsError
from lib.ratings import (
    fleiss_kappa,
    from_absolute_ratings,
    from_responses,
    item_total_correlation,
    net_ratings,
    redundancy_groups,
)


def votes(rows):
    return pd.DataFrame(rows, columns=["prompt_id", "system_a", "system_b", "annotator_id", "winner",
                                       "criterion"])


def test_net_rating_sums_wins_minus_losses_with_orientation():
    # Pair (x, y): canonical A = x, B = y. A vote with the pair reversed has its winner flipped.
    v = votes([
        ("p1", "x", "y", "r1", "b", "overall"),   # y wins: +1
        ("p1", "y", "x", "r2", "a", "overall"),   # y (as A) wins: +1
        ("p1", "x", "y", "r3", "tie", "overall"),  # 0
        ("p2", "x", "y", "r1", "a", "overall"),   # x wins: -1
        ("p2", "x", "y", "r2", "a", "overall"),
        ("p2", "y", "x", "r3", "b", "overall"),   # x (as B) wins: -1
    ])
    rm = net_ratings(v, merge_redundant=False)
    assert rm.comparisons.loc[0, "comparison"] == "y vs x"
    assert_array_equal(rm.u, [[2.0, -3.0]])
    assert_array_equal(rm.categories, np.arange(-3, 4))
    assert_array_equal(rm.codes(), [[5, 0]])


def test_equal_counts_keep_their_scale_and_varying_counts_rescale_to_3():
    one = votes([("p1", "x", "y", "r1", "b", "overall"), ("p2", "x", "y", "r1", "a", "overall")])
    rm = net_ratings(one, merge_redundant=False)
    assert_array_equal(rm.categories, [-1, 0, 1])
    assert_array_equal(rm.u, [[1.0, -1.0]])
    mixed = votes([
        ("p1", "x", "y", "r1", "b", "overall"),                                         # 1 of 1 -> 3
        ("p2", "x", "y", "r1", "b", "overall"), ("p2", "x", "y", "r2", "tie", "overall"),  # 1/2 -> 1.5 -> 2
        ("p3", "x", "y", "r1", "a", "overall"), ("p3", "x", "y", "r2", "tie", "overall"),  # -1.5 -> -2
    ])
    rm = net_ratings(mixed, merge_redundant=False)
    assert_array_equal(rm.categories, np.arange(-3, 4))
    assert_array_equal(rm.u, [[3.0, 2.0, -2.0]])
    assert_array_equal(rm.n_votes, [[1, 2, 2]])


def test_missing_cells_are_nan_and_coded_minus_one():
    v = votes([("p1", "x", "y", "r1", "b", "overall"), ("p2", "x", "z", "r1", "a", "overall")])
    rm = net_ratings(v, merge_redundant=False)
    assert rm.shape == (2, 2)
    assert np.isnan(rm.u).sum() == 2
    assert (rm.codes() == -1).sum() == 2


def test_criterion_must_be_chosen_when_several():
    v = votes([("p1", "x", "y", "r1", "b", "fluency"), ("p1", "x", "y", "r1", "a", "consistency")])
    with pytest.raises(SettingsError, match="several criteria"):
        net_ratings(v)
    with pytest.raises(SettingsError, match="unknown criterion"):
        net_ratings(v, "style")
    assert_array_equal(net_ratings(v, "fluency", merge_redundant=False).u, [[1.0]])


def test_redundancy_groups_link_correlated_prompts_only():
    rng = np.random.default_rng(1)
    base = rng.normal(size=12)
    other = rng.normal(size=12)
    u = np.column_stack([base, base + 0.05 * rng.normal(size=12), other, rng.normal(size=12)])
    labels = redundancy_groups(u, 0.6)
    assert labels[0] == labels[1]
    assert len(set(labels)) == 3
    # Too few shared comparisons: never grouped, whatever the correlation.
    assert len(set(redundancy_groups(u[:4], 0.6))) == 4


def test_merging_averages_group_members():
    rows = []
    for c, (s1, s2) in enumerate([("a", "b"), ("a", "c"), ("b", "c"), ("a", "d"), ("b", "d"), ("c", "d")]):
        w = "b" if c % 2 else "a"
        for p in ("p1", "p2"):  # p1 and p2 identical: redundant
            rows += [(p, s1, s2, f"r{k}", w, "overall") for k in range(3)]
        rows += [("p3", s1, s2, f"r{k}", "tie" if c % 3 else "b", "overall") for k in range(3)]
    rm = net_ratings(votes(rows))
    assert rm.shape == (6, 2)
    assert set(rm.groups.loc[rm.groups.prompt_id.isin(["p1", "p2"]), "group"]) == {"p1"}
    full = net_ratings(votes(rows), merge_redundant=False)
    assert_array_equal(rm.u[:, 0], full.u[:, 0])


def test_absolute_ratings_binned_on_minus3_plus3():
    r = pd.DataFrame({
        "prompt_id": ["p"] * 3, "system": ["s1", "s2", "s3"], "criterion": "overall",
        "score": [1.0, 2.0, 5.0],
    })
    rm = from_absolute_ratings(r, scale=(1, 5), merge_redundant=False)
    # pairs (s1,s2): d=1 -> 0.75 -> 1; (s1,s3): d=4 -> 3; (s2,s3): d=3 -> 2.25 -> 2
    assert_array_equal(rm.comparisons["comparison"], ["s2 vs s1", "s3 vs s1", "s3 vs s2"])
    assert_array_equal(rm.u[:, 0], [1.0, 3.0, 2.0])


def test_responses_become_a_person_by_item_matrix():
    df = pd.DataFrame({"person": ["p1", "p1", "p2"], "item": ["i1", "i2", "i1"], "score": [1, 3, 2]})
    rm = from_responses(df)
    assert_array_equal(rm.categories, [1, 2, 3])
    assert_array_equal(rm.codes(), [[0, 2], [1, -1]])


def test_item_total_correlation_is_corrected():
    u = np.array([[1.0, 1, 2], [2, 2, 1], [3, 3, 3], [4, 4, 2]])
    r = item_total_correlation(u)
    rest0 = u[:, 1] + u[:, 2]
    assert_allclose(r[0], np.corrcoef(u[:, 0], rest0)[0, 1])


def test_fleiss_kappa_matches_hand_computation():
    # Two subjects, three raters: (a, a, a) and (b, b, tie).
    v = votes([
        ("p1", "x", "y", "r1", "a", "o"), ("p1", "x", "y", "r2", "a", "o"), ("p1", "x", "y", "r3", "a", "o"),
        ("p2", "x", "y", "r1", "b", "o"), ("p2", "x", "y", "r2", "b", "o"), ("p2", "x", "y", "r3", "tie", "o"),
    ])
    # p_j = (3/6, 2/6, 1/6); P_i = (1, 1/3); P_bar = 2/3; P_e = 14/36.
    kappa, n = fleiss_kappa(v)
    assert n == 2
    assert_allclose(kappa, (2 / 3 - 14 / 36) / (1 - 14 / 36))
