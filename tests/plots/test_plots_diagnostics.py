"""Diagnostics figures: trace, rank histograms, energy with BFMI, posterior predictive bars."""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest

from lib.errors import SettingsError
from lib.irt.fit import fit_grm
from lib.irt.ppc import replicate
from lib.irt.settings import FitSettings
from lib.irt.simulate import simulate_grm
from lib.plots.diagnostics import energy_plot, parameter_draws, ppc_plot, rank_plot, trace_plot

COMPARISONS = ["B vs A", "<b>C</b> vs A"]
PROMPTS = ["p1", "p2", "p3"]


def posterior(chains: int = 3, draws: int = 200, stuck_shift: float = 0.0) -> az.InferenceData:
    """Independent normal draws shaped as a NUTS fit; chain 0 of theta shifted by stuck_shift."""
    rng = np.random.default_rng(0)
    theta = rng.normal(size=(chains, draws, 2))
    theta[0] += stuck_shift
    return az.from_dict(
        posterior={
            "theta": theta,
            "alpha": np.exp(rng.normal(0, 0.3, (chains, draws, 3))),
            "b": np.sort(rng.normal(size=(chains, draws, 3, 2)), axis=-1),
        },
        sample_stats={
            "energy": rng.normal(50, 3, (chains, draws)) + np.arange(chains)[:, None],
            "diverging": np.zeros((chains, draws), bool),
        },
        coords={"comparison": COMPARISONS, "prompt": PROMPTS, "threshold": [1, 2]},
        dims={"theta": ["comparison"], "alpha": ["prompt"], "b": ["prompt", "threshold"]},
    )


def test_trace_has_one_line_per_chain_with_the_draws():
    idata = posterior()
    fig = trace_plot(idata, "alpha", "p2")
    assert len(fig.data) == 3
    expected = idata.posterior["alpha"].sel(prompt="p2").to_numpy()
    for chain, trace in zip(expected, fig.data, strict=True):
        assert np.allclose(trace.y, chain)
    assert "alpha of p2" in fig.layout.title.text


def test_rank_histograms_are_flat_for_mixed_chains_and_skewed_for_a_stuck_one():
    draws = 200
    bins = int(np.ceil(2 * np.log2(draws)) + 1)  # arviz's default for plot_rank
    mixed = rank_plot(posterior(draws=draws), "theta", "B vs A")
    counts = np.array([bar.y for bar in mixed.data])
    assert counts.shape == (3, bins) and (counts.sum(axis=1) == draws).all()
    # Uniform ranks: each bin count is about Binomial(draws, 1 / bins); allow 4 SDs.
    expected = draws / bins
    assert np.abs(counts - expected).max() < 4 * np.sqrt(expected * (1 - 1 / bins))
    stuck = rank_plot(posterior(draws=draws, stuck_shift=3.0), "theta", "B vs A")
    chain0 = np.asarray(stuck.data[0].y)
    assert chain0[: bins // 2].sum() < 0.05 * draws  # the shifted chain holds the top ranks


def test_energy_plot_shows_both_distributions_and_arviz_bfmi():
    idata = posterior()
    fig = energy_plot(idata)
    assert [t.name for t in fig.data] == ["marginal energy", "energy transition"]
    assert len(fig.data[0].x) == 3 * 200 and len(fig.data[1].x) == 3 * 199
    assert abs(np.mean(fig.data[0].x)) < 1e-9
    for value in az.bfmi(idata):
        assert f"{value:.2f}" in fig.layout.title.text


def test_ppc_bars_show_observed_counts_and_replicated_intervals():
    sim = simulate_grm(10, 3, seed=1)
    rep = [np.repeat(x[None], 50, axis=0) for x in (sim.theta, sim.alpha, sim.b)]
    check = replicate(sim.codes, np.arange(-3, 4), *rep, prompt_ids=np.array(["p1", "<i>p2", "p3"]))
    overall = ppc_plot(check)
    bars, markers = overall.data
    assert list(bars.x) == [str(c) for c in range(-3, 4)]
    assert np.array_equal(bars.y, check.observed.sum(axis=0))
    table = check.overall()
    assert np.allclose(np.asarray(markers.y) - np.asarray(markers.error_y.arrayminus), table["replicated_low"])
    one = ppc_plot(check, "<i>p2")
    assert np.array_equal(one.data[0].y, check.observed[1])
    assert "&lt;i&gt;p2" in one.layout.title.text and "<i>" not in one.layout.title.text
    assert f"p = {check.p_value[1]:.2f}" in one.layout.title.text


def test_user_labels_are_escaped_in_titles():
    fig = rank_plot(posterior(), "theta", "<b>C</b> vs A")
    assert "&lt;b&gt;C&lt;/b&gt; vs A" in fig.layout.title.text


def test_unknown_parameter_or_label_is_a_settings_error():
    idata = posterior()
    with pytest.raises(SettingsError, match="unknown parameter 'b'"):
        parameter_draws(idata, "b", "p1")
    with pytest.raises(SettingsError, match="unknown prompt 'p9'"):
        trace_plot(idata, "alpha", "p9")


def test_a_fit_without_energies_has_no_energy_plot():
    idata = posterior()
    del idata.sample_stats["energy"]
    with pytest.raises(SettingsError, match="did not record the NUTS energy"):
        energy_plot(idata)


def test_a_map_fit_has_no_draws_to_diagnose(codes_to_matrix):
    rm = codes_to_matrix(simulate_grm(6, 8, seed=0).codes)
    idata = fit_grm(rm, FitSettings(sampler="map"), use_cache=False).idata
    for make in (
        lambda: trace_plot(idata, "theta", "c0"),
        lambda: rank_plot(idata, "alpha", "p0"),
        lambda: energy_plot(idata),
    ):
        with pytest.raises(SettingsError, match="NUTS"):
            make()
