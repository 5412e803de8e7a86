"""The memory of a leaderboard's diagnostics (issue 31, item 12): ``rank --sampler laplace`` on 10,000
systems estimated "about 3 min and 4.9 GB", then grew past 10 GiB in "computing diagnostics".

The diagnostic that grew was the check whether votes are clustered by prompt
(:func:`lib.ranking.clusters.prompt_clustering`): about twelve (K, K) float64 arrays (0.8 GB each for
10,000 systems) and three eigendecompositions, counted in no estimate. It now needs no (K, K) array when
the draws are not moved (``--cluster-prompts off``; about eight when they are, the default), the estimate
counts it, and a check that would take
the leaderboard past ``--max-memory`` or ``--max-minutes`` is left out with a warning. Measured here with
tracemalloc at a moderate size; the command's decision at a small one.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import lib.cli
from lib.ranking import clusters
from lib.ranking.budget import CLUSTER_CHECK, estimate_cost
from lib.ranking.clusters import cluster_scores, prompt_clustering

LIMIT_S = 120


def observations(k: int, n: int, n_prompts: int, seed: int = 0) -> SimpleNamespace:
    """Votes (A / tie / B) of random pairs of k systems on random prompts, as ``lib.ranking.model.Observations``."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    return SimpleNamespace(
        system_a=a, system_b=b, prompt=rng.integers(0, n_prompts, n), code=rng.integers(0, 3, n),
        side=np.zeros(n), pair=np.zeros(n, int), weight=None,
    )


def means(n_prompts: int) -> dict[str, np.ndarray]:
    return {"alpha": np.exp(np.random.default_rng(1).normal(0, 0.3, n_prompts)), "b": np.array([-0.5, 0.5])}


