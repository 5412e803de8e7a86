"""AppTest of the Diagnostics page: no fit, a MAP fit, and a short NUTS fit of the default data."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lib.inputs import bundled_input
from lib.irt.fit import fit_grm
from lib.irt.settings import FitSettings
from lib.judgments.datasets import DATASETS, DEFAULT_DATASET

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "diagnostics.py")


@pytest.fixture(scope="module")
def default_matrix():
    """The matrix the pages analyse by default (first criterion, redundant prompts merged)."""
    criteria = DATASETS[DEFAULT_DATASET].criteria
    return bundled_input(DEFAULT_DATASET, criteria[0] if len(criteria) > 1 else None, merge_redundant=True).matrix


@pytest.fixture(scope="module")
def nuts_fit(default_matrix):
    return fit_grm(default_matrix, FitSettings(chains=2, draws=50, tune=50), use_cache=False)


@pytest.fixture
def page(monkeypatch, tmp_path):
    """The page with an empty fit cache, run with the given session fit."""
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))

    def run(fit=None) -> AppTest:
        at = AppTest.from_file(PAGE, default_timeout=180)
        at.session_state["fit"] = fit
        return at.run()

    return run


def chart_titles(at: AppTest) -> list[str]:
    return [el.proto.spec for el in at.get("plotly_chart")]


def test_without_a_fit_the_page_says_to_fit_first(page):
    at = page()
    assert not at.exception and not at.error
    assert any("Abilities" in i.value for i in at.info)
    assert not at.get("plotly_chart")


def test_a_map_fit_is_told_diagnostics_need_nuts(page, default_matrix):
    at = page(fit_grm(default_matrix, FitSettings(sampler="map"), use_cache=False))
    assert not at.exception and not at.error
    assert any("need a NUTS fit" in i.value for i in at.info)
    assert not at.get("plotly_chart") and not at.get("download_button")


def test_a_nuts_fit_shows_figures_tables_and_the_report_download(page, nuts_fit, default_matrix):
    at = page(nuts_fit)
    # 2 x 50 draws: the failed convergence checks are errors, and the predictive check's verdict is shown.
    assert not at.exception and all(e.value.startswith("Not converged") or "misfits" in e.value for e in at.error)
    assert any(e.value.startswith("Not converged") and "bulk ESS down to" in e.value for e in at.error)
    verdicts = [m.value for m in [*at.success, *at.error] if m.value.startswith("The model ")]
    assert len(verdicts) == 1
    specs = chart_titles(at)
    energy = "energy" in nuts_fit.idata.get("sample_stats", {})
    assert len(specs) == 4 + energy
    assert "Trace: theta of" in specs[0] and "Rank histograms: theta of" in specs[1]
    assert any("Posterior predictive check, all prompts" in s for s in specs)
    assert any("Posterior predictive check, prompt" in s for s in specs)
    if not energy:  # the sampler stored no energies: said, not hidden
        assert any("energy" in c.value for c in at.caption)
    convergence, ppp = (d.value for d in at.dataframe)
    n_comp, n_prompt = default_matrix.shape
    assert len(convergence) == n_comp + n_prompt * len(default_matrix.categories)
    assert {"r_hat", "ess_bulk", "ess_tail"} <= set(convergence.columns)
    assert len(ppp) == n_prompt and ppp["p_value"].between(0, 1).all()
    assert [b.proto.label for b in at.get("download_button")] == ["report.html"]


def test_choosing_alpha_of_a_prompt_redraws_trace_and_ranks(page, nuts_fit, default_matrix):
    at = page(nuts_fit)
    at.selectbox(key="diag_var").set_value("alpha").run()
    prompt = str(default_matrix.prompt_ids[1])
    at.selectbox(key="diag_label_alpha").set_value(prompt).run()
    assert not at.exception and all(e.value.startswith("Not converged") or "misfits" in e.value for e in at.error)
    specs = chart_titles(at)
    assert f"Trace: alpha of {prompt}" in specs[0] and f"Rank histograms: alpha of {prompt}" in specs[1]
