"""lib.plots.cost: the figures carry the tables and escape names from the file."""

from __future__ import annotations

from cost_studies import NUMERIC, make_study, task_rows

from lib.cost.analysis import analyse
from lib.cost.costs import Weights
from lib.plots import cost as plots


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
    rows = task_rows(
        "<b>t</b>",
        [3] * 6,
        [4] * 6,
        **{k: (v[0][:6] if v[0] else None, v[1][:6] if v[1] else None) for k, v in NUMERIC.items()},
    )
    study = make_study(rows, covariates={})
    res = analyse(study)
    bars = plots.effort_bars(res.effort_medians, res.effort_tests, study.with_label, study.without_label)
    assert bars.data[0].x[0][0].startswith("&lt;b&gt;t&lt;/b&gt;<br>MW p_holm")
    gap = plots.loss_vs_difficulty(res.difficulty)
    assert gap.layout.annotations[0].text == "&lt;b&gt;t&lt;/b&gt;"
    curves = plots.cost_curves(res.cost_curve, res.cost_terms)
    assert curves.layout.annotations[0].text == "&lt;b&gt;t&lt;/b&gt;"
