"""Net ratings, rescaling, redundancy groups and the checks around them, on hand-computed cases."""

import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from lib.errors import SettingsError
from lib.judgments.ratings import (
    MIN_SHARED_COMPARISONS,
    fleiss_kappa,
    from_absolute_ratings,
    from_responses,
    item_total_correlation,
    merge_groups,
    merge_lines,
    merge_warning,
    net_ratings,
    redundancy_groups,
)


def votes(rows):
    return pd.DataFrame(rows, columns=["prompt_id", "system_a", "system_b", "annotator_id", "winner", "criterion"])


def test_net_rating_sums_wins_minus_losses_with_orientation():
    # Pair (x, y): canonical A = x, B = y. A vote with the pair reversed has its winner flipped.
    v = votes(
        [
            ("p1", "x", "y", "r1", "b", "overall"),  # y wins: +1
            ("p1", "y", "x", "r2", "a", "overall"),  # y (as A) wins: +1
            ("p1", "x", "y", "r3", "tie", "overall"),  # 0
            ("p2", "x", "y", "r1", "a", "overall"),  # x wins: -1
            ("p2", "x", "y", "r2", "a", "overall"),
            ("p2", "y", "x", "r3", "b", "overall"),  # x (as B) wins: -1
        ]
    )
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
    mixed = votes(
        [
            ("p1", "x", "y", "r1", "b", "overall"),  # 1 of 1 -> 3
            ("p2", "x", "y", "r1", "b", "overall"),
            ("p2", "x", "y", "r2", "tie", "overall"),  # 1/2 -> 1.5 -> 2
            ("p3", "x", "y", "r1", "a", "overall"),
            ("p3", "x", "y", "r2", "tie", "overall"),  # -1.5 -> -2
        ]
    )
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
    systems = "abcdefghijk"  # 11 systems: 55 comparisons, 10 independent contrasts
    pairs = [(s1, s2) for i, s1 in enumerate(systems) for s2 in systems[i + 1 :]]
    for c, (s1, s2) in enumerate(pairs):
        w = "b" if c % 2 else "a"
        for p in ("p1", "p2"):  # p1 and p2 identical: redundant
            rows += [(p, s1, s2, f"r{k}", w, "overall") for k in range(3)]
        rows += [("p3", s1, s2, f"r{k}", "tie" if c % 3 else "b", "overall") for k in range(3)]
    rm = net_ratings(votes(rows))
    assert rm.shape == (55, 2)
    assert set(rm.groups.loc[rm.groups.prompt_id.isin(["p1", "p2"]), "group"]) == {"p1"}
    full = net_ratings(votes(rows), merge_redundant=False)
    assert_array_equal(rm.u[:, 0], full.u[:, 0])


def test_absolute_ratings_binned_on_minus3_plus3():
    r = pd.DataFrame(
        {
            "prompt_id": ["p"] * 3,
            "system": ["s1", "s2", "s3"],
            "criterion": "overall",
            "score": [1.0, 2.0, 5.0],
        }
    )
    rm = from_absolute_ratings(r, scale=(1, 5), merge_redundant=False)
    # pairs (s1,s2): d=1 -> 0.75 -> 1; (s1,s3): d=4 -> 3; (s2,s3): d=3 -> 2.25 -> 2
    assert_array_equal(rm.comparisons["comparison"], ["s2 vs s1", "s3 vs s1", "s3 vs s2"])
    assert_array_equal(rm.u[:, 0], [1.0, 3.0, 2.0])


def test_absolute_ratings_average_over_annotators_before_taking_the_scale():
    # one score per annotator: raw scores span 1..5, their means per (prompt, system) only 2..4
    r = pd.DataFrame(
        {
            "prompt_id": ["p", "p", "p", "p", "q", "q", "q", "q"],
            "system": ["s1", "s1", "s2", "s3", "s1", "s2", "s3", "s3"],
            "criterion": "overall",
            "annotator_id": ["r1", "r2", "r1", "r1", "r1", "r1", "r1", "r2"],
            "score": [1.0, 5.0, 4.0, 2.0, 2.0, 3.0, 5.0, 1.0],
        }
    )
    means = r.groupby(["criterion", "prompt_id", "system"], as_index=False)["score"].mean()
    by_annotator = from_absolute_ratings(r, merge_redundant=False)
    by_mean = from_absolute_ratings(means, merge_redundant=False)
    assert_array_equal(by_annotator.u, by_mean.u)
    assert_array_equal(by_annotator.u[:, 0], [2.0, -2.0, -3.0])  # means (3, 4, 2) on the scale [2, 4]


