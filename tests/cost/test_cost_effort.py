"""lib.cost.effort: the first-instance convention, medians per component, Fig. 4 tests, a real study."""

from __future__ import annotations

import csv
import statistics

import numpy as np
import pytest
from cost_studies import HANNA, NUMERIC, make_study, task_rows
from scipy import stats

from lib.cost.compare import MANN_WHITNEY
from lib.cost.costs import Weights, cost_curve, cost_terms
from lib.cost.effort import effort_medians, effort_tests
from lib.cost.loss import loss_table
from lib.cost.schema import read_study
from lib.judgments.formats import read_csv


def test_first_instance_convention_splits_prompt_time(effort_study):
    medians, warnings = effort_medians(effort_study)
    m = medians.set_index(["task", "component"]).median_s
    assert m[("numeric", "W_H")] == 35  # median of the later prompts 10..60
    assert m[("numeric", "D_H")] == 150 - 35  # median first prompt minus W_H
    assert m[("numeric", "U_H")] == 5 and m[("numeric", "V_H")] == 10 and m[("numeric", "G_H")] == 140
    assert m[("writing", "D_H")] == 0 and m[("writing", "W_H")] == 40
    assert len(warnings) == 1 and "writing" in warnings[0] and "D_H set to 0" in warnings[0]
    assert list(medians.columns) == ["task", "condition", "component", "median_s"]
    assert medians[medians.component == "G_H"].condition.unique().tolist() == ["human"]


def test_single_instance_task_cannot_split_d_and_w():
    rows = task_rows(
        "once", [3] * 3, [3] * 3, n_inst=1, prompt_time_s=([50, 60, 70], None), solve_time_s=(None, [10, 20, 30])
    )
    study = make_study(rows, covariates={})
    medians, warnings = effort_medians(study)
    assert medians.set_index("component").median_s[["D_H", "W_H"]].isna().all()
    assert "cannot be separated" in warnings[0]
    terms, cost_warnings = cost_terms(loss_table(study), medians, "gpt", "human", Weights())
    assert terms.setup.isna().all() and "D_H" in cost_warnings[0]
    assert cost_curve(terms, 5, Weights()).empty


def test_effort_tests_use_mann_whitney_on_totals(effort_study):
    t = effort_tests(effort_study).set_index("task").loc["numeric"]
    totals_with = (
        np.array(NUMERIC["prompt_time_s"][0]) + NUMERIC["unwrap_time_s"][0] + np.array(NUMERIC["validate_time_s"][0])
    )
    expected = stats.mannwhitneyu(totals_with, NUMERIC["solve_time_s"][1])
    assert t.test == MANN_WHITNEY and t.p_value == pytest.approx(expected.pvalue)
    assert t.median_total_with_s == np.median(totals_with)


def test_real_study_effort_medians_equal_spreadsheet_medians():
    """HANNA scores stand in for times (the repo bundles no real timed study): GPT-2 scores as the
    with-model unwrap time U_H, human-written ones as the solving time G_H. Expected medians come
    from the csv module and ``statistics.median``, as a spreadsheet's MEDIAN would."""
    values: dict[tuple[str, str], list[float]] = {}
    with HANNA.open(newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r["system"] in ("Human", "GPT-2"):
                values.setdefault((r["criterion"], r["system"]), []).append(float(r["mean_human_score"]))
    df = read_csv(HANNA, HANNA.name)
    df = df[df.system.isin(["Human", "GPT-2"])]
    gpt = df.system == "GPT-2"
    df = df.assign(instance="1", unwrap=df.mean_human_score.where(gpt, ""), solve=df.mean_human_score.where(~gpt, ""))
    study = read_study(
        df,
        {
            "condition": "system",
            "participant": "prompt_idx",
            "task": "criterion",
            "usefulness": "mean_human_score",
            "unwrap_time_s": "unwrap",
            "solve_time_s": "solve",
        },
        with_label="GPT-2",
        covariates={},
        file=HANNA.name,
    )
    medians, _ = effort_medians(study)
    got = medians.set_index(["task", "component"]).median_s
    assert len(got) == 12
    for (criterion, system), v in values.items():
        component = "U_H" if system == "GPT-2" else "G_H"
        assert round(got[(criterion, component)], 2) == round(statistics.median(v), 2)
        assert got[(criterion, component)] == pytest.approx(statistics.median(v), abs=1e-12)
