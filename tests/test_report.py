"""The HTML report and the convergence table, from a short NUTS fit and a MAP fit."""

from __future__ import annotations

import html
from dataclasses import replace

import arviz as az
import pytest

from lib.errors import SettingsError
from lib.inputs import AnalysisInput
from lib.irt.fit import fit_grm
from lib.irt.ppc import posterior_predictive
from lib.irt.settings import FitSettings
from lib.irt.simulate import simulate_grm
from lib.irt.summary import ability_table, prompt_table
from lib.plots.diagnostics import ppc_plot, rank_plot, trace_plot
from lib.plots.irt import ability_forest
from lib.report import GLOSSARY, build_report, convergence_table, data_summary
from tests.conftest import rating_matrix_from_codes

XSS = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def rm():
    """6 comparisons x 8 prompts of GRM data; one system is named like a script."""
    rm = rating_matrix_from_codes(simulate_grm(6, 8, seed=0).codes)
    comps = rm.comparisons.copy()
    comps.loc[0, ["system_a", "system_b", "comparison"]] = ["A", XSS, f"{XSS} vs A"]
    return replace(rm, comparisons=comps)


@pytest.fixture(scope="module")
def nuts_fit(rm):
    return fit_grm(rm, FitSettings(chains=2, draws=50, tune=50, seed=1), use_cache=False)


def report_parts(rm, fit):
    check = posterior_predictive(fit, rm, n_draws=50)
    label = rm.comparisons["comparison"][0]
    figures = {
        f"Trace of theta, {label}": trace_plot(fit.idata, "theta", label),
        "Rank histograms": rank_plot(fit.idata, "theta", label),
        "Posterior predictive check": ppc_plot(check),
        "Posterior predictive check, one prompt": ppc_plot(check, "p0"),
        "Abilities": ability_forest(ability_table(fit, rm)),
    }
    tables = {
        "Abilities": ability_table(fit, rm),
        "Prompts": prompt_table(fit, rm),
        "Convergence": convergence_table(fit.idata),
        "Posterior predictive p-values": check.prompt_table(),
    }
    return figures, tables


def test_convergence_table_has_every_parameter_from_arviz(nuts_fit, rm):
    table = convergence_table(nuts_fit.idata)
    n_comp, n_prompt = rm.shape
    assert len(table) == n_comp + n_prompt + n_prompt * 6
    assert table["parameter"].value_counts().to_dict() == {"b": 48, "alpha": 8, "theta": 6}
    assert table["r_hat"].is_monotonic_decreasing
    row = table[(table["parameter"] == "theta") & (table["label"] == f"{XSS} vs A")].iloc[0]
    theta = nuts_fit.idata.posterior["theta"].sel(comparison=f"{XSS} vs A").to_numpy()  # (chain, draw)
    assert row["r_hat"] == pytest.approx(float(az.rhat(theta)), abs=1e-9)
    assert row["ess_bulk"] == pytest.approx(float(az.ess(theta, method="bulk")), rel=1e-3)
    b_rows = table[table["parameter"] == "b"]
    assert b_rows["threshold"].notna().all()
    assert table.loc[table["parameter"] != "b", "threshold"].isna().all()


def test_report_holds_every_figure_and_table_with_user_text_escaped(nuts_fit, rm):
    figures, tables = report_parts(rm, nuts_fit)
    summary = data_summary(AnalysisInput(rm, "pairwise", f"votes {XSS}.csv", None))
    text = build_report(summary, nuts_fit, tables, figures)
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert text.count('class="plotly-graph-div"') == len(figures)
    for n in range(len(figures)):
        assert f'id="figure-{n}"' in text
    assert text.count("* plotly.js v") == 1  # the library embedded once, inline
    assert 'src="http' not in text  # nothing to fetch: opens offline
    for title in tables:
        assert f"<h3>{html.escape(title)}</h3>" in text
    assert text.count("<table") == len(tables) + 4  # + data, settings, diagnostics and time per phase
    for column in ("theta_mean", "alpha_mean", "r_hat", "p_value"):
        assert f"<th>{column}</th>" in text
    for warning in nuts_fit.diagnostics.warnings:
        assert html.escape(warning) in text
    assert "numpyro" in text and "rhat_max" in text  # settings and diagnostics
    assert f"<td>{nuts_fit.diagnostics.rhat_max:.4g}</td>" in text
    for term in GLOSSARY:
        assert f"<dt>{html.escape(term)}</dt>" in text
    assert XSS not in text
    assert html.escape(XSS) in text  # in the data summary and the tables, as text


def test_report_of_a_map_fit_without_figures_has_no_script(rm):
    fit = fit_grm(rm, FitSettings(sampler="map"), use_cache=False)
    text = build_report({"source": "x.csv"}, fit, {"Abilities": ability_table(fit, rm)}, {})
    assert "<script" not in text
    assert "MAP point" in text and "<h3>Abilities</h3>" in text
    with pytest.raises(SettingsError, match="NUTS"):
        convergence_table(fit.idata)


def test_data_summary_describes_the_input(rm):
    summary = data_summary(AnalysisInput(rm, "pairwise", "votes.csv", None))
    assert summary["source"] == "votes.csv" and summary["criterion"] == "(one criterion)"
    assert summary["comparisons (or persons)"] == 6 and summary["prompts (or items)"] == 8
    assert summary["rated cells"] == 48 and summary["votes"] == 48
    assert summary["net ratings"] == "-3 to 3"
