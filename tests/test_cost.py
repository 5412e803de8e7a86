"""Human cost of using a model (Casares et al. 2022): known-answer studies, a real study, the CLI."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lib.cli import main
from lib.cost.analysis import analyse
from lib.cost.compare import MANN_WHITNEY, T_TEST, holm
from lib.cost.correlation import participant_terms, spearman
from lib.cost.costs import Weights, break_even, c_h, c_hm, cost_curve, cost_terms, parse_weights
from lib.cost.effort import effort_medians, effort_tests
from lib.cost.loss import likert_to_loss, loss_by_difficulty, loss_table, loss_tests
from lib.cost.schema import guess_columns, guess_with_label, parse_covariates, read_study
from lib.errors import InputError, SettingsError
from lib.formats import read_csv
from lib.plots import cost as plots

ROOT = Path(__file__).resolve().parents[1]
HANNA = ROOT / "data" / "hanna_means" / "mean_human_scores_long.csv"
EXAMPLE = ROOT / "data" / "cost_example" / "study.csv"


# ------------------------------------------------------------------------------ known studies


def _rows(task, with_s, without_s, n_inst=3, **times):
    """Rows of one task: participant k // n_inst does instances 1..n_inst in each condition."""
    out = []
    for cond, scores in (("gpt", with_s), ("human", without_s)):
        for k, s in enumerate(scores):
            row = dict(condition=cond, participant=f"{cond}{k // n_inst}", task=task, instance=k % n_inst + 1,
                       usefulness=s)
            for role, (w_values, wo_values) in times.items():
                values = w_values if cond == "gpt" else wo_values
                row[role] = values[k] if values is not None else np.nan
            out.append(row)
    return out


def _study(rows, **kw):
    return read_study(pd.DataFrame(rows), file="study.csv", **kw)


Z = stats.norm.ppf((np.arange(30) + 0.5) / 30)  # exactly normal-shaped samples


@pytest.fixture(scope="module")
def study_with_known_tests():
    """Three tasks whose pre-tests have known outcomes (Table 1 procedure)."""
    rows = (
        _rows("normal", 3.5 + 0.5 * Z, 2.5 + 0.5 * Z)  # normal, equal variances -> t-test
        + _rows("skewed", [5] * 20 + [1] * 4 + [2] * 3 + [3] * 3, 3 + 0.5 * Z)  # not normal -> MW
        + _rows("unequal", 3.2 + 0.05 * Z, 3 + 0.8 * Z)  # normal, unequal variances -> MW
    )
    return _study(rows, covariates={})


# Effort study: numeric has first prompts 130/150/170 and later prompts 10..60 (W_H = 35, D_H = 115);
# writing has first prompts faster than later ones (D_H clipped to 0).
NUMERIC = dict(
    prompt_time_s=([130, 10, 20, 150, 30, 40, 170, 50, 60], None),
    unwrap_time_s=([1, 2, 3, 4, 5, 6, 7, 8, 9], None),
    validate_time_s=([2, 4, 6, 8, 10, 12, 14, 16, 18], None),
    solve_time_s=(None, [100, 110, 120, 130, 140, 150, 160, 170, 180]),
)
WRITING = dict(
    prompt_time_s=([20, 40, 40, 20, 40, 40, 20, 40, 40], None),
    unwrap_time_s=([5] * 9, None),
    validate_time_s=([5] * 9, None),
    solve_time_s=(None, [300] * 9),
)


@pytest.fixture(scope="module")
def effort_study():
    rows = _rows("numeric", [3] * 9, [5] * 9, **NUMERIC) + _rows("writing", [2] * 9, [4] * 9, **WRITING)
    return _study(rows, covariates={})


# ------------------------------------------------------------------------------ loss


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


def test_holm_correction_by_hand():
    # Sorted p: 0.01 x 3 = 0.03; 0.03 x 2 = 0.06; 0.04 x 1 = 0.04 -> monotone 0.06.
    assert holm(np.array([0.01, 0.04, 0.03, np.nan])).tolist()[:3] == pytest.approx([0.03, 0.06, 0.06])
    assert np.isnan(holm(np.array([0.01, 0.04, 0.03, np.nan]))[3])


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
    rows = _rows("numeric", [5, 3, 1] * 3, [5, 5, 5] * 3)
    table = loss_by_difficulty(_study(rows, covariates={}))
    gpt = table[table.condition == "gpt"]
    assert gpt.instance.tolist() == [1, 2, 3]
    assert gpt.mean_loss.tolist() == [0.0, 0.5, 1.0]
    assert table.easiest.tolist() == [True, False, False, True, False, False]