def test_the_check_stays_within_its_estimated_memory():
    k, draws, n_prompts = 1_000, 300, 80
    obs, skill = observations(k, 20 * k, n_prompts), np.random.default_rng(2).normal(size=(draws, k))
    tracemalloc.start()
    try:
        result = prompt_clustering(skill, obs, means(n_prompts), 1.0, transform=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    part = estimate_cost(k, n_prompts, len(obs.code), sampler="laplace", draws=draws, cluster_prompts=n_prompts)
    bound = part.parts[CLUSTER_CHECK] * 1024**3 + draws * k * 8  # and one centred copy of the draws
    assert peak <= bound, f"{peak / (8 * k * k):.1f} (K, K) arrays"  # before: 12 (K, K) arrays, 96 MB here
    assert np.isfinite(result.design_effect) and result.skill_draws is skill


def test_the_check_is_the_dense_sandwich():
    """The computation through the draws against the definition (Müller 2013, eq. 6, with the model's
    information replaced by the prompt-clustered one: ``V = Sigma P Sigma + Sigma G_c Sigma``) with every
    (K, K) matrix formed."""
    k, draws, n_prompts = 30, 500, 24
    obs, skill = observations(k, 600, n_prompts, seed=3), np.random.default_rng(4).normal(size=(draws, k))
    m = means(n_prompts)
    got = prompt_clustering(skill, obs, m, 1.0, transform=True)
    plain = prompt_clustering(skill, obs, m, 1.0, transform=False)
    # the scores d_v of the votes at the means, as the module computes them
    loc = skill.mean(0)[obs.system_b] - skill.mean(0)[obs.system_a]
    alpha = m["alpha"][obs.prompt]
    upper = 1 / (1 + np.exp(-alpha[:, None] * (loc[:, None] - m["b"])))
    cum = np.column_stack([np.ones(len(loc)), upper, np.zeros(len(loc))])
    lo, hi = cum[np.arange(len(loc)), obs.code], cum[np.arange(len(loc)), obs.code + 1]
    d = alpha * (lo * (1 - lo) - hi * (1 - hi)) / (lo - hi)
    g_cluster = cluster_scores(obs.system_b, obs.system_a, d, obs.prompt, k)
    sigma = np.cov(skill, rowvar=False)
    adjusted = sigma @ sigma + sigma @ g_cluster @ sigma  # prior SD 1
    expected = np.mean(np.diag(adjusted) / np.diag(sigma))
    assert got.design_effect == pytest.approx(expected, rel=1e-9) and plain.design_effect == got.design_effect
    # the moved draws keep the posterior mean, and have covariance V once their Student-t mixing is undone:
    # draws = mean + y t - c with y = centred draws times T (mean 0) and c = mean(y t), so u = (draws - mean) / t
    # = y - c / t, and mean(y) = 0 gives c = -mean(u) / mean(1 / t)
    np.testing.assert_allclose(got.skill_draws.mean(0), skill.mean(0), atol=1e-12)
    inverse = 1 / clusters.t_mixing(n_prompts, draws)
    u = (got.skill_draws - skill.mean(0)) * inverse[:, None]
    moved = u - np.outer(inverse, u.mean(0) / inverse.mean())
    np.testing.assert_allclose(np.cov(moved, rowvar=False), adjusted, rtol=1e-7, atol=1e-10)


def votes_csv(path, k: int = 24, n_prompts: int = 30) -> None:
    rng = np.random.default_rng(5)
    skill = rng.normal(size=k)
    rows = []
    for p in range(n_prompts):
        for a in range(k):
            b = (a + 1 + p % (k - 1)) % k
            win = rng.random() < 1 / (1 + np.exp(skill[a] - skill[b]))
            rows.append({"prompt": f"q{p}", "system_a": f"s{a:02d}", "system_b": f"s{b:02d}", "annotator": f"r{a}",
                         "choice": "B" if win else "A"})
    pd.DataFrame(rows).to_csv(path, index=False)


def rank(path, out, *extra: str) -> tuple[int, str, str]:
    import contextlib
    import io

    stdout, stderr = io.StringIO(), io.StringIO()
    began = time.perf_counter()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = lib.cli.main(["rank", "--input", str(path), "--format", "pairwise", "--sampler", "laplace",
                             "--out", str(out), *extra])
    assert time.perf_counter() - began < LIMIT_S
    return code, stdout.getvalue(), stderr.getvalue()


def test_a_check_past_the_memory_limit_is_left_out_with_a_warning(tmp_path, monkeypatch):
    """``--max-memory`` between the estimate without the check and with it: the leaderboard is made, the
    check is not run (it would fail the test), and the warning says what and how to have it."""
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    votes_csv(tmp_path / "votes.csv")
    from lib.inputs import analysis_input
    from lib.ranking.data import ranking_data
    from lib.ranking.fit import RankSettings
    from lib.ranking.run import ranking_cost
    from lib.io.tables import read_csv

    rd = ranking_data(analysis_input(read_csv(tmp_path / "votes.csv", "votes.csv"), "pairwise", None, file="votes.csv"))
    full = ranking_cost(rd, RankSettings())  # what the command estimates with its defaults
    lean = ranking_cost(rd, RankSettings(), cluster_check=False)
    assert CLUSTER_CHECK in full.parts and full.memory_gb > lean.memory_gb
    limit = (full.memory_gb + lean.memory_gb) / 2

    def refuse(*args, **kwargs):
        raise AssertionError("the prompt-clustering check ran past the memory limit")

    monkeypatch.setattr(clusters, "prompt_clustering", refuse)
    code, stdout, stderr = rank(tmp_path / "votes.csv", tmp_path / "lean", "--max-memory", repr(limit))
    assert code == 0 and (tmp_path / "lean" / "leaderboard.csv").exists()
    said = "warning: Not checked whether votes on the same prompt are dependent (prompt clustering): the check needs"
    assert said in stderr and "24 x 24 matrices of 24 systems" in stderr and "--max-memory" in stderr
    warnings = json.loads((tmp_path / "lean" / "diagnostics.json").read_text())["warnings"]
    assert any(w.startswith("Not checked whether votes on the same prompt") for w in warnings)
    assert f"estimated: {lean}" in stdout  # the estimate of what runs
