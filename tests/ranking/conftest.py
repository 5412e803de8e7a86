"""Fixtures of the ranking tests: simulated arena votes read as a user's file would be."""

from __future__ import annotations

import pytest

from lib.inputs import analysis_input
from lib.io.tables import read_csv
from lib.ranking.data import ranking_data

ARENA_COLUMNS = {
    "prompt": "prompt_id",
    "system_a": "system_a",
    "system_b": "system_b",
    "annotator": "annotator_id",
    "choice": "winner",
}


def arena_analysis_input(votes):
    """Simulated votes through the CSV reader and the pairwise format (:func:`lib.inputs.analysis_input`)."""
    columns = dict(ARENA_COLUMNS, **({"position": "first"} if "first" in votes else {}))
    table = read_csv(votes.to_csv(index=False).encode(), "arena.csv")
    return analysis_input(table, "pairwise", columns, file="arena.csv", merge_redundant=False)


def arena_input(votes, likelihood=None):
    """Simulated votes through the CSV reader, the pairwise format and :func:`ranking_data`."""
    return ranking_data(arena_analysis_input(votes), likelihood)


@pytest.fixture
def arena():
    """:func:`arena_input`."""
    return arena_input


@pytest.fixture
def arena_analysis():
    """:func:`arena_analysis_input`."""
    return arena_analysis_input