# ------------------------------------------------------------------------------ effort and cost


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
    rows = _rows("once", [3] * 3, [3] * 3, n_inst=1,
                 prompt_time_s=([50, 60, 70], None), solve_time_s=(None, [10, 20, 30]))
    study = _study(rows, covariates={})
    medians, warnings = effort_medians(study)
    assert medians.set_index("component").median_s[["D_H", "W_H"]].isna().all()
    assert "cannot be separated" in warnings[0]
    terms, cost_warnings = cost_terms(loss_table(study), medians, "gpt", "human", Weights())
    assert terms.setup.isna().all() and "D_H" in cost_warnings[0]
    assert cost_curve(terms, 5, Weights()).empty


def test_equations_2_and_3_and_break_even(effort_study):
    w = Weights(alpha=0.5, beta=0.1, gamma=0.2, delta=0.3)
    res = analyse(effort_study, weights=w, n_max=30)
    t = res.cost_terms.set_index("task").loc["numeric"]
    # Eq. 3 per instance: L 0.5 + 0.2 (35 + 5) + 0.3 x 10 = 11.5; set-up alpha D_H = 0.5 x 115 = 57.5.
    assert t.per_instance_with == pytest.approx(11.5) and t.setup == pytest.approx(57.5)
    # Eq. 2 per instance: L 0 + 0.1 x 140 = 14.
    assert t.per_instance_without == pytest.approx(14.0)
    # 57.5 + 11.5 n < 14 n  <=>  n > 23; at n = 23 the costs tie, which does not pay.
    assert t.n_star == pytest.approx(23.0)
    assert t.break_even_n == 24
    curve = res.cost_curve[res.cost_curve.task == "numeric"]
    n = curve.n.to_numpy()
    assert curve.c_h.to_numpy() == pytest.approx(14.0 * n)
    assert curve.c_hm.to_numpy() == pytest.approx(57.5 + 11.5 * n)
    assert list(res.cost_curve.columns) == ["task", "n", "c_h", "c_hm"]


def test_break_even_cases():
    assert break_even(10.0, 3.0, 5.0) == (6, 5.0)  # tie at 5
    assert break_even(10.0, 3.0, 7.0)[0] == 3  # n* = 2.5
    assert break_even(0.0, 1.0, 2.0)[0] == 1  # no set-up: pays at once
    assert break_even(10.0, 5.0, 5.0)[0] is None
    assert break_even(10.0, 6.0, 5.0)[0] is None
    assert c_h(np.array([1, 2]), 0.2, 10.0, 0.5).tolist() == pytest.approx([5.2, 10.4])
    assert c_hm(2, 0.1, 100.0, 1.0, 2.0, 3.0, Weights(0.1, 9.0, 1.0, 2.0)) == pytest.approx(10 + 2 * (0.1 + 3 + 6))


def test_break_even_agrees_with_curve(effort_study):
    res = analyse(effort_study, weights=Weights(1, 0.2, 0.1, 0.1), n_max=50)
    for t in res.cost_terms.itertuples():
        c = res.cost_curve[res.cost_curve.task == t.task]
        pays = c.n[c.c_hm < c.c_h - 1e-9]
        if pd.isna(t.break_even_n):
            assert pays.empty
        else:
            assert pays.min() == t.break_even_n and (pays.diff().dropna() == 1).all()


def test_effort_tests_use_mann_whitney_on_totals(effort_study):
    t = effort_tests(effort_study).set_index("task").loc["numeric"]
    totals_with = np.array(NUMERIC["prompt_time_s"][0]) + NUMERIC["unwrap_time_s"][0] + np.array(NUMERIC["validate_time_s"][0])
    expected = stats.mannwhitneyu(totals_with, NUMERIC["solve_time_s"][1])
    assert t.test == MANN_WHITNEY and t.p_value == pytest.approx(expected.pvalue)
    assert t.median_total_with_s == np.median(totals_with)


def test_weights_parsing():
    assert parse_weights("1,0.5,2,0") == Weights(1, 0.5, 2, 0)
    assert parse_weights(None) == Weights()
    for bad in ("1,2,3", "a,b,c,d", "1,2,3,-1"):
        with pytest.raises(SettingsError, match="alpha,beta,gamma,delta"):
            parse_weights(bad)


