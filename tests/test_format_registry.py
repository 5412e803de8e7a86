"""Adding a judgment format is one registry entry: a throw-away "winner_only" format (prompt,
winner, loser columns -> pairwise votes) works through analysis_input, the command line and the
Data page, then is removed."""

from __future__ import annotations

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from lib.cli import main
from lib.errors import FormatError, SettingsError
from lib.inputs import analysis_input
from lib.io.paths import ROOT
from lib.io.tables import read_csv, row_numbers, text
from lib.judgments.formats import (
    DEFAULT_CRITERION,
    FORMATS,
    FormatSpec,
    Judgments,
    format_spec,
    register,
    resolve_columns,
)

APP = str(ROOT / "app.py")

# Three systems on six prompts, two raters: z beats y beats x, except rater r2 on prompts p4, p5.
ROWS = [
    (f"p{p}", *(pair if not (r == "r2" and p >= 4) else pair[::-1]), r)
    for p in range(6)
    for r in ("r1", "r2")
    for pair in (("z", "y"), ("z", "x"), ("y", "x"))
]
WINS = "prompt,winner,loser,rater\n" + "".join(",".join(row) + "\n" for row in ROWS)


def read_winner_only(df: pd.DataFrame, columns: dict[str, str] | None = None, *, file: str) -> Judgments:
    """One vote per row: the winner (system_a) beat the loser (system_b)."""
    mapping = resolve_columns(df, "winner_only", columns, file=file)
    cells = {role: text(df[col]) for role, col in mapping.items()}
    same = cells["winner"] == cells["loser"]
    if same.any():
        raise FormatError("a system cannot beat itself", file=file, rows=row_numbers(df)[same], column=mapping["loser"])
    votes = pd.DataFrame(
        {
            "prompt_id": cells["prompt"],
            "system_a": cells["winner"],
            "system_b": cells["loser"],
            "annotator_id": cells["annotator"],
            "winner": "a",
            "criterion": DEFAULT_CRITERION,
        },
        dtype=str,
    )
    empty = pd.DataFrame(columns=["prompt_id", "prompt_text"], dtype=str)
    return Judgments(votes, empty, pd.DataFrame(columns=["prompt_id", "system", "response"], dtype=str), file)


@pytest.fixture
def winner_only():
    before = dict(FORMATS)
    spec = register(
        FormatSpec(
            "winner_only",
            "who won and who lost",
            required=("prompt", "winner", "loser", "annotator"),
            optional=(),
            not_blank=("prompt", "winner", "loser", "annotator"),
            read=read_winner_only,
            synonyms={"winner": ("won",), "loser": ("lost",)},
        )
    )
    yield spec
    FORMATS.clear()
    FORMATS.update(before)


def test_a_registered_format_reads_through_analysis_input(winner_only):
    data = analysis_input(read_csv(WINS.encode(), "wins.csv"), "winner_only", file="wins.csv", merge_redundant=False)
    assert data.fmt == "winner_only" and len(data.judgments.votes) == len(ROWS)
    assert list(data.matrix.comparisons["comparison"]) == ["y vs x", "z vs x", "z vs y"]
    # theta > 0 means B is better: both raters agree on p0-p3 (net +2), disagree on p4, p5 (0).
    assert (data.matrix.u[:, :4] == 2).all() and (data.matrix.u[:, 4:] == 0).all()
    with pytest.raises(FormatError, match="cannot beat itself") as info:
        analysis_input(read_csv(WINS.replace("p5,x,y", "p5,x,x").encode(), "wins.csv"), "winner_only", file="wins.csv")
    assert info.value.rows == [36] and info.value.column == "loser"


def test_a_registered_format_fits_through_the_command_line(winner_only, tmp_path, monkeypatch):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "wins.csv").write_text(WINS)
    code = main(
        [
            "fit",
            "--input",
            str(tmp_path / "wins.csv"),
            "--format",
            "winner_only",
            "--no-merge",
            "--sampler",
            "map",
            "--seed",
            "0",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 0
    abilities = pd.read_csv(tmp_path / "out" / "abilities.csv")
    assert list(abilities["comparison"]) == ["y vs x", "z vs x", "z vs y"]
    assert (abilities["theta_mean"] > 0).all()  # B, the later name, won every pair on balance


def test_a_registered_format_is_offered_and_guessed_on_the_data_page(winner_only, tmp_path, monkeypatch):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.radio(key="dataset").set_value("upload").run()
    at.file_uploader(key="data_upload").set_value(
        ("wins.csv", WINS.replace("winner,loser", "won,lost").encode(), "text/csv")
    ).run()
    assert not at.exception and not at.error
    assert "winner_only" in at.selectbox(key="up_format").options
    assert at.selectbox(key="up_format").value == "winner_only"
    assert at.selectbox(key="up_winner_only_role_loser").value == "lost"
    assert at.session_state["analysis_input"].fmt == "winner_only"
    assert {m.label: m.value for m in at.metric}["votes"] == str(len(ROWS))


def test_the_registry_is_restored_and_refuses_unknown_or_repeated_formats(winner_only):
    with pytest.raises(SettingsError, match="already registered"):
        register(winner_only)
    with pytest.raises(SettingsError, match="needs a matrix builder"):
        register(FormatSpec("scores", "no votes", ("prompt",), (), (), read_winner_only, votes=False))
    with pytest.raises(SettingsError, match=r"unknown format 'triples'; choose one of pairwise, .*winner_only"):
        format_spec("triples")


def test_only_the_bundled_formats_remain_after_a_test():
    assert list(FORMATS) == ["pairwise", "bestworst", "ranking", "responses", "ratings"]
    with pytest.raises(SystemExit):
        main(["fit", "--input", "x.csv", "--format", "winner_only", "--out", "o"])
