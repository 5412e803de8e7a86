"""The HTML report reads well (issue 16, item 19): chains in distinct colours also when built in the
app's process, long lists of parameters counted with the names collapsed, and the leaderboard added."""

from __future__ import annotations

import html
import re
from dataclasses import replace

import arviz as az
import numpy as np
import plotly.io as pio
import pytest

from lib.inputs import analysis_input
from lib.io.tables import read_csv
from lib.irt.fit import fit_grm
from lib.irt.settings import FitSettings
from lib.irt.simulate import simulate_grm
from lib.irt.summary import ability_table
from lib.plots.diagnostics import trace_plot
from lib.ranking.fit import LAPLACE, RankSettings
from lib.ranking.run import rank_systems
from lib.report import build_report
from tests.conftest import rating_matrix_from_codes


@pytest.fixture(scope="module")
def rm():
    return rating_matrix_from_codes(simulate_grm(4, 6, seed=0).codes)


@pytest.fixture(scope="module")
def map_fit(rm):
    return fit_grm(rm, FitSettings(sampler="map"), use_cache=False)


@pytest.fixture
def streamlit_template():
    """The default template as the app's process has it: importing Streamlit registers its "streamlit"
    plotly template and makes it the default."""
    import streamlit  # noqa: F401

    previous = pio.templates.default
    pio.templates.default = "streamlit"
    yield pio.templates["streamlit"].layout.colorway
    pio.templates.default = previous


def test_chains_have_distinct_colours_in_a_report_built_in_the_apps_process(map_fit, streamlit_template):
    draws = np.random.default_rng(0).normal(size=(2, 20, 1))  # 2 chains x 20 draws of one theta
    idata = az.from_dict(posterior={"theta": draws}, coords={"comparison": ["B vs A"]}, dims={"theta": ["comparison"]})
    figure = trace_plot(idata, "theta", "B vs A")
    text = build_report({"source": "x.csv"}, map_fit, {}, {"Trace": figure})
    assert streamlit_template[0] == "#000001"  # Streamlit's placeholders: near-black outside its front end
    assert not any(colour in text for colour in streamlit_template)
    colorway = pio.templates["plotly_white"].layout.colorway
    assert colorway[0] in text and colorway[1] in text and len(set(colorway[:2])) == 2
    assert figure.layout.template.layout.colorway == streamlit_template  # the page's figure is left alone


def test_a_long_list_of_parameters_is_counted_per_variable_and_collapsed(rm, map_fit):
    names = (
        [f"theta[c{i}]" for i in range(2)]
        + [f"alpha[p{i}]" for i in range(8)]
        + [f"b[p{i},{k}]" for i in range(4) for k in range(5)]
    )
    fit = replace(map_fit, diagnostics=replace(map_fit.diagnostics, prior_dominated=names, n_prior_dominated=30))
    text = build_report({"source": "x.csv"}, fit, {}, {})
    assert "30: 2 theta, 8 alpha, 20 b<details><summary>list them</summary>theta[c0], theta[c1]," in text
    assert "<td>theta[c0], theta[c1], alpha" not in text  # no longer one block of names in the cell


def test_the_leaderboard_is_in_the_report_when_there_is_one(rm, map_fit):
    votes = "prompt,system_a,system_b,annotator,choice\n" + "".join(
        f"p{p},{a},{b},r{r},{'AB'[(p + r + (a == 'x')) % 3 == 0]}\n"
        for p in range(6)
        for r in range(2)
        for a, b in (("x", "y"), ("x", "z"), ("y", "z"))
    )
    data = analysis_input(read_csv(votes.encode(), "votes.csv"), "pairwise", file="votes.csv")
    result = rank_systems(data, RankSettings(sampler=LAPLACE, draws=200, seed=0))
    tables = {"Abilities": ability_table(map_fit, rm)}
    without = build_report({"source": "votes.csv"}, map_fit, tables, {})
    text = build_report({"source": "votes.csv"}, map_fit, tables, {}, ranking=result)
    assert "<h2>Leaderboard</h2>" not in without and "<h2>Leaderboard</h2>" in text
    assert text.count('class="plotly-graph-div"') == 1 and "figure-0" in text  # the skill forest
    for system in result.leaderboard["system"]:
        assert f"<td>{system}</td>" in text
    assert "<td>laplace</td>" in text
    assert f"<th>method</th><td>{html.escape(result.fit.route)}</td>" in text and result.fit.route  # alpha_j's route


def test_the_time_per_phase_is_a_table_of_phases_and_seconds(map_fit):
    timings = {"checks": 0.0123456, "compile": 1.98765, "optimise": 21.6789}
    fit = replace(map_fit, diagnostics=replace(map_fit.diagnostics, timings=timings))
    text = build_report({"source": "x.csv"}, fit, {}, {})
    assert "1.98765" not in text and "&#x27;compile&#x27;" not in text  # not a Python dict
    section = text.split("<h3>Time per phase</h3>")[1].split("</table>")[0]
    rows = re.findall(r"<tr>\s*<td>([^<]*)</td>\s*<td>([^<]*)</td>", section)
    assert rows == [("checks", "0.01235"), ("compile", "1.988"), ("optimise", "21.68"), ("total", "23.68")]
    assert "<th>phase</th>" in section and "<th>seconds</th>" in section