def test_net_ratings_of_a_file_with_annotators_equal_those_of_its_means():
    from lib.inputs import analysis_input
    from lib.io.tables import read_csv

    rows = "prompt,system,annotator,score\n" + "".join(
        f"p{p},s{s},r{a},{(p * 3 + s * 2 + a * 5) % 7 + 1}\n"
        for p in range(6)
        for s in range(4)
        for a in range(3)
        if (p + s + a) % 4
    )
    raw = read_csv(rows.encode(), "raw.csv")
    means = raw.astype({"score": float}).groupby(["prompt", "system"], as_index=False)["score"].mean()
    mean_table = read_csv(means.to_csv(index=False).encode(), "means.csv")
    by_annotator = analysis_input(raw, "ratings", file="raw.csv", merge_redundant=False).matrix
    by_mean = analysis_input(mean_table, "ratings", file="means.csv", merge_redundant=False).matrix
    assert_array_equal(by_annotator.u, by_mean.u)
    assert_array_equal(by_annotator.prompt_ids, by_mean.prompt_ids)


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
    v = votes(
        [
            ("p1", "x", "y", "r1", "a", "o"),
            ("p1", "x", "y", "r2", "a", "o"),
            ("p1", "x", "y", "r3", "a", "o"),
            ("p2", "x", "y", "r1", "b", "o"),
            ("p2", "x", "y", "r2", "b", "o"),
            ("p2", "x", "y", "r3", "tie", "o"),
        ]
    )
    # p_j = (3/6, 2/6, 1/6); P_i = (1, 1/3); P_bar = 2/3; P_e = 14/36.
    kappa, n = fleiss_kappa(v)
    assert n == 2
    assert_allclose(kappa, (2 / 3 - 14 / 36) / (1 - 14 / 36))


# ------------------------------------------------------------------ redundancy merging: when it is allowed
def story_ratings(n_systems, seed=0):
    """Scores 1-5 of systems on 168 prompts = 28 stories x 6 tests; system quality drives every prompt.

    The prompts carry no redundancy beyond the systems' overall difference (independent noise).
    """
    rng = np.random.default_rng(seed)
    quality = np.linspace(-1.0, 1.0, n_systems)
    rows = [
        (f"story{st}-test{t}", f"s{k}", "overall", float(np.clip(np.rint(3 + q + rng.normal(0, 0.8)), 1, 5)))
        for st in range(28)
        for t in range(6)
        for k, q in enumerate(quality)
    ]
    return pd.DataFrame(rows, columns=["prompt_id", "system", "criterion", "score"])


@pytest.mark.parametrize("n_systems", [4, 6, 12])
def test_story_x_test_prompts_do_not_collapse_by_default(n_systems):
    rm = from_absolute_ratings(story_ratings(n_systems))
    # 4, 6 and 12 systems (6, 15, 66 comparisons; 3, 5, 11 independent contrasts): with noise only,
    # chance correlations must not merge the study (before: 168 prompts -> 1, 1 and 11 columns).
    assert rm.shape[1] >= 160, merge_lines(rm)
    assert merge_warning(rm) is None


def _with_noise_prompts(cols, n_noise=20, seed=0):
    """Stack prompt columns with independent noise prompts, so centring by the comparison mean is mild."""
    rng = np.random.default_rng(seed)
    cols = np.column_stack(cols)
    return np.column_stack([cols, rng.normal(size=(cols.shape[0], n_noise))])


def _centred_corr(u, i, j):
    c = u - u.mean(axis=1, keepdims=True)
    return np.corrcoef(c[:, i], c[:, j])[0, 1]


def test_a_correlation_is_linked_only_when_credibly_above_the_threshold():
    rng = np.random.default_rng(7)
    z = rng.normal(size=(12, 1))
    # r about 0.7 over 12 comparisons: above 0.6 but the one-sided 95% Fisher-z bound is far below it.
    u = _with_noise_prompts([z, z + 0.7 * rng.normal(size=(12, 1))])
    assert 0.6 < _centred_corr(u, 0, 1) < 0.8
    labels = redundancy_groups(u, 0.6)
    assert labels[0] != labels[1]
    # The same prompt twice over 12 comparisons, or r about 0.8 over 400: credibly above 0.6, linked.
    same = _with_noise_prompts([z, z + 0.01 * rng.normal(size=(12, 1))])
    assert redundancy_groups(same, 0.6)[0] == redundancy_groups(same, 0.6)[1]
    z = rng.normal(size=(400, 1))
    many = _with_noise_prompts([z, z + 0.6 * rng.normal(size=(400, 1))])
    assert 0.75 < _centred_corr(many, 0, 1) < 0.9
    labels = redundancy_groups(many, 0.6)
    assert labels[0] == labels[1] and len(set(labels)) == many.shape[1] - 1