# ------------------------------------------------------------------------------ correlations


def test_spearman_matches_scipy_per_participant():
    rows = []
    for k in range(6):
        for cond in ("gpt", "human"):
            for h in (1, 2):
                rows.append(dict(condition=cond, participant=f"{cond}{k}", task="t", instance=h,
                                 usefulness=1 + (k * 7 + h) % 5, age=20 + 3 * k + (cond == "human"),
                                 english="B1 B2 C1 C2 B2 C1".split()[k],
                                 solve_time_s=np.nan if cond == "gpt" else 10.0 + ((k * 5) % 6) + h))
    study = _study(rows)
    assert study.covariates == ["age", "english"]  # numeric and CEFR levels guessed
    terms = participant_terms(study)
    sp = spearman(study).set_index(["var_x", "var_y"])
    human = terms.loc[[f"human{k}" for k in range(6)]]
    expected = stats.spearmanr(human.age, human.G_H)
    assert sp.loc[("age", "G_H"), "rho"] == pytest.approx(expected.statistic)
    assert sp.loc[("age", "G_H"), "p_value"] == pytest.approx(expected.pvalue)
    assert sp.loc[("age", "G_H"), "n"] == 6
    assert terms.loc[["gpt0", "gpt1", "gpt2", "gpt3"], "english"].tolist() == [2.0, 3.0, 4.0, 5.0]  # A1 = 0 .. C2 = 5
    assert list(sp.reset_index().columns) == ["var_x", "var_y", "rho", "p_value", "n"]


# ------------------------------------------------------------------------------ validation


def _base():
    return pd.DataFrame(_rows("t", [3, 4, 5], [2, 3, 4], solve_time_s=(None, [5, 6, 7])))


@pytest.mark.parametrize(
    ("change", "pattern"),
    [
        (lambda d: d.assign(usefulness=[3, 4, 7, 2, 3, 4]), r"study.csv, row 3, column 'usefulness': .*1-5"),
        (lambda d: d.assign(usefulness=["3", "x", "5", "2", "3", "4"]), r"row 2, column 'usefulness': usefulness must be a number, found 'x'"),
        (lambda d: d.assign(instance=[1, 2, 2.5, 1, 2, 3]), r"row 3, column 'instance'.*whole number"),
        (lambda d: d.assign(solve_time_s=[np.nan] * 3 + [5, -1, 7]), r"row 5, column 'solve_time_s'.*>= 0"),
        (lambda d: d.assign(solve_time_s=[9, np.nan, np.nan, 5, 6, 7]), r"row 1, .*only applies to condition 'human'"),
        (lambda d: d.assign(condition=["gpt", "gpt", "x", "human", "human", "human"]), r"column .condition.: .*exactly two conditions .*found 3"),
        (lambda d: d.assign(instance=[1, 1, 3, 1, 2, 3]), r"rows 1, 2, column 'instance'.*more than once"),
        (lambda d: d.assign(task=["t", "", "t", "t", "t", "t"]), r"row 2, column 'task': missing task"),
        (lambda d: d.drop(columns="usefulness"), r"no column for required role usefulness"),
    ],
)
def test_bad_input_names_file_rows_and_column(change, pattern):
    with pytest.raises(InputError, match=pattern):
        read_study(change(_base()), file="study.csv", covariates={})


def test_covariate_errors():
    base = _base().assign(level=["B1", "B1", "B1", "low", "low", "low"])
    with pytest.raises(InputError, match=r"column 'level'.*give their order"):
        read_study(base, file="s.csv", covariates={"level": None})
    changing = _base().assign(age=[20, 21, 20, 30, 30, 30])
    with pytest.raises(InputError, match=r"rows 1, 2, 3, column 'age'.*must not change"):
        read_study(changing, file="s.csv", covariates={"age": None})
    ordered = read_study(_base().assign(lvl=["hi", "hi", "hi", "lo", "lo", "lo"]), file="s.csv",
                         covariates=parse_covariates("lvl=lo<hi"))
    assert ordered.data.lvl.tolist() == [1.0] * 3 + [0.0] * 3


def test_settings_errors():
    with pytest.raises(SettingsError, match="'model' is not a condition"):
        read_study(_base(), file="s.csv", with_label="model")
    with pytest.raises(InputError, match="unknown role 'speed'"):
        read_study(_base(), {"speed": "usefulness"}, file="s.csv")
    with pytest.raises(InputError, match="column 'nope'.*not in the file"):
        read_study(_base(), {"usefulness": "nope"}, file="s.csv")


