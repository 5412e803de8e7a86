"""What to annotate next (issue 16, item 10): a settled ranking says so instead of rows of zeros, and
each row carries the prompt text and both responses when the file has them, ready for annotators."""

from __future__ import annotations

import numpy as np
import pandas as pd

from lib.judgments.formats import VOTE_COLUMNS, Judgments
from lib.ranking.active import NEGLIGIBLE
from lib.ranking.run import annotate_next


def posterior(skills: list[float], sd: float = 0.1, draws: int = 1000, alpha=(1.0, 1.0)):
    """Skill draws N(skills, sd) of systems x, y, z and the votes likelihood's prompt parameters (a prompt
    per value of ``alpha``, its discrimination)."""
    import arviz as az

    rng = np.random.default_rng(0)
    draws_ = rng.normal(skills, sd, (draws, len(skills)))
    coords = {"system": ["x", "y", "z"], "prompt": [f"q{j}" for j in range(len(alpha))], "threshold": [1, 2]}
    return az.from_dict(
        posterior={
            "skill": draws_[None],
            "alpha": np.broadcast_to(alpha, (1, draws, len(alpha))),
            "b": np.broadcast_to([-0.5, 0.5], (1, draws, 2)),
        },
        coords=coords,
        dims={"skill": ["system"], "alpha": ["prompt"], "b": ["threshold"]},
    )


def test_a_settled_ranking_says_so_instead_of_rows_of_zeros():
    # z far above y far above x (5 sd apart): every order is the same in every draw
    batch, notes = annotate_next(posterior([0.0, 1.0, 2.0]), 20)
    assert batch is None
    assert len(notes) == 1 and "The ranking is settled" in notes[0]
    assert "no judgment is expected to change it" in notes[0]


def test_a_settled_top_turns_the_batch_to_the_rest_of_the_ranking():
    # z is best for sure; x and y below it are undecided
    batch, notes = annotate_next(posterior([0.0, 0.05, 2.0]), 5)
    assert len(notes) == 1 and "Who is best is settled" in notes[0]
    assert set(zip(batch["system_a"], batch["system_b"], strict=True)) == {("x", "y")} and (batch["score"] > 0).all()


def test_next_batch_rows_carry_the_prompt_and_both_responses():
    prompts = pd.DataFrame({"prompt_id": ["q0", "q1"], "prompt_text": ["Summarise text 0.", "Summarise text 1."]})
    responses = pd.DataFrame(
        [(p, s, f"{s}'s summary of {p}") for p in ("q0", "q1") for s in "xyz"],
        columns=["prompt_id", "system", "response"],
    )
    texts = Judgments(pd.DataFrame(columns=VOTE_COLUMNS), prompts, responses, "votes.csv")
    batch, notes = annotate_next(posterior([0.0, 0.1, 0.15]), 4, judgments=texts)
    assert notes == [] and len(batch) == 4 and (batch["score"] > 0).all()
    assert list(batch.columns) == [
        "system_a",
        "system_b",
        "prompt_id",
        "score",
        "relative_score",
        "prompt_text",
        "response_a",
        "response_b",
    ]
    for row in batch.itertuples():
        assert row.prompt_text == f"Summarise text {row.prompt_id[1:]}."
        assert row.response_a == f"{row.system_a}'s summary of {row.prompt_id}"
        assert row.response_b == f"{row.system_b}'s summary of {row.prompt_id}"
    without, _ = annotate_next(posterior([0.0, 0.1, 0.15]), 4)  # no texts: the columns the file always had
    assert list(without.columns) == ["system_a", "system_b", "prompt_id", "score", "relative_score"]


def test_scores_that_span_orders_of_magnitude_rank_and_the_negligible_rows_are_said():
    # issue 29, item 3: a pilot's batch read 0.185, 0.026 and then zeros (1e-6 to 1e-15 in the file).
    # One undecided pair (x, y) and prompt q0 fifty times as discriminating as the others:
    # every later row's expected gain is a sliver of the first's.
    batch, notes = annotate_next(posterior([0.0, 0.05, 2.0], alpha=(5.0, *[0.1] * 5)), 6)
    relative = batch["relative_score"].to_numpy()
    assert relative[0] == 1.0 and (relative > 0).all()
    np.testing.assert_allclose(relative, batch["score"] / batch["score"].iloc[0])
    negligible = relative < NEGLIGIBLE
    assert negligible[1:].all()  # the case of the pilot: only the first row matters
    said = [n for n in notes if "matter little" in n]
    assert len(said) == 1 and "Rows 2 to 6" in said[0] and f"{NEGLIGIBLE:.0%}" in said[0]


def test_a_batch_whose_rows_all_count_says_nothing_of_negligible_rows():
    batch, notes = annotate_next(posterior([0.0, 0.1, 0.15]), 4)
    assert (batch["relative_score"] >= NEGLIGIBLE).all() and not [n for n in notes if "matter little" in n]