def test_shared_comparisons_below_the_minimum_are_never_linked():
    rng = np.random.default_rng(4)
    z = rng.normal(size=(MIN_SHARED_COMPARISONS, 1))
    u = _with_noise_prompts([z, z])
    assert redundancy_groups(u, 0.6)[0] == redundancy_groups(u, 0.6)[1]
    u[0, 1] = np.nan  # one shared comparison less
    assert redundancy_groups(u, 0.6)[0] != redundancy_groups(u, 0.6)[1]


def test_groups_do_not_chain_unrelated_prompts():
    # A ~ B and B ~ C correlate about 0.7, A and C not at all: complete linkage keeps C out of A's group.
    rng = np.random.default_rng(5)
    z1, z2 = rng.normal(size=(2, 2000, 1))
    u = _with_noise_prompts([z1, z1 + z2, z2], n_noise=100)
    assert _centred_corr(u, 0, 1) > 0.65 and _centred_corr(u, 1, 2) > 0.65 and abs(_centred_corr(u, 0, 2)) < 0.1
    labels = redundancy_groups(u, 0.6)
    assert labels[0] == labels[1] != labels[2]


def one_vote_per_prompt(n_prompts):
    systems = ["x", "y", "z"]
    return votes(
        [(f"p{j}", systems[j % 3], systems[(j + 1) % 3], "r1", "ab"[j % 2], "overall") for j in range(n_prompts)]
    )


def test_grouping_memory_is_bounded_for_10000_prompts_with_one_vote():
    v = one_vote_per_prompt(10_000)
    tracemalloc.start()
    rm = net_ratings(v)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert rm.shape == (3, 10_000)
    assert peak < 1e9, f"peak {peak / 1e9:.2f} GB"  # before: 6.5 GB (dense prompt x prompt matrices)


def test_grouping_memory_is_bounded_for_a_dense_matrix():
    # Every prompt observed in 20 comparisons: all are eligible, so correlations are computed in blocks.
    rng = np.random.default_rng(6)
    u = rng.integers(-3, 4, size=(20, 3000)).astype(float)
    tracemalloc.start()
    labels = redundancy_groups(u, 0.6)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(labels) == 3000
    assert peak < 200e6, f"peak {peak / 1e6:.0f} MB"  # dense: about 8 arrays of 3000 x 3000 x 8 bytes = 576 MB


def test_merge_lines_and_warning_report_every_merge():
    rm = from_absolute_ratings(story_ratings(4), merge_redundant=False)
    labels = np.arange(rm.shape[1])
    labels[[6, 9]] = 0  # prompts 0, 6, 9 into one group
    labels = np.unique(labels, return_inverse=True)[1]
    merged = merge_groups(rm, labels)
    ids = rm.prompt_ids
    assert merge_lines(merged) == [f"merged 3 prompts into {ids[0]}: {ids[0]}, {ids[6]}, {ids[9]}"]
    assert merge_warning(merged) is None
    big = merge_groups(rm, np.arange(rm.shape[1]) // 4)  # every prompt in a group of 4
    assert len(merge_lines(big)) == 42
    assert "grouped 168 of 168 prompts, leaving 42 columns" in merge_warning(big)
    assert merge_lines(rm) == [] and merge_warning(rm) is None


# ------------------------------------------------------------------ no numpy warnings on degenerate input
@pytest.mark.parametrize(
    "u",
    [
        np.full((3, 4), np.nan),
        np.zeros((0, 4)),
        np.zeros((3, 0)),
        np.ones((4, 3)),
        np.array([[1e308, -1e308, 0], [-1e308, 1e308, 1], [1e308, 1e308, 2]]),
    ],
)
def test_item_total_correlation_does_not_warn_on_degenerate_input(u):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = item_total_correlation(u)
    assert r.shape == (u.shape[1],)


@pytest.mark.parametrize("winner", ["a", "tie"])
def test_fleiss_kappa_does_not_warn_when_every_vote_is_the_same(winner):
    v = votes([(f"p{j}", "x", "y", f"r{k}", winner, "o") for j in range(4) for k in range(3)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kappa, n = fleiss_kappa(v)
    assert np.isnan(kappa) and n == 4  # perfect agreement by chance alone: kappa is undefined


def test_fleiss_kappa_of_no_votes_is_nan():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(fleiss_kappa(votes([]))[0])
