"""Annotator severity in the ratings likelihood: per-annotator scores reach the model, a confounded
design biases the skills without the effect and not with it, the read-out, and the refusals.

MAP + Laplace without the severities, short NUTS chains with them (Laplace falls back to NUTS there:
:func:`lib.ranking.fit.nuts_reason`).
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.special import expit
from scipy.stats import binom

from lib.errors import SettingsError
from lib.inputs import analysis_input
from lib.io.tables import read_csv
from lib.ranking.data import ranking_data
from lib.ranking.fit import LAPLACE, RankSettings, fit_ranking
from lib.ranking.leaderboard import annotator_severity
from lib.ranking.model import build_ranking, observations
from lib.ranking.simulate import simulate_arena, simulate_ratings

COLUMNS = {"prompt": "prompt_id", "system": "system", "annotator": "annotator_id", "score": "score"}


def ratings_input(scores, columns=COLUMNS):
    """Simulated scores through the CSV reader and the ratings format, as a user's file."""
    table = read_csv(scores.to_csv(index=False).encode(), "scores.csv")
    return analysis_input(table, "ratings", columns, file="scores.csv", merge_redundant=False)


def evaluate(model, names, seed=0):
    rng = np.random.default_rng(seed)
    point = {k: v + rng.normal(0, 0.5, v.shape) for k, v in model.initial_point().items()}
    outs = model.replace_rvs_by_values([model[n] for n in names])
    fn = model.compile_fn(outs, inputs=model.value_vars, point_fn=True, on_unused_input="ignore")
    return [np.asarray(v) for v in fn(point)]


@pytest.fixture(scope="module")
def confounded():
    """Severe annotators rate mostly the best systems: mean scores understate the gaps."""
    scores, truth = simulate_ratings(8, 30, 30, raters_per_cell=2, severity_sd=1.0, confounding=1.0, seed=11)
    return ratings_input(scores), scores, truth


def test_scores_reach_the_model_one_per_annotator(confounded):
    data, scores, truth = confounded
    rd = ranking_data(data)
    assert len(rd.ratings) == len(scores)  # not averaged over annotators
    assert rd.n_votes.sum() == len(scores)  # scores received
    assert_allclose(rd.n_votes.to_numpy(), scores["system"].value_counts().reindex(rd.systems).to_numpy())
    obs = observations(rd)
    assert obs.annotators == truth["annotators"]
    assert np.array_equal(np.asarray(obs.annotators)[obs.annotator], rd.ratings["annotator_id"].to_numpy(str))
    assert obs.categories == ["1", "2", "3", "4", "5"]  # integer scores, not means such as 3.667


def test_loglik_subtracts_the_severity(confounded):
    obs = observations(ranking_data(confounded[0]))
    model = build_ranking(obs, annotator_effect=True)
    loglik, skill, alpha, b, eta, zeta = evaluate(model, ["loglik", "skill", "alpha", "b", "eta", "zeta"])
    loc = skill[obs.system_b] + eta[obs.prompt] - zeta[obs.annotator]
    at_least = expit(alpha[obs.prompt][:, None] * (loc[:, None] - b[None, :]))
    cum = np.column_stack([np.ones(len(loc)), at_least, np.zeros(len(loc))])
    p = cum[np.arange(len(loc)), obs.code] - cum[np.arange(len(loc)), obs.code + 1]
    assert_allclose(loglik, np.log(p).sum(), rtol=1e-10)
    assert list(model.coords["annotator"]) == obs.annotators


