"""Issue 30 item 3: ratings model their raters by default where the scores identify the severities.

The default (``RankSettings().annotator_effect`` None) is decided by the annotator-system graph
(:func:`lib.ranking.data.annotator_design`) and said with the result; ``--no-annotator-effect`` turns it
off, ``--annotator-effect`` on. The coverage check runs the leaderboard's run function with the default
settings (NUTS sizes shortened: the default Laplace fit falls back to NUTS for the severities).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

import lib.cli
from lib.inputs import analysis_input, bundled_input
from lib.io.tables import read_csv
from lib.ranking.data import annotator_design, annotator_design_of, ranking_data
from lib.ranking.fit import RankSettings, fitted_sampler, resolve_annotator_effect
from lib.ranking.run import rank_systems
from lib.ranking.simulate import simulate_ratings

COLUMNS = {"prompt": "prompt_id", "system": "system", "annotator": "annotator_id", "score": "score"}


def ratings_input(scores: pd.DataFrame):
    """Simulated scores through the CSV reader and the ratings format, as a user's file."""
    table = read_csv(scores.to_csv(index=False).encode(), "scores.csv")
    return analysis_input(table, "ratings", COLUMNS, file="scores.csv", merge_redundant=False)


def one_system_each(scores: pd.DataFrame) -> pd.DataFrame:
    """The same scores, each annotator id split into one per system scored (as if each system had its own raters)."""
    return scores.assign(annotator_id=scores["annotator_id"] + "-" + scores["system"])


@pytest.fixture(scope="module")
def crowd():
    """16 systems, 24 prompts, 12 raters (two a cell) whose severities have SD 1 and who lean towards
    some systems (confounding 0.5: who rated what is not random, as in a crowd)."""
    return simulate_ratings(16, 24, 12, raters_per_cell=2, severity_sd=1.0, confounding=0.5, seed=30)


def test_the_rule_is_on_where_the_annotators_link_the_systems_and_says_why(crowd):
    scores, _ = crowd
    on = annotator_design(ranking_data(ratings_input(scores)).ratings)
    assert on.identified and "Annotator severity is modelled" in on.note and "12 annotators" in on.note
    # each annotator scored one system: every severity is confounded with its system's skill
    split = one_system_each(scores)
    off = annotator_design_of(ratings_input(split))
    assert not off.identified
    assert "not modelled" in off.note and "16 groups that share no system" in off.note
    n = split["annotator_id"].nunique()
    assert f"{n} of the {n} annotators scored one system each" in off.note
    # two groups of systems with their own raters: still no link between the groups
    half = scores["system"].isin(sorted(set(scores["system"]))[:8])
    split = scores.assign(annotator_id=np.where(half, "a", "b") + scores["annotator_id"])
    assert "2 groups" in annotator_design(split).note and not annotator_design(split).identified
    # no annotator column, one annotator, paired judgments
    assert "name no annotator" in annotator_design(scores.assign(annotator_id="")).note
    assert "one annotator (r)" in annotator_design(scores.assign(annotator_id="r")).note
    assert annotator_design(None) == annotator_design_of(ratings_input(scores), "cells")  # off, nothing to say
    assert not annotator_design(None).identified and annotator_design(None).note == ""
    # item-response data (persons x items) has no systems: nothing to decide (the page then says why it cannot rank)
    assert annotator_design_of(bundled_input("lsat7")) == annotator_design(None)


def test_the_default_is_decided_once_and_a_choice_is_kept(crowd):
    scores, _ = crowd
    on = annotator_design(ranking_data(ratings_input(scores)).ratings)
    assert RankSettings().annotator_effect is None  # the one default: auto
    assert resolve_annotator_effect(RankSettings(), on).annotator_effect is True
    assert resolve_annotator_effect(RankSettings(annotator_effect=False), on).annotator_effect is False
    assert fitted_sampler(resolve_annotator_effect(RankSettings(), on)) == "numpyro"  # Laplace falls back


def test_the_default_rank_covers_the_true_skills_of_severe_and_lenient_raters(crowd):
    scores, truth = crowd
    result = rank_systems(ratings_input(scores), RankSettings(chains=2, draws=400, tune=300, seed=1))
    assert result.fit.settings.annotator_effect is True and result.fit.diagnostics.sampler == "numpyro"
    assert any(n.startswith("Annotator severity is modelled") for n in result.notes)
    board = result.leaderboard.set_index("system").loc[truth["systems"]]
    covered = (board["skill_low"] <= truth["skill"]) & (truth["skill"] <= board["skill_high"])
    # 95% intervals of 16 skills: at least the binomial 99.9% lower bound (the fit without the severities,
    # the default before: 8 of 16, RMS z 2.49)
    assert covered.sum() >= binom.ppf(0.001, len(board), 0.95)
    z = (board["skill_mean"] - truth["skill"]) / board["skill_sd"]
    assert np.sqrt(np.mean(z**2)) < 1 + 3 * np.sqrt(1 / (2 * len(z)))  # mean z^2 ~ 1 +- sqrt(2 / n)
    assert result.severity is not None and len(result.severity) == 12


def test_rank_says_the_severity_is_off_where_it_cannot_be_identified(tmp_path, capsys, monkeypatch, crowd):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    scores, _ = simulate_ratings(4, 12, 4, raters_per_cell=1, severity_sd=1.0, seed=31)
    path = tmp_path / "scores.csv"
    one_system_each(scores).rename(columns={"prompt_id": "prompt", "annotator_id": "annotator"}).to_csv(
        path, index=False
    )
    args = ["rank", "--input", str(path), "--format", "ratings", "--out"]
    assert lib.cli.main([*args, str(tmp_path / "auto")]) == 0
    said = capsys.readouterr()
    assert (
        "note: Annotator severity is not modelled: the annotators and the systems they scored fall into 4" in said.out
    )
    assert "fitted with laplace" in said.out and not (tmp_path / "auto" / "annotators.csv").exists()
    assert lib.cli.main([*args, str(tmp_path / "off"), "--no-annotator-effect"]) == 0
    said = capsys.readouterr()
    assert "Annotator severity is" not in said.out and "fitted with laplace" in said.out
