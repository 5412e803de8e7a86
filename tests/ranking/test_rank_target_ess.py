"""``rank --target-ess`` (issue 19 item 3): the rule of ``--draws`` and ``--target-ess`` as ``fit`` takes it,
for the sampler the fit runs (numpyro chosen, or the NUTS a Laplace fit falls back to), and a NUTS fit
that stops at the target and says so."""

from __future__ import annotations

import json

import pytest

import lib.cli
import lib.ranking.run
from lib.inference.settings import TARGET_CEILING, TARGET_CHUNK, TARGET_ESS, TARGET_TUNE
from lib.ranking.fit import RankSettings
from lib.ranking.simulate import simulate_arena

COLUMNS = "prompt=prompt_id,system_a=system_a,system_b=system_b,annotator=annotator_id,choice=winner"


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def votes_args(tmp_path):
    """``rank`` on 300 simulated votes of 5 systems on 30 prompts (``--out`` not yet given)."""
    path = tmp_path / "votes.csv"
    simulate_arena(5, 30, 300, seed=3)[0].to_csv(path, index=False)
    return ["rank", "--input", str(path), "--format", "pairwise", "--columns", COLUMNS]


class Asked(Exception):
    """Raised in place of the fit, holding the settings it was asked for."""


@pytest.fixture
def asked(monkeypatch):
    """Replaces the fit by one that raises :class:`Asked` with its settings."""

    def rank_systems(data, settings, **kwargs):
        raise Asked(settings)

    monkeypatch.setattr(lib.ranking.run, "rank_systems", rank_systems)


@pytest.mark.parametrize(
    ("options", "sampler", "draws", "tune", "target"),
    [
        # numpyro with neither: the default target, its warm-up, the default ceiling
        (["--sampler", "numpyro"], "numpyro", TARGET_CEILING, TARGET_TUNE["ranking"], TARGET_ESS),
        (["--sampler", "numpyro", "--draws", "200"], "numpyro", 200, RankSettings.tune, None),  # exactly these
        (["--sampler", "numpyro", "--draws", "200", "--target-ess", "50"], "numpyro", 200, TARGET_TUNE["ranking"], 50),
        (["--sampler", "numpyro", "--target-ess", "50", "--tune", "80"], "numpyro", TARGET_CEILING, 80, 50),
        # the default Laplace fit falls back to NUTS for intransitivity: that NUTS samples to the target
        (["--intransitivity"], "laplace", TARGET_CEILING, TARGET_TUNE["ranking"], TARGET_ESS),
        ([], "laplace", RankSettings.draws, RankSettings.tune, None),  # Laplace itself: draws as before
        (["--sampler", "pymc", "--draws", "300"], "pymc", 300, RankSettings.tune, None),
    ],
)
def test_draws_and_target_follow_the_sampler_the_fit_runs(
    votes_args, asked, tmp_path, options, sampler, draws, tune, target
):
    with pytest.raises(Asked) as caught:
        lib.cli.main([*votes_args, *options, "--out", str(tmp_path / "out")])
    settings = caught.value.args[0]
    assert (settings.sampler, settings.draws, settings.tune, settings.target_ess) == (sampler, draws, tune, target)


@pytest.mark.parametrize("options", [["--target-ess", "50"], ["--sampler", "pymc", "--target-ess", "50"]])
def test_a_target_for_a_sampler_that_cannot_take_it_is_refused_before_anything_is_written(
    votes_args, asked, tmp_path, capsys, options
):
    out = tmp_path / "out"
    assert lib.cli.main([*votes_args, *options, "--out", str(out)]) == 2
    assert "does not sample to a target ESS: use numpyro" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("seed", [0, 1])
def test_numpyro_samples_to_the_target_and_says_so(votes_args, tmp_path, capsys, monkeypatch, seed):
    """Seed 0: chains started at the joint mode's alpha spread sigma_alpha stayed apart through warm-up
    (R-hat 2.2); they start at PyMC's jittered initial point, with no search for a mode first. The diagnostics
    read the stopping rule's last check of the final draws (``Draws.stats``) instead of computing it again."""
    import lib.inference.convergence as convergence

    checked = []
    compute = convergence.chain_stats
    monkeypatch.setattr(convergence, "chain_stats", lambda x: checked.append(x.shape) or compute(x))
    out = tmp_path / "out"
    options = ["--sampler", "numpyro", "--target-ess", "100", "--chains", "2", "--draws", "800", "--tune", "200"]
    code = lib.cli.main([*votes_args, *options, "--seed", str(seed), "--out", str(out)])
    diag = json.loads((out / "diagnostics.json").read_text())
    assert code == (0 if diag["converged"] else lib.cli.EXIT_NOT_CONVERGED)
    assert (diag["sampler"], diag["target_ess"], diag["stopped"]) == ("numpyro", 100, "target")
    assert checked == []  # the convergence check computed nothing: the sampler's last check was handed over
    assert min(diag["ess_bulk_min"], diag["ess_tail_min"]) >= 100 and diag["rhat_max"] <= 1.01
    assert diag["draws"] <= 800 and diag["draws"] % TARGET_CHUNK == 0
    # the target (100) is below the convergence rule's ESS: converged unless an ESS falls short of that
    assert diag["converged"] or min(diag["ess_bulk_min"], diag["ess_tail_min"]) < TARGET_ESS
    assert {"warm-up", "sampling"} <= set(diag["timings"]) and "optimise" not in diag["timings"]
    printed = capsys.readouterr().out
    assert "] sampling: ESS " in printed  # the progress follows the ESS
    assert f"sampled to the target ESS 100: {diag['draws']} draws per chain, target reached" in printed