@pytest.fixture(scope="module")
def fits(confounded, tmp_path_factory):
    """Fits of the confounded design without (Laplace) and with annotator severity (NUTS, 2 x 300),
    fitted on first use (each test stays short), on a fresh fit cache."""
    rd, done = ranking_data(confounded[0]), {}

    def fit(flag: bool):
        if flag not in done:
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("EVAL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
                settings = (
                    RankSettings(sampler="numpyro", chains=2, draws=300, tune=300, annotator_effect=True)
                    if flag
                    else RankSettings(sampler=LAPLACE, draws=1000, annotator_effect=False)
                )
                done[flag] = fit_ranking(rd, settings)
        return done[flag]

    return fit


def rms_error(fit, truth):
    return np.sqrt(np.mean((fit.skill_draws().mean(axis=0) - truth["skill"]) ** 2))


@pytest.mark.validation
def test_without_severity_the_confounded_design_biases_the_skills(confounded, fits):
    _, scores, truth = confounded
    # A system's skill absorbs minus the mean severity of those who rated it: the bias the design plants.
    rater = truth["severity"][scores["annotator_id"].str[1:].astype(int)]
    planted = scores.assign(zeta=rater).groupby("system")["zeta"].mean().reindex(truth["systems"]).to_numpy()
    planted = planted - planted.mean()
    assert rms_error(fits(False), truth) > 0.5 * np.sqrt(np.mean(planted**2))
    skill = fits(False).skill_draws().mean(axis=0)
    best, worst = np.argmax(truth["skill"]), np.argmin(truth["skill"])
    assert skill[best] - skill[worst] < 0.5 * (truth["skill"][best] - truth["skill"][worst])  # the lead shrinks
    assert annotator_severity(fits(False).idata) is None


@pytest.mark.validation
def test_with_severity_the_skills_and_severities_are_recovered(confounded, fits):
    data, scores, truth = confounded
    fit = fits(True)
    skill = fit.skill_draws().mean(axis=0)
    assert np.corrcoef(skill, truth["skill"])[0, 1] > 0.9
    assert rms_error(fit, truth) < 0.5 * rms_error(fits(False), truth)
    # 90% intervals of the severities cover the truth at a binomial rate (truth centred, as the prior)
    scale, table = annotator_severity(fit.idata, ranking_data(data).ratings["annotator_id"].value_counts(), level=0.9)
    table = table.set_index("annotator_id").loc[truth["annotators"]]
    inside = (table["severity_low"] <= truth["severity"]) & (truth["severity"] <= table["severity_high"])
    low, high = binom.interval(0.99, len(table), 0.9)
    assert low <= inside.sum() <= high
    assert table["n_scores"].sum() == len(scores)
    assert scale["parameter"].tolist() == ["sigma_zeta"] and scale["low"].iloc[0] > 0.5  # severities detected


def test_severity_table_lists_the_most_severe_first(confounded, fits):
    _, table = annotator_severity(fits(True).idata)
    assert list(table.columns) == ["annotator_id", "severity_mean", "severity_low", "severity_high", "n_scores"]
    assert table["severity_mean"].is_monotonic_decreasing
    assert (table["severity_low"] < table["severity_mean"]).all()
    assert (table["severity_mean"] < table["severity_high"]).all()
    assert (table["n_scores"] == 0).all()  # no counts given


def test_the_posterior_has_the_annotator_variables(confounded, fits):
    post = fits(True).idata.posterior  # the coordinates come from the model, whichever the sampler
    assert post["zeta"].dims == ("chain", "draw", "annotator")
    assert list(post["annotator"].values) == confounded[2]["annotators"]
    assert post["sigma_zeta"].dims == ("chain", "draw") and (post["sigma_zeta"] > 0).all()


def test_annotator_effect_is_refused_where_it_cannot_be_estimated(arena):
    with pytest.raises(SettingsError, match="ratings likelihood"):
        build_ranking(observations(arena(simulate_arena(3, 5, 60, seed=1)[0])), annotator_effect=True)
    with pytest.raises(SettingsError, match="ratings likelihood"):
        RankSettings(likelihood="cells", annotator_effect=True).validate()
    scores, _ = simulate_ratings(3, 6, 4, raters_per_cell=1, seed=2)
    no_column = ratings_input(
        scores.drop(columns="annotator_id"), {k: v for k, v in COLUMNS.items() if k != "annotator"}
    )
    with pytest.raises(SettingsError, match="at least two annotators"):
        build_ranking(observations(ranking_data(no_column)), annotator_effect=True)
    one = ratings_input(scores.assign(annotator_id="r000").drop_duplicates(["prompt_id", "system"]))
    with pytest.raises(SettingsError, match="at least two annotators"):
        build_ranking(observations(ranking_data(one)), annotator_effect=True)