def test_guesses():
    cols = ["Condition", "Participant ID", "Task", "h", "Usefulness", "Prompt time (s)", "solve_time", "age"]
    g = guess_columns(cols)
    assert g["participant"] == "Participant ID" and g["instance"] == "h" and g["solve_time_s"] == "solve_time"
    assert g["prompt_time_s"] == "Prompt time (s)"
    assert guess_with_label(["without_model", "with_model"]) == "with_model"
    assert guess_with_label(["Human", "GPT-3"]) == "GPT-3"


# ------------------------------------------------------------------------------ real study


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
    study = read_study(df, {"condition": "system", "participant": "prompt_idx", "task": "criterion",
                            "usefulness": "mean_human_score"}, with_label="GPT-2", covariates={}, file=HANNA.name)
    table = loss_table(study)
    assert len(table) == len(sums) == 12
    for row in table.itertuples():
        values = sums[(row.task, row.condition)]
        assert round(row.mean_loss, 2) == round(sum(values) / len(values), 2)
        assert row.mean_loss == pytest.approx(sum(values) / len(values), abs=1e-12)
        assert row.n == len(values) == 96


def test_real_study_effort_medians_equal_spreadsheet_medians():
    """HANNA scores stand in for times (the repo bundles no real timed study): GPT-2 scores as the
    with-model unwrap time U_H, human-written ones as the solving time G_H. Expected medians come
    from the csv module and ``statistics.median``, as a spreadsheet's MEDIAN would."""
    import statistics

    values: dict[tuple[str, str], list[float]] = {}
    with HANNA.open(newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r["system"] in ("Human", "GPT-2"):
                values.setdefault((r["criterion"], r["system"]), []).append(float(r["mean_human_score"]))
    df = read_csv(HANNA, HANNA.name)
    df = df[df.system.isin(["Human", "GPT-2"])]
    gpt = df.system == "GPT-2"
    df = df.assign(instance="1", unwrap=df.mean_human_score.where(gpt, ""),
                   solve=df.mean_human_score.where(~gpt, ""))
    study = read_study(df, {"condition": "system", "participant": "prompt_idx", "task": "criterion",
                            "usefulness": "mean_human_score", "unwrap_time_s": "unwrap",
                            "solve_time_s": "solve"}, with_label="GPT-2", covariates={}, file=HANNA.name)
    medians, _ = effort_medians(study)
    got = medians.set_index(["task", "component"]).median_s
    assert len(got) == 12
    for (criterion, system), v in values.items():
        component = "U_H" if system == "GPT-2" else "G_H"
        assert round(got[(criterion, component)], 2) == round(statistics.median(v), 2)
        assert got[(criterion, component)] == pytest.approx(statistics.median(v), abs=1e-12)


# ------------------------------------------------------------------------------ example, CLI, plots


def test_bundled_example_is_the_scripts_output():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_cost_example", ROOT / "scripts" / "make_cost_example.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made = module.make()
    bundled = pd.read_csv(EXAMPLE)
    pd.testing.assert_frame_equal(made.reset_index(drop=True), bundled, check_dtype=False)
    assert "SYNTHETIC" in (EXAMPLE.parent / "README.md").read_text()


def _cli(argv):
    return main(["cost", *argv])


def test_cli_writes_the_four_tables(tmp_path):
    csv_path = tmp_path / "my study.csv"
    renamed = pd.read_csv(EXAMPLE).rename(columns={"usefulness": "likert_s", "condition": "arm"})
    renamed.to_csv(csv_path, index=False)
    out = tmp_path / "out"
    assert _cli(["--input", str(csv_path), "--columns", "usefulness=likert_s,condition=arm",
                 "--with-label", "with_model", "--weights", "1,0.5,1,1", "--n-max", "5", "--out", str(out)]) == 0
    loss = pd.read_csv(out / "loss_table.csv")
    assert list(loss.columns) == ["task", "condition", "mean_loss", "n", "test", "p_value", "p_holm"]
    assert list(pd.read_csv(out / "effort_medians.csv").columns) == ["task", "condition", "component", "median_s"]
    curve = pd.read_csv(out / "cost_curve.csv")
    assert list(curve.columns) == ["task", "n", "c_h", "c_hm"] and curve.n.max() == 5
    assert list(pd.read_csv(out / "spearman.csv").columns) == ["var_x", "var_y", "rho", "p_value", "n"]
    study = read_study(read_csv(EXAMPLE, "x"), file="x")
    want = analyse(study, weights=Weights(1, 0.5, 1, 1), n_max=5)
    assert loss.mean_loss.to_numpy() == pytest.approx(want.loss_table.mean_loss.to_numpy())
    assert curve.c_h.to_numpy() == pytest.approx(want.cost_curve.c_h.to_numpy())


def test_cli_bad_input_exits_2_with_the_message(tmp_path, capsys):
    assert _cli(["--input", str(tmp_path / "missing.csv"), "--out", str(tmp_path)]) == 2
    assert "no such file" in capsys.readouterr().err
    assert _cli(["--input", str(EXAMPLE), "--weights", "1,2", "--out", str(tmp_path)]) == 2
    assert "--weights" in capsys.readouterr().err


def test_figures_carry_the_tables(effort_study):
    res = analyse(effort_study, weights=Weights(0.5, 0.1, 0.2, 0.3), n_max=30)
    bars = plots.effort_bars(res.effort_medians, res.effort_tests, "gpt", "human")
    assert bars.layout.barmode == "stack"
    assert [tr.name.split()[0] for tr in bars.data] == ["D_H", "W_H", "U_H", "V_H", "G_H"]
    assert list(bars.data[0].y) == [115, 0]
    # Each task's label carries its own Holm p-value, whatever order plotly draws the categories in.
    p = res.effort_tests.set_index("task").p_holm
    assert list(bars.data[0].x[0]) == [f"{t}<br>MW p_holm = {p[t]:.2g}" for t in ("numeric", "writing")]
    assert p["numeric"] != p["writing"]
    curves = plots.cost_curves(res.cost_curve, res.cost_terms)
    star = [tr for tr in curves.data if tr.name == "break-even n"]
    assert [list(tr.x) for tr in star] == [[24], [1]]  # writing: D_H = 0, so it pays at once
    heat = plots.spearman_heatmap(res.spearman)
    assert heat.data[0].zmin == -1
    gap = plots.loss_vs_difficulty(res.difficulty)
    assert len(gap.data) == 8  # 2 tasks x 2 conditions x (line + easiest marker)


def test_figures_escape_names_from_the_file():
    rows = _rows("<b>t</b>", [3] * 6, [4] * 6, **{k: (v[0][:6] if v[0] else None, v[1][:6] if v[1] else None)
                                                  for k, v in NUMERIC.items()})
    study = _study(rows, covariates={})
    res = analyse(study)
    bars = plots.effort_bars(res.effort_medians, res.effort_tests, study.with_label, study.without_label)
    assert bars.data[0].x[0][0].startswith("&lt;b&gt;t&lt;/b&gt;<br>MW p_holm")
    gap = plots.loss_vs_difficulty(res.difficulty)
    assert gap.layout.annotations[0].text == "&lt;b&gt;t&lt;/b&gt;"
    curves = plots.cost_curves(res.cost_curve, res.cost_terms)
    assert curves.layout.annotations[0].text == "&lt;b&gt;t&lt;/b&gt;"


def test_guessed_covariates_are_participant_level():
    df = _base().assign(age=[20, 20, 20, 30, 30, 30], seconds=[1, 2, 3, 4, 5, 6])
    study = read_study(df, file="s.csv")
    assert study.covariates == ["age"]  # 'seconds' changes within a participant: not a covariate


# ------------------------------------------------------------------------------ options, display, output


def test_validation_time_taken_as_zero_when_not_measured():
    """Issue 8 item 9: without a V_H column every task said "no cost, V_H not measured"."""
    no_v = {k: v for k, v in NUMERIC.items() if k != "validate_time_s"}
    study = _study(_rows("numeric", [3] * 9, [5] * 9, **no_v), covariates={})
    plain = analyse(study, weights=Weights(0.01, 0.01, 0.01, 0.01))
    assert plain.cost_terms.setup.isna().all() and any("V_H not measured" in w for w in plain.warnings)
    zero = analyse(study, weights=Weights(0.01, 0.01, 0.01, 0.01), validation_zero=True)
    measured = _study(_rows("numeric", [3] * 9, [5] * 9, **no_v, validate_time_s=([0] * 9, None)), covariates={})
    want = analyse(measured, weights=Weights(0.01, 0.01, 0.01, 0.01))
    pd.testing.assert_frame_equal(zero.cost_terms, want.cost_terms)
    pd.testing.assert_frame_equal(zero.cost_curve, want.cost_curve)
    assert zero.cost_terms.break_even_n.notna().all()
    assert any("V_H not measured, taken as 0 s" in w for w in zero.warnings)


def test_default_weight_is_one_constant_in_code_and_help():
    from lib.cli import build_parser
    from lib.commands.cost import DEFAULT_WEIGHT as HELP_WEIGHT
    from lib.cost.costs import DEFAULT_WEIGHT

    assert DEFAULT_WEIGHT == HELP_WEIGHT == 0.01  # 100 s of effort cost as much as a useless answer
    assert Weights() == Weights(*[DEFAULT_WEIGHT] * 4) == parse_weights(None)
    sub = next(a for a in build_parser()._actions if a.dest == "command").choices["cost"]
    text = " ".join(sub.format_help().split())
    assert "default 0.01,0.01,0.01,0.01" in text and "1,1,1,1" not in text


def test_id_like_columns_are_not_guessed_as_covariates():
    df = _base().assign(age=[20] * 3 + [30] * 3, session_id=[101] * 3 + [202] * 3,
                        SessionID=["s1"] * 3 + ["s2"] * 3, respondentId=[7] * 3 + [8] * 3, paid=[1] * 3 + [0] * 3)
    assert read_study(df, file="s.csv").covariates == ["age", "paid"]


def test_readable_tables_spell_out_missing_and_infinite_values(effort_study):
    from lib.cost.display import readable

    res = analyse(effort_study, weights=Weights(1, 0, 1, 1))  # solving alone costs nothing: never pays
    shown = readable(res.cost_terms)
    assert shown.break_even_n.tolist() == ["—", "—"] and shown.n_star.tolist() == ["∞", "∞"]
    assert shown.loss_with.tolist() == res.cost_terms.loss_with.tolist()  # finite columns stay numbers
    table = pd.DataFrame({"x": [1.5, np.nan, -np.inf], "n": pd.array([1, None, 2], dtype="Int64"),
                          "p": [0.000123, np.nan, 0.5], "name": ["a", None, "c"]})
    out = readable(table, formats={"p": "{:.2e}"})
    assert out.x.tolist() == ["1.5", "—", "-∞"] and out.n.tolist() == ["1", "—", "2"]
    assert out.p.tolist() == ["1.23e-04", "—", "5.00e-01"]
    assert out.name.tolist() == ["a", "—", "c"]


def test_loss_source_errors_are_typed(effort_study):
    with pytest.raises(SettingsError, match="source must be one of self, external"):
        loss_by_difficulty(effort_study, source="median")
    with pytest.raises(SettingsError, match="external_loss"):
        loss_by_difficulty(effort_study, source="external")  # the study has no L_E column


def test_cli_validation_zero_out_checks_and_safe_csv(tmp_path, capsys):
    """Issue 9 items 2 and 7 for ``cost``: formula-like task names are neutralised in every CSV, a
    bad --out fails before the input is read, a used one needs --overwrite."""
    df = pd.read_csv(EXAMPLE).drop(columns="validate_time_s")
    df["task"] = "=" + df["task"]
    src = tmp_path / "study.csv"
    df.to_csv(src, index=False)
    out = tmp_path / "out"
    assert _cli(["--input", str(src), "--out", str(out)]) == 0
    assert pd.read_csv(out / "cost_terms.csv").setup.isna().all()
    assert "V_H not measured" in capsys.readouterr().err
    assert _cli(["--input", str(src), "--out", str(out)]) == 2
    assert "not empty" in capsys.readouterr().err
    assert _cli(["--input", str(src), "--validation-zero", "--out", str(out), "--overwrite"]) == 0
    terms = pd.read_csv(out / "cost_terms.csv")
    assert terms.setup.notna().all() and (terms.V_H == 0).all()
    for name in ("loss_table.csv", "cost_terms.csv", "cost_curve.csv", "effort_medians.csv"):
        assert pd.read_csv(out / name).task.str.startswith("'=").all(), name
    a_file = tmp_path / "taken.txt"
    a_file.write_text("x")
    assert _cli(["--input", str(tmp_path / "missing.csv"), "--out", str(a_file)]) == 2
    assert "taken.txt: --out names a file" in capsys.readouterr().err
