"""Real browser: the HTML report opens offline from a file with every figure drawn."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lib.irt.fit import fit_grm
from lib.irt.ppc import posterior_predictive
from lib.irt.settings import FitSettings
from lib.irt.simulate import simulate_grm
from lib.irt.summary import ability_table, prompt_table
from lib.plots.diagnostics import ppc_plot, rank_plot, trace_plot
from lib.plots.irt import ability_forest
from lib.report import build_report, convergence_table
from tests.conftest import rating_matrix_from_codes

pytestmark = pytest.mark.browser

XSS = "<img src=x onerror=alert(1)><script>alert(2)</script>"


def test_the_report_opens_offline_with_every_figure_drawn(browser, tmp_path):
    rm = rating_matrix_from_codes(simulate_grm(6, 8, seed=0).codes)
    comps = rm.comparisons.copy()
    comps.loc[0, ["system_b", "comparison"]] = [XSS, f"{XSS} vs c0"]
    rm = replace(rm, comparisons=comps)
    fit = fit_grm(rm, FitSettings(chains=2, draws=50, tune=50, seed=1), use_cache=False)
    check = posterior_predictive(fit, rm, n_draws=50)
    label = f"{XSS} vs c0"
    figures = {
        "Trace": trace_plot(fit.idata, "theta", label),
        "Rank histograms": rank_plot(fit.idata, "theta", label),
        "Posterior predictive check": ppc_plot(check),
        "Posterior predictive check, one prompt": ppc_plot(check, "p3"),
        "Abilities": ability_forest(ability_table(fit, rm)),
    }
    tables = {
        "Abilities": ability_table(fit, rm),
        "Prompts": prompt_table(fit, rm),
        "Convergence": convergence_table(fit.idata),
    }
    report = tmp_path / "report.html"
    report.write_text(build_report({"source": XSS}, fit, tables, figures), encoding="utf-8")

    context = browser.new_context()
    fetched: list[str] = []  # the report must need no network: any fetch is recorded and fails
    context.route("http*://**", lambda route: (fetched.append(route.request.url), route.abort()))
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        page.goto(report.as_uri())
        drawn = page.locator(".plotly-graph-div:has(.main-svg)")
        drawn.nth(len(figures) - 1).wait_for(timeout=60_000)
        assert page.locator(".plotly-graph-div").count() == len(figures)
        assert drawn.count() == len(figures)
        assert page.locator("table").count() == len(tables) + 4  # + data, settings, diagnostics, time per phase
        assert page.get_by_text(XSS).count() >= 1  # the name shown as text
        assert not dialogs
        assert not fetched
    finally:
        context.close()
