"""A likelihood is one :class:`lib.ranking.likelihoods.Likelihood` entry (issue 32 item 3): each entry says
what its observations are, and a new one, registered alone, is read, checked, modelled and refused from its
entry (fast: no fitting)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from lib.errors import SettingsError
from lib.inputs import bundled_input
from lib.ranking.data import annotator_design_of, ranking_data
from lib.ranking.fit import RankSettings
from lib.ranking.likelihoods import LIKELIHOODS, default_likelihood, of_unit
from lib.ranking.model import build_ranking, observations
from lib.ranking.simulate import simulate_arena

INPUTS = {"votes": ("pandalm_pairwise", None), "scores": ("hanna_means", "Relevance")}
"""A bundled input of each kind of judgments a likelihood reads."""


@pytest.mark.parametrize("name", list(LIKELIHOODS))
def test_each_entry_says_what_its_observations_are(name):
    spec = LIKELIHOODS[name]
    for kind in spec.reads:
        rd = ranking_data(bundled_input(*INPUTS[kind]), name)
        obs = observations(rd)
        assert obs.unit == spec.unit and obs.likelihood is spec and of_unit(spec.unit) is spec
        assert bool((obs.system_a >= 0).all()) == spec.paired  # the data's own pairing, not the entry's word
        assert (rd.matrix is not None) == spec.matrix
        one_a_vote = rd.votes is not None and len(obs.code) == len(rd.votes)
        assert one_a_vote == spec.per_vote
        assert spec.size(rd)[:2] == (len(obs.code), len(obs.prompts))


def test_each_kind_of_judgments_has_one_default():
    for kind, has_votes in (("votes", True), ("scores", False)):
        assert [s.name for s in LIKELIHOODS.values() if kind in s.default_for] == [default_likelihood(has_votes).name]


def test_a_new_likelihood_is_one_entry(monkeypatch, arena):
    """A likelihood no code of lib/ranking names (votes read as votes, but not one observation per vote):
    its entry alone decides what ranking_data reads, what the model builds and which options are refused."""
    toy = dataclasses.replace(
        LIKELIHOODS["votes"], name="toy", unit="toy", default_for=(), per_vote=False, notes=("a toy",)
    )
    monkeypatch.setitem(LIKELIHOODS, "toy", toy)
    votes, _ = simulate_arena(4, 6, 200, seed=2)
    rd, as_votes = arena(votes, "toy"), arena(votes, "votes")
    assert rd.likelihood == "toy" and rd.spec is toy
    obs, vote_obs = observations(rd), observations(as_votes)
    assert obs.likelihood is toy and obs.paired
    np.testing.assert_array_equal(obs.code, vote_obs.code)
    model = build_ranking(obs)
    point = model.initial_point()
    assert "sigma_alpha" in build_ranking(vote_obs).named_vars
    assert "b" in model.named_vars and "sigma_alpha" not in model.named_vars  # not per vote: no arena spread
    assert np.isfinite(model.compile_logp()(point))
    with pytest.raises(SettingsError, match="style control"):
        RankSettings(likelihood="toy", style_control=True).validate()
    with pytest.raises(SettingsError, match="annotator severity"):
        RankSettings(likelihood="toy", annotator_effect=True).validate()
    hanna = bundled_input("hanna_means", "Relevance")
    with pytest.raises(SettingsError, match="the votes likelihood needs pairwise votes"):
        ranking_data(hanna, "toy")  # reads votes only: its refusal
    assert not annotator_design_of(hanna, "toy").identified
