"""Combined columns (issue 16, item 14): a prompt made of two columns (story x test), in lib, on the
command line (``--columns prompt=story_id+test``) and in the cost study reader."""

from __future__ import annotations

import contextlib
import io

import pandas as pd
import pytest

from lib.cli import main
from lib.errors import FormatError
from lib.inputs import analysis_input
from lib.io.tables import combine_columns, read_csv

# Three systems rated on 4 stories x 2 tests: the prompt is the (story, test) pair. The test scores
# differ, so reading story_id alone as the prompt would average two different tests.
STUDY = "story_id,test,system,score\n" + "".join(
    f"s{st},{t},{sy},{(st + 2 * ti + k) % 5 + 1}\n"
    for st in range(4)
    for ti, t in enumerate(("fluency_test", "origin"))
    for k, sy in enumerate(("x", "y", "z"))
)


def table():
    return read_csv(STUDY.encode(), "study.csv")


def test_combine_columns_joins_each_rows_cells_and_keeps_rows_and_blanks():
    df = pd.DataFrame(
        {"a": ["s1", "s1", "", "s2"], "b": ["t1", "t2", "t1", "t1"], "a+b": ["kept"] * 4}, index=[0, 1, 3, 4]
    )
    out = combine_columns(df, {"prompt": "a + b ", "system": "a+b"}, file="f.csv")
    assert list(out["a + b "]) == ["s1 + t1", "s1 + t2", "", "s2 + t1"]  # blank part: blank cell
    assert list(out["a+b"]) == ["kept"] * 4  # an existing column with "+" in its name is that column
    assert list(out.index) == [0, 1, 3, 4] and "a + b " not in df  # the caller's table is left alone


def test_combine_columns_refuses_unknown_parts_and_ambiguous_joins():
    df = pd.DataFrame({"a": ["x + y", "x"], "b": ["z", "y + z"]})
    with pytest.raises(FormatError, match=r"cannot combine 'a\+c': 'c' is not a column"):
        combine_columns(df, {"prompt": "a+c"}, file="f.csv")
    # ("x + y", "z") and ("x", "y + z") both give "x + y + z": two prompts would silently merge.
    with pytest.raises(FormatError, match="rows 1, 2, column 'a\\+b': different cells give the same"):
        combine_columns(df, {"prompt": "a+b"}, file="f.csv")


def test_a_combined_prompt_keeps_story_and_test_apart():
    combined = analysis_input(table(), "ratings", {"prompt": "story_id+test"}, file="study.csv", merge_redundant=False)
    assert combined.matrix.shape == (3, 8)
    assert "s0 + origin" in set(combined.matrix.prompt_ids)
    story_only = analysis_input(table(), "ratings", {"prompt": "story_id"}, file="study.csv", merge_redundant=False)
    assert story_only.matrix.shape == (3, 4)  # what the user could do before: tests averaged


def test_the_command_line_combines_columns(tmp_path):
    path = tmp_path / "study.csv"
    path.write_text(STUDY)
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(
            [
                "fit",
                "--input",
                str(path),
                "--format",
                "ratings",
                "--columns",
                "prompt=story_id+test",
                "--sampler",
                "map",
                "--no-merge",
                "--out",
                str(tmp_path / "out"),
            ]
        )
    assert code == 0
    prompts = pd.read_csv(tmp_path / "out" / "prompts.csv", dtype=str)
    assert len(prompts) == 8 and "s3 + fluency_test" in set(prompts["prompt_id"])


def test_the_cost_reader_combines_columns():
    from lib.cost.schema import read_study

    rows = ["condition,participant,session,task,usefulness,prompt_time_s,unwrap_time_s,solve_time_s"]
    rows += [
        f"{c},p{p},{k},t1,3,{'5,5,' if c == 'with' else ',,9'}"
        for c in ("with", "without")
        for p in (1, 2)
        for k in (1, 2)
    ]
    study = read_study(
        read_csv("\n".join(rows).encode(), "study.csv"),
        {"instance": "session", "participant": "participant+condition"},
        file="study.csv",
    )
    assert study.data["participant"].nunique() == 4 and "p1 + with" in set(study.data["participant"])
