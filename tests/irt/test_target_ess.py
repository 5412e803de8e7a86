"""Sampling to a target ESS (issue 19 item 3): the rule of --draws and --target-ess, and the stop rule on
stand-in chunks: once the target is met, or at the ceiling, saying which (a real fit sampled to the target:
the mirt Science fit at the command's defaults, tests/irt/test_irt_fit.py)."""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest
from scipy.stats import norm

from lib.errors import SettingsError
from lib.inference.progress import Tracker
from lib.inference.settings import TARGET_CEILING, TARGET_CHUNK, TARGET_ESS, TARGET_TUNE, sampling_sizes
from lib.irt.settings import FitSettings


def test_draws_alone_are_a_fixed_count_and_nothing_given_samples_to_the_default_target():
    assert sampling_sizes("grm", "numpyro", draws=None, tune=None, target_ess=None) == {
        "draws": TARGET_CEILING,
        "tune": TARGET_TUNE["grm"],
        "target_ess": TARGET_ESS,
    }
    assert sampling_sizes("grm", "numpyro", draws=None, tune=None, target_ess=80)["draws"] == TARGET_CEILING
    assert sampling_sizes("grm", "numpyro", draws=200, tune=None, target_ess=None) == {"draws": 200, "target_ess": None}
    assert sampling_sizes("grm", "numpyro", draws=200, tune=50, target_ess=80) == {
        "draws": 200,
        "tune": 50,
        "target_ess": 80,
    }
    assert sampling_sizes("grm", "pymc", draws=None, tune=None, target_ess=None) == {"target_ess": None}
    with pytest.raises(SettingsError, match="does not sample to a target ESS: use numpyro"):
        sampling_sizes("grm", "pymc", draws=None, tune=None, target_ess=400)


def test_a_target_below_one_is_refused():
    with pytest.raises(SettingsError, match="target ESS"):
        FitSettings(target_ess=0).validate()


def fake_chunks(chains: int, offset: float = 0.0):
    """A stand-in for the compiled NUTS chunk: 3 parameters whose draws are the N(0, 1) quantiles of a
    chunk in random order, the even ranks in its first half and the odd in its second (halves and chains
    alike: R-hat about 1; the first chain shifted by ``offset``: chains that disagree), and the iteration's
    number as its energy (to see which iterations are kept)."""
    rng = np.random.default_rng(0)
    grid = norm.ppf((np.arange(TARGET_CHUNK) + 0.5) / TARGET_CHUNK)

    def order():
        return np.concatenate([rng.permutation(np.arange(k, TARGET_CHUNK, 2)) for k in (0, 1)])

    def step(i):
        iterations = np.broadcast_to(np.arange(i, i + TARGET_CHUNK), (chains, TARGET_CHUNK))
        z = np.stack([np.stack([grid[order()] for _ in range(3)], axis=-1) for _ in range(chains)])
        z[0] += offset
        return i + TARGET_CHUNK, ([z], np.zeros((chains, TARGET_CHUNK), bool), iterations)

    def to_array(pieces):
        return np.concatenate([p[0][0] for p in pieces], axis=1)

    def to_idata(pieces):
        return az.from_dict(
            posterior={"x": to_array(pieces)},
            sample_stats={k: np.concatenate([p[1][k] for p in pieces], axis=1) for k in ("diverging", "energy")},
        )

    return step, to_idata, to_array


