"""Bundled data sets: every one loads with the counts its README states, texts attached."""

from __future__ import annotations

import pytest

from lib.errors import SettingsError
from lib.io.tables import guess_roles
from lib.judgments.datasets import DATA_DIR, DATASETS, DEFAULT_DATASET, load_judgments, load_table
from lib.judgments.formats import FORMATS, read_ratings, read_responses


def test_registry():
    assert DEFAULT_DATASET == "lamp_rankings"
    assert set(DATASETS) == {
        "lamp_rankings",
        "rome_bestworst",
        "pandalm_pairwise",
        "hanna_means",
        "science_mirt",
        "lsat7",
    }
    for key, ds in DATASETS.items():
        assert ds.key == key and ds.fmt in FORMATS and ds.path.is_file()
        spec = FORMATS[ds.fmt]
        assert set(spec.required) <= set(ds.columns) <= set(spec.roles)
        assert (ds.path.parent / "LICENSE").is_file() or (ds.path.parent / "DESCRIPTION").is_file()
        assert ds.licence and ds.citation and ds.title and ds.description
    assert (DATA_DIR / "README.md").is_file()


@pytest.mark.parametrize("key", list(DATASETS))
def test_guesses_match_the_registry(key):
    ds = DATASETS[key]
    guess = guess_roles(list(load_table(key).columns), FORMATS[ds.fmt].column_roles)
    # LAMP's trial column (instruction_id) has no name a guess could rely on.
    expected = {r: c for r, c in ds.columns.items() if not (key == "lamp_rankings" and r == "trial")}
    assert {r: guess.get(r) for r in expected} == expected


@pytest.mark.parametrize(
    ("key", "n_votes", "n_prompts", "systems", "n_annotators", "criteria"),
    [
        ("lamp_rankings", 1809, 200, {"AI-generated", "AI-edited", "Human-edited"}, 13, {"overall"}),
        ("rome_bestworst", 960, 60, {"ROME", "FT_L", "GPT-2 XL"}, 16, {"consistency", "fluency"}),
        (
            "pandalm_pairwise",
            2997,
            999,
            {"llama-7b", "bloom-7b", "cerebras-gpt-6.7B", "opt-7b", "pythia-6.9b"},
            3,
            {"overall"},
        ),
    ],
)
def test_judgment_datasets_load(key, n_votes, n_prompts, systems, n_annotators, criteria):
    j = load_judgments(key)
    v = j.votes
    assert len(v) == n_votes
    assert v.prompt_id.nunique() == n_prompts
    assert set(v.system_a) | set(v.system_b) == systems
    assert v.annotator_id.nunique() == n_annotators
    assert set(v.criterion) == criteria == set(DATASETS[key].criteria)
    assert set(v.winner) <= {"a", "b", "tie"}
    # Every prompt has its text and every shown system its response.
    assert set(v.prompt_id) == set(j.prompt_texts.prompt_id)
    shown = set(zip(v.prompt_id, v.system_a, strict=True)) | set(zip(v.prompt_id, v.system_b, strict=True))
    assert shown == set(zip(j.responses.prompt_id, j.responses.system, strict=True))
    assert (j.prompt_texts.prompt_text.str.strip() != "").all()
    # PandaLM's models left some answers empty; those stay, as empty responses.
    assert (j.responses.response.str.strip() == "").sum() == (54 if key == "pandalm_pairwise" else 0)


def test_lamp_trials_are_rankings_of_three():
    v = load_judgments("lamp_rankings").votes
    # 603 rankings x 3 pairs; no ties in a strict 1..3 ranking.
    assert len(v) == 3 * 603 and "tie" not in set(v.winner)


def test_rome_trials_are_best_worst_of_three():
    v = load_judgments("rome_bestworst").votes
    # 320 trials (16 participants x 10 pages x 2 criteria) x 3 pairs, 160 per criterion.
    assert v.groupby("criterion").size().to_dict() == {"consistency": 480, "fluency": 480}
    assert "tie" not in set(v.winner)


def test_pandalm_winners_match_the_file():
    v = load_judgments("pandalm_pairwise").votes
    raw = load_table("pandalm_pairwise")
    assert v.winner.value_counts().to_dict() == raw.choice.str.lower().value_counts().to_dict()


def test_hanna_ratings():
    ds = DATASETS["hanna_means"]
    r = read_ratings(load_table("hanna_means"), ds.columns, file="hanna")
    assert len(r) == 6336 == 11 * 96 * 6
    assert r.system.nunique() == 11 and r.prompt_id.nunique() == 96
    assert set(r.criterion) == set(ds.criteria)
    assert r.score.between(1, 5).all()


@pytest.mark.parametrize(
    ("key", "persons", "items", "scores"), [("science_mirt", 392, 4, {1, 2, 3, 4}), ("lsat7", 1000, 5, {0, 1})]
)
def test_irt_reference_responses(key, persons, items, scores):
    r = read_responses(load_table(key), DATASETS[key].columns, file=key)
    assert r.person.nunique() == persons and r.item.nunique() == items
    assert len(r) <= persons * items and set(r.score) == scores


def test_errors_for_unknown_key_and_non_judgment_data():
    with pytest.raises(SettingsError, match="unknown data set 'nope'"):
        load_judgments("nope")
    with pytest.raises(SettingsError, match="ratings data, not pairwise judgments"):
        load_judgments("hanna_means")


@pytest.mark.parametrize("key", list(DATASETS))
def test_format_is_guessed_from_the_columns(key):
    from lib.judgments.formats import guess_format

    assert guess_format(list(load_table(key).columns)) == DATASETS[key].fmt


def test_bundled_judges_are_a_field_of_their_data_set():
    """The Judges page's demo comes from the data set's own entry: a judge file whose verdicts are on the data
    set's items (every prompt a prompt of the human votes); uploads and data sets without one have none."""
    from lib.io.tables import read_csv
    from lib.judges.read import read_judge_file
    from lib.judgments.datasets import bundled_judges
    from ui.common import UPLOAD

    with_judges = [key for key, ds in DATASETS.items() if ds.judges is not None]
    assert with_judges == ["pandalm_pairwise"]
    for key in with_judges:
        path = bundled_judges(key)
        assert path == DATASETS[key].judges and path.is_file()
        verdicts = read_judge_file(read_csv(path, path.name), file=path.name).verdicts
        assert set(verdicts["prompt_id"]) <= set(load_judgments(key).votes["prompt_id"])
    assert bundled_judges("rome_bestworst") is None and bundled_judges(UPLOAD) is None
