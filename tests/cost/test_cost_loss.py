"""lib.cost.loss: Likert loss, Table 1 tests with Holm, loss by difficulty (Fig. 5), a real study."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from cost_studies import HANNA, Z, make_study, task_rows
from scipy import stats

from lib.cost.compare import MANN_WHITNEY, T_TEST
from lib.cost.loss import likert_to_loss, loss_by_difficulty, loss_table, loss_tests
from lib.cost.schema import read_study
from lib.errors import SettingsError
from lib.judgments.formats import read_csv


def test_loss_transform_maps_likert_ends_and_steps():
    assert likert_to_loss([1, 2, 3, 4, 5]).tolist() == [1.0, 0.75, 0.5, 0.25, 0.0]
    assert np.isnan(likert_to_loss([np.nan]))[0]


def test_loss_table_means_counts_and_order(effort_study):
    table = loss_table(effort_study)
    assert list(table.columns) == ["task", "condition", "mean_loss", "n", "test", "p_value", "p_holm"]
    got = table.set_index(["task", "condition"]).mean_loss
    assert got[("numeric", "gpt")] == 0.5 and got[("numeric", "human")] == 0.0  # s = 3 and 5
    assert got[("writing", "gpt")] == 0.75 and got[("writing", "human")] == 0.25  # s = 2 and 4
    assert table.n.tolist() == [9, 9, 9, 9]
    assert table.condition.tolist() == ["gpt", "human", "gpt", "human"]


def test_choice_of_test_follows_shapiro_and_levene(study_with_known_tests):
    t = loss_tests(study_with_known_tests).set_index("task")
    assert t.loc["normal", "test"] == T_TEST
    assert t.loc["normal", "shapiro_p_with"] > 0.05 and t.loc["normal", "levene_p"] > 0.05
    assert t.loc["skewed", "test"] == MANN_WHITNEY and t.loc["skewed", "shapiro_p_with"] <= 0.05
    assert t.loc["unequal", "test"] == MANN_WHITNEY
    assert t.loc["unequal", "shapiro_p_with"] > 0.05 and t.loc["unequal", "levene_p"] <= 0.05
    # The p-values are those of the chosen scipy test on the losses.
    lw, lwo = likert_to_loss(3.5 + 0.5 * Z), likert_to_loss(2.5 + 0.5 * Z)
    assert t.loc["normal", "p_value"] == pytest.approx(stats.ttest_ind(lw, lwo).pvalue, rel=1e-12)
    lw, lwo = likert_to_loss(3.2 + 0.05 * Z), likert_to_loss(3 + 0.8 * Z)
    assert t.loc["unequal", "p_value"] == pytest.approx(stats.mannwhitneyu(lw, lwo).pvalue, rel=1e-12)


def test_holm_across_tasks_in_tables(study_with_known_tests):
    t = loss_tests(study_with_known_tests)
    p = t.p_value.to_numpy()
    order = np.argsort(p)
    by_hand = np.maximum.accumulate(np.minimum(1, p[order] * (len(p) - np.arange(len(p)))))
    expected = np.empty_like(p)
    expected[order] = by_hand
    assert t.p_holm.to_numpy() == pytest.approx(expected)
    table = loss_table(study_with_known_tests)
    assert table.groupby("task", sort=False).p_holm.first().to_numpy() == pytest.approx(expected)


def test_loss_by_difficulty_marks_easiest():
    rows = task_rows("numeric", [5, 3, 1] * 3, [5, 5, 5] * 3)
    table = loss_by_difficulty(make_study(rows, covariates={}))
    gpt = table[table.condition == "gpt"]
    assert gpt.instance.tolist() == [1, 2, 3]
    assert gpt.mean_loss.tolist() == [0.0, 0.5, 1.0]
    assert table.easiest.tolist() == [True, False, False, True, False, False]


def test_loss_source_errors_are_typed(effort_study):
    with pytest.raises(SettingsError, match="source must be one of self, external"):
        loss_by_difficulty(effort_study, source="median")
    with pytest.raises(SettingsError, match="external_loss"):
        loss_by_difficulty(effort_study, source="external")  # the study has no L_E column


def test_real_study_loss_table_equals_spreadsheet_means():
    """HANNA (Chhun et al. 2022): 1-5 human scores of human-written vs GPT-2 stories per criterion.

    Criterion plays the task, the story's prompt the participant; one instance each. The expected
    means are summed and counted with the csv module, as a spreadsheet would.
    """
    sums: dict[tuple[str, str], list[float]] = {}
    with HANNA.open(newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r["system"] in ("Human", "GPT-2"):
                sums.setdefault((r["criterion"], r["system"]), []).append(1 - (float(r["mean_human_score"]) - 1) / 4)
    df = read_csv(HANNA, HANNA.name)
    df = df[df.system.isin(["Human", "GPT-2"])].assign(instance="1")
    study = read_study(
        df,
        {"condition": "system", "participant": "prompt_idx", "task": "criterion", "usefulness": "mean_human_score"},
        with_label="GPT-2",
        covariates={},
        file=HANNA.name,
    )
    table = loss_table(study)
    assert len(table) == len(sums) == 12
    for row in table.itertuples():
        values = sums[(row.task, row.condition)]
        assert round(row.mean_loss, 2) == round(sum(values) / len(values), 2)
        assert row.mean_loss == pytest.approx(sum(values) / len(values), abs=1e-12)
        assert row.n == len(values) == 96