@pytest.mark.parametrize(
    ("tune", "target", "offset", "draws", "stopped", "kept"),
    [
        # out of reach: the ceiling, the last chunk cut to it; iterations 100-149 of the first chunk drawn
        # here are warm-up too (the warm-up ran one whole chunk, 0-99)
        (150, 100_000, 0.0, 120, "ceiling", 120),
        (100, 30, 0.0, 400, "target", 100),  # 2 chains x 100 draws: ESS about 200, R-hat about 1
        (100, 30, 1.0, 400, "ceiling", 400),  # ESS enough but the chains disagree (R-hat above 1.01)
    ],
)
def test_chunks_drop_the_warm_up_and_stop_at_the_target_or_the_ceiling(tune, target, offset, draws, stopped, kept):
    from lib.inference.samplers import _draw_to_target, _kept_chunks

    step, to_idata, to_array = fake_chunks(2, offset)
    settings = FitSettings(chains=2, tune=tune, draws=draws, target_ess=target)
    events = []
    tracker = Tracker(1, 0.0)
    tracker.stage = lambda fraction, message: events.append((fraction, message))
    chunks = _kept_chunks(step, TARGET_CHUNK, TARGET_CHUNK, TARGET_CHUNK, settings)  # warm-up ran one chunk
    idata = _draw_to_target(chunks, to_idata, to_array, settings, tracker).idata
    assert (idata.posterior.attrs["target_ess"], idata.posterior.attrs["stopped"]) == (target, stopped)
    energy = idata.sample_stats["energy"].to_numpy()
    assert energy.shape == (2, kept) and (energy[0] == np.arange(tune, tune + kept)).all()
    assert [f for f, _ in events] == sorted(f for f, _ in events) and "ESS" in events[-1][1]


@pytest.mark.parametrize(("shift", "stopped", "sizes"), [(0.0, "target", "nwn"), (1.0, "ceiling", "nwnwww")])
def test_checks_between_chunks_look_at_the_slowest_parameters_and_all_before_stopping(
    monkeypatch, shift, stopped, sizes
):
    """A check after every chunk; each after the first looks at the WATCHED parameters furthest from the target
    at the last check of all; all are checked before sampling stops at the target, and one of the others
    falling short (its first chain moved off by ``shift`` after the first chunk) keeps it going (before: 2
    chunks between the checks after 200 draws, as R-hat projected). The last check is handed on to the
    diagnostics when it was of all of them on the final draws, and nothing when it was of the watched."""
    import lib.inference.chain_stats as stats_module
    from lib.inference.chain_stats import chain_stats
    from lib.inference.samplers import WATCHED, _draw_to_target, _kept_chunks

    # fake_chunks' 3 parameters tiled 101 times; the last column is the last of its equals: unwatched at first
    n = 3 * WATCHED + 3
    step, to_idata, _ = fake_chunks(2)

    def to_array(pieces):
        x = np.concatenate([np.tile(p[0][0], (1, 1, n // 3)) for p in pieces], axis=1)
        x[0, TARGET_CHUNK:, n - 1] += shift
        return x

    looked = []
    compute = stats_module.chain_stats
    monkeypatch.setattr(stats_module, "chain_stats", lambda x: looked.append(x) or compute(x))
    settings = FitSettings(
        chains=2, tune=100, draws=500, target_ess=300
    )  # ESS about 170 after 100 draws, 320 after 200
    chunks = _kept_chunks(step, TARGET_CHUNK, TARGET_CHUNK, TARGET_CHUNK, settings)
    draws = _draw_to_target(chunks, to_idata, to_array, settings, Tracker(1, 0.0))
    assert draws.idata.posterior.attrs["stopped"] == stopped
    assert [x.shape[2] for x in looked] == [{"n": n, "w": WATCHED}[k] for k in sizes]
    if sizes[-1] == "n":  # the numbers of the final draws, of every parameter
        assert draws.stats is not None and draws.stats.rhat.shape == (n,)
        assert looked[-1].shape[1] == draws.idata.posterior.sizes["draw"]
        np.testing.assert_array_equal(draws.stats.ess_bulk, chain_stats(looked[-1]).ess_bulk)
    else:  # the watched ones' numbers only: the diagnostics compute all
        assert draws.stats is None


def test_the_slowest_parameters_are_those_needing_most_draws():
    from lib.inference.chain_stats import ChainStats
    from lib.inference.samplers import slowest

    stats = ChainStats(
        rhat=np.array([1.0, 1.05, 1.0, np.nan, 1.0]),
        ess_bulk=np.array([500.0, 500.0, 50.0, np.nan, 300.0]),
        ess_tail=np.array([500.0, 500.0, 500.0, np.nan, 100.0]),
    )
    # needs: 0.8, 5 (R-hat), 8 (bulk ESS), undefined, 4 (tail ESS)
    assert slowest(stats, 400, 3).tolist() == [2, 1, 4]
    assert slowest(stats, 400, 10).tolist() == [2, 1, 4, 0, 3]
