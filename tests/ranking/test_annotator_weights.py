"""Annotators weighted by their Dawid-Skene reliability (issue 33): on simulated spammers the leaderboard
recovers the true ranking where unweighted votes do not.

Four systems whose skills rise with their names (s1 worst, s4 best); every (prompt, pair) is judged by three
careful annotators (the prompt's better system, drawn from the skills, with probability 0.9) and two spammers
who always pick the alphabetically first system of the pair. Unweighted, a later system wins a vote with
probability about 3 x 0.62 / 5 < 1/2 for neighbours, so the spammers turn the ranking upside down; the
spammers' reliability (kappa against the Dawid-Skene truth) is 0 whatever the truth, so weighted they count
for nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lib.errors import SettingsError
from lib.judgments.annotator_quality import annotator_quality, vote_labels, vote_weights
from lib.ranking.baseline import bradley_terry
from lib.ranking.fit import RankSettings
from lib.ranking.run import rank_systems

SKILLS = {"s1": -1.0, "s2": -0.33, "s3": 0.33, "s4": 1.0}
TRUE_ORDER = ["s4", "s3", "s2", "s1"]


def spammed_votes(seed: int = 0, prompts: int = 20, careful: int = 3, spammers: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    names = list(SKILLS)
    rows = []
    for p in range(prompts):
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                truth = "b" if rng.random() < 1 / (1 + np.exp(SKILLS[a] - SKILLS[b])) else "a"
                for w in range(careful):
                    flip = rng.random() >= 0.9
                    rows.append((f"p{p}", a, b, f"careful-{w}", {"a": "b", "b": "a"}[truth] if flip else truth))
                rows += [(f"p{p}", a, b, f"spammer-{w}", "a") for w in range(spammers)]
    return pd.DataFrame(rows, columns=["prompt_id", "system_a", "system_b", "annotator_id", "winner"]).assign(
        criterion="overall"
    )


@pytest.fixture(scope="module")
def votes():
    return spammed_votes()


def test_spammers_get_no_weight_and_careful_annotators_most(votes):
    weights, quality = vote_weights(votes)
    q = quality.set_index("annotator")
    assert q.loc[["spammer-0", "spammer-1"], "reliability"].max() < 0.05
    assert q.loc[["careful-0", "careful-1", "careful-2"], "reliability"].min() > 0.4
    assert weights[votes["annotator_id"].str.startswith("spammer").to_numpy()].max() < 0.05
    assert q["agreement"].between(0, 1).all() and (q["tasks"] == 20 * 6).all()


@pytest.mark.parametrize("seed", range(4))
def test_the_bradley_terry_baseline_weighted_recovers_the_ranking(seed):
    """On four simulated studies: weighted, the true order every time; unweighted, never."""
    votes = spammed_votes(seed)
    weights, _ = vote_weights(votes)
    assert bradley_terry(votes)["system"].tolist() != TRUE_ORDER
    assert bradley_terry(votes.assign(weight=weights))["system"].tolist() == TRUE_ORDER


def test_the_leaderboard_weighted_recovers_the_true_ranking_where_unweighted_does_not(votes, arena_analysis):
    data = arena_analysis(votes)
    plain = rank_systems(data, RankSettings(seed=0))
    weighted = rank_systems(data, RankSettings(seed=0, annotator_weights=True))
    assert plain.leaderboard["system"].tolist() != TRUE_ORDER
    assert plain.annotator_quality is None
    assert weighted.leaderboard["system"].tolist() == TRUE_ORDER
    assert weighted.leaderboard["rank_high"].iloc[0] <= 2  # the best is placed near the top with confidence
    spam = weighted.annotator_quality.set_index("annotator").loc[["spammer-0", "spammer-1"], "reliability"]
    assert (spam < 0.05).all()


def test_weights_need_named_annotators_and_the_votes_likelihood(votes, arena_analysis):
    with pytest.raises(SettingsError, match="name their annotator"):
        vote_weights(votes.assign(annotator_id=""))
    with pytest.raises(SettingsError, match="votes likelihood"):
        RankSettings(likelihood="cells", annotator_weights=True).validate()


def test_dawid_skene_reliability_is_cohens_kappa_against_the_truth():
    """A known case: 40 tasks, truth a / b in turn; two annotators always right (kappa 1), one right on
    three tasks of four (accuracy 0.75, chance 0.5: kappa 0.5), one always 'a' (accuracy 0.5 = chance: 0)."""
    truth = ["a", "b"] * 20
    rows = []
    for t, label in enumerate(truth):
        rows += [(t, "right", label), (t, "right-too", label), (t, "always-a", "a")]
        rows.append((t, "mostly", label if t % 4 else {"a": "b", "b": "a"}[label]))
    q = annotator_quality(pd.DataFrame(rows, columns=["task", "worker", "label"])).set_index("annotator")
    assert q.loc[["right", "right-too"], "reliability"].tolist() == pytest.approx([1, 1], abs=1e-3)
    assert q.loc["mostly", ["ds_accuracy", "reliability"]].tolist() == pytest.approx([0.75, 0.5], abs=1e-3)
    assert q.loc["always-a", ["ds_accuracy", "reliability"]].tolist() == pytest.approx([0.5, 0], abs=1e-3)
    # the others' 'a' answers: both right ones on the 20 a-tasks, 'mostly' on 10 of them; of 40 x 3 answers
    assert q.loc["always-a", "agreement"] == pytest.approx(50 / 120)
    assert (
        len(
            vote_labels(
                pd.DataFrame(
                    [("p", "y", "x", "r", "a", "c")],
                    columns=["prompt_id", "system_a", "system_b", "annotator_id", "winner", "criterion"],
                )
            )
        )
        == 1
    )
