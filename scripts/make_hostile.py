"""Write the hostile-input corpus ``tests/hostile/`` and its ``manifest.csv`` (issue 9, "Done when").

Every file is small and made deterministically (``numpy.random.default_rng(SEED)``), so rerunning
the script gives byte-identical files. Each manifest row is one run of a command on one file with the
outcome the issue asks for: ``ok`` (exit 0, the documented outputs, formula cells neutralised) or
``error`` (exit 2, a message naming the file and, where ``contains`` says so, the row or column;
nothing written). The outcomes are what the software SHOULD do, not what it does on the day.

Usage::

    python scripts/make_hostile.py            # (re)write tests/hostile/
    python scripts/make_hostile.py --table    # also run every case and print the Markdown table of outcomes
"""

from __future__ import annotations

import argparse
import codecs
import csv
import io
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "hostile"
SEED = 20240509
MANIFEST_COLUMNS = ["file", "command", "args", "out", "expect", "contains", "why"]
FORMULAS = ("=cmd|' /C calc'!A0", "+1", "@SUM(1)", "-2+3", '=HYPERLINK("http://e","x")')
MARKUP = ("<script>alert(1)</script>", "**bold** _it_", "![x](http://127.0.0.1:9/x.png)", "$\\frac{1}{2}$")

rng = np.random.default_rng(SEED)
files: dict[str, bytes] = {}
cases: list[dict[str, str]] = []


def table(header: list[str], rows: list[list[object]], *, sep: str = ",", end: str = "") -> str:
    """CSV text (``\\n`` line ends); ``end`` is appended to every line (a trailing comma)."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=sep, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return "".join(line + end + "\n" for line in buf.getvalue().splitlines())


def add(name: str, content: str | bytes, *runs: tuple[str, str, str, str, str]) -> None:
    """Store a file and its runs: (command + args, out, expect, contains, why)."""
    assert name not in files, name
    files[name] = content.encode("utf-8") if isinstance(content, str) else content
    for command_args, out, expect, contains, why in runs:
        command, _, args = command_args.partition(" ")
        cases.append(
            {
                "file": name,
                "command": command,
                "args": args,
                "out": out,
                "expect": expect,
                "contains": contains,
                "why": why,
            }
        )


def ok(command_args: str, why: str, out: str = "fresh") -> tuple[str, str, str, str, str]:
    return command_args, out, "ok", "", why


def error(command_args: str, contains: str, why: str, out: str = "fresh") -> tuple[str, str, str, str, str]:
    return command_args, out, "error", contains, why


# ------------------------------------------------------------------------------------ valid data

SYSTEMS = ["alpha", "beta", "gamma"]
QUALITY = {"alpha": 0.0, "beta": 0.8, "gamma": 1.6}
PW_HEADER = ["prompt", "system_a", "system_b", "annotator", "choice"]


def pairwise_rows(systems: list[str] = SYSTEMS, prompts: int = 8, annotators: int = 3) -> list[list[object]]:
    """Votes of every annotator on every pair and prompt: B wins with the logistic of the quality gap."""
    rows = []
    for p in range(prompts):
        for i, a in enumerate(systems):
            for b in systems[i + 1 :]:
                gap = QUALITY[b] - QUALITY[a]
                for r in range(annotators):
                    u = rng.random()
                    p_b = 1 / (1 + np.exp(-gap - 0.3 * (p % 3 - 1)))
                    choice = "tie" if abs(u - p_b) < 0.1 else ("B" if u < p_b else "A")
                    rows.append([f"p{p}", a, b, f"r{r}", choice])
    return rows


PW = pairwise_rows()
PW_TEXT = table(PW_HEADER, PW)
FIT = "fit --format pairwise"

RT_SYSTEMS = ["s1", "s2", "s3", "s4", "s5"]
RT_HEADER = ["prompt", "system", "score"]
RT = [
    [f"q{p}", s, int(np.clip(round(1 + k * 0.8 + rng.normal(0, 0.9) + (p % 4) * 0.3), 1, 5))]
    for p in range(12)
    for k, s in enumerate(RT_SYSTEMS)
]
SELECT = "select --format ratings"

BW_HEADER = ["prompt", "annotator", "system", "judgment"]


def bestworst_rows(prompts: int = 8) -> list[list[object]]:
    rows = []
    systems = ["alpha", "beta", "gamma", "delta"]
    for p in range(prompts):
        for r in range(2):
            order = sorted(systems, key=lambda s: -(systems.index(s) + rng.normal(0, 1.2)))
            marks = {order[0]: "most", order[-1]: "least"}
            rows += [[f"p{p}", f"r{r}", s, marks.get(s, "")] for s in systems]
    return rows


BW = bestworst_rows()

RK_HEADER = ["prompt", "annotator", "system", "rank"]


def ranking_rows(prompts: int = 8, rank: Callable[[int], object] = lambda k: k + 1) -> list[list[object]]:
    rows = []
    systems = ["alpha", "beta", "gamma", "delta"]
    for p in range(prompts):
        for r in range(2):
            order = sorted(systems, key=lambda s: -(systems.index(s) + rng.normal(0, 1.2)))
            rows += [[f"p{p}", f"r{r}", s, rank(order.index(s))] for s in systems]
    return rows


RK = ranking_rows()

RS_HEADER = ["person", "item", "score"]
RS = [
    [f"u{i}", f"i{j}", int(np.clip(round(ability + rng.normal(0, 0.8) + j * 0.2 - 0.5), 0, 2))]
    for i, ability in enumerate(np.linspace(-1, 2, 30))
    for j in range(6)
]

ST_HEADER = [
    "condition",
    "participant",
    "task",
    "instance",
    "usefulness",
    "prompt_time_s",
    "unwrap_time_s",
    "validate_time_s",
    "solve_time_s",
]


def study_rows(participant: Callable[[str, int], str] = lambda c, i: f"{c.split('_')[0]}{i:02d}") -> list[list[object]]:
    rows = []
    for condition in ("with_model", "without_model"):
        for i in range(6):
            for task in ("numeric", "writing"):
                for h in (1, 2, 3):
                    s = int(rng.integers(1, 6))
                    if condition == "with_model":
                        times = [
                            round(rng.uniform(20, 90), 1),
                            round(rng.uniform(2, 20), 1),
                            round(rng.uniform(2, 20), 1),
                            "",
                        ]
                    else:
                        times = ["", "", "", round(rng.uniform(40, 200), 1)]
                    rows.append([condition, participant(condition, i), task, h, s, *times])
    return rows


ST = study_rows()
COST = "cost"

DR_HEADER = ["text_id", "system", "draft", "reference"]
SENTENCES = [
    "The cat sat on the mat.",
    "It was a quiet evening in the old town.",
    "Rain fell softly against the window.",
    "She opened the letter with trembling hands.",
]


def drafts_rows(systems: tuple[str, ...] = ("gpt", "llama"), texts: int = 3) -> list[list[object]]:
    rows = []
    for t in range(texts):
        for s in systems:
            draft = " ".join(SENTENCES[(t + k) % 4] for k in range(3))
            reference = draft.replace("quiet", "calm").replace("softly", "gently").replace("sat", "slept")
            rows.append([f"t{t}", s, draft, reference + (" The end." if s == "llama" else "")])
    return rows


DR = drafts_rows()
REVISE = "revise --engine diff --reference-column reference"

EDIT_FIELDS = [
    "action_name",
    "revision_description",
    "revision_level",
    "revision_intention",
    "original_snippet",
    "revised_snippet",
]
EDIT = {
    "text_id": "t0",
    "system": "gpt",
    "action_name": "replace",
    "revision_description": "calmer word",
    "revision_level": "word",
    "revision_intention": "Word choice",
    "original_snippet": "quiet",
    "revised_snippet": "calm",
}


def with_cell(rows: list[list[object]], row: int, col: int, value: object) -> list[list[object]]:
    """A copy of ``rows`` with one cell replaced (``row`` is the 0-based data row)."""
    out = [list(r) for r in rows]
    out[row][col] = value
    return out


def _pairwise_files() -> None:
    """Pairwise votes: the file as bytes, its layout, its cells."""
    add(
        "empty.csv",
        b"",
        error(FIT, "empty", "0 bytes"),
        error(COST, "empty", "0 bytes"),
        error(REVISE, "empty", "0 bytes"),
    )
    add("whitespace_only.csv", " \n\n\t\n", error(FIT, "empty", "blank lines only"))
    add("pairwise_header_only.csv", table(PW_HEADER, []), error(FIT, "no data rows", "header, no rows"))
    add(
        "pairwise_valid.csv",
        PW_TEXT,
        ok(FIT, "valid: the exit-0 path"),
        error(FIT, "not empty", "--out already holds a file of someone else", out="nonempty"),
        ok(FIT + " --overwrite", "--overwrite keeps a stranger's file and writes", out="nonempty"),
        error(FIT, "--out", "--out names an existing file", out="file"),
    )
    add("pairwise_bom.csv", codecs.BOM_UTF8 + PW_TEXT.encode(), ok(FIT, "UTF-8 byte-order mark"))
    add("pairwise_utf16.csv", PW_TEXT.encode("utf-16"), ok(FIT, "UTF-16 with BOM (Excel 'Unicode text')"))
    add("pairwise_crlf.csv", PW_TEXT.replace("\n", "\r\n"), ok(FIT, "Windows line ends"))
    latin = table(PW_HEADER, with_cell(PW, 4, 3, "Jürgen")).encode("latin-1")
    add("pairwise_latin1.csv", latin, error(FIT, "row 5", "Latin-1 byte in data row 5, not UTF-8"))
    add("pairwise_semicolon.csv", table(PW_HEADER, PW, sep=";"), ok(FIT, "semicolon delimiter"))
    add("pairwise_tab.tsv", table(PW_HEADER, PW, sep="\t"), ok(FIT, "tab delimiter"))
    add(
        "pairwise_trailing_comma.csv",
        table(PW_HEADER, PW, end=","),
        ok(FIT, "trailing comma on every line must not shift the columns"),
    )
    add(
        "pairwise_trailing_comma_data.csv",
        PW_TEXT.replace("\n", ",\n").replace(",\n", "\n", 1),
        ok(FIT, "trailing comma on every data row only (index_col=False)"),
    )
    ragged = PW_TEXT.splitlines()
    ragged[5] += ",extra,cells"
    add("pairwise_ragged_long.csv", "\n".join(ragged) + "\n", error(FIT, "row", "data row 5 has two fields too many"))
    short = PW_TEXT.splitlines()
    short[3] = short[3].rsplit(",", 1)[0]
    add(
        "pairwise_ragged_short.csv",
        "\n".join(short) + "\n",
        error(FIT, "choice", "data row 3 lacks its last field (the choice)"),
    )
    quote = PW_TEXT.splitlines()
    quote[6] = quote[6].replace("p", '"p', 1)
    add(
        "pairwise_open_quote.csv",
        "\n".join(quote) + "\n",
        error(FIT, "row", "a quote opened in data row 6, never closed"),
    )
    add(
        "pairwise_dup_columns.csv",
        table([*PW_HEADER, "choice"], [[*r, "A"] for r in PW]),
        error(FIT, "choice", "two columns named 'choice': which one is meant?"),
    )
    add(
        "pairwise_blank_annotator.csv",
        table(PW_HEADER, with_cell(PW, 9, 3, "")),
        error(FIT, "annotator", "blank annotator in data row 10"),
    )
    add(
        "pairwise_missing_column.csv",
        table(PW_HEADER[:4], [r[:4] for r in PW]),
        error(FIT, "choice", "no choice column"),
    )
    add(
        "pairwise_bad_mapping.csv",
        PW_TEXT,
        error(FIT + " --columns choice=verdict", "verdict", "--columns maps a column the file lacks"),
    )
    add(
        "pairwise_unknown_choice.csv",
        table(PW_HEADER, with_cell(with_cell(PW, 3, 4, "C"), 8, 4, "maybe")),
        error(FIT, "column 'choice'", "choice codes C and maybe"),
    )
    add(
        "pairwise_nan_inf_choice.csv",
        table(PW_HEADER, with_cell(with_cell(PW, 0, 4, "NaN"), 1, 4, "inf")),
        error(FIT, "choice", "NaN / inf as choices"),
    )
    add(
        "pairwise_self.csv",
        table(PW_HEADER, with_cell(PW, 2, 2, PW[2][1])),
        error(FIT, "itself", "a system compared with itself in data row 3"),
    )
    add(
        "pairwise_one_system.csv",
        table(PW_HEADER, [[f"p{p}", "alpha", "alpha", "r0", "tie"] for p in range(5)]),
        error(FIT, "system", "one system only"),
    )
    add(
        "pairwise_all_ties.csv",
        table(PW_HEADER, [[*r[:4], "tie"] for r in PW]),
        error(FIT, "tie", "every vote a tie: nothing tells the systems apart"),
    )
    add("pairwise_duplicated_votes.csv", table(PW_HEADER, PW + PW[:4]), error(FIT, "duplicated", "4 votes twice"))
    add(
        "pairwise_nul_id.csv",
        table(PW_HEADER, [[r[0] + ("\x00x" if r[0] == "p3" else ""), *r[1:]] for r in PW]),
        error(FIT, "prompt", "NUL bytes in a prompt id (netcdf cannot store them)"),
    )
    names = dict(zip(SYSTEMS, FORMULAS[:3], strict=True))
    add(
        "pairwise_formula_ids.csv",
        table(PW_HEADER, [[FORMULAS[3] + r[0], names[r[1]], names[r[2]], FORMULAS[4] + r[3], r[4]] for r in PW]),
        ok(FIT, "formula-looking systems, prompts and annotators: outputs neutralised"),
    )
    markup = dict(zip(SYSTEMS, MARKUP[:3], strict=True))
    add(
        "pairwise_markup_names.csv",
        table(PW_HEADER, [[MARKUP[3] + r[0], markup[r[1]], markup[r[2]], r[3], r[4]] for r in PW]),
        ok(FIT, "Markdown / HTML in names are plain text"),
    )
    add(
        "pairwise_choice_by_name.csv",
        table(PW_HEADER, [[*r[:4], {"A": r[1], "B": r[2]}.get(r[4], "tie")] for r in PW]),
        ok(FIT, "choice given as the winning system's name"),
    )
    long_text = "word " * 20_000
    add(
        "pairwise_long_prompt_text.csv",
        table([*PW_HEADER, "prompt_text"], [[*r, long_text if i == 0 else "short"] for i, r in enumerate(PW)]),
        ok(FIT, "a 100 kB prompt text cell"),
    )
    many = [
        [f"p{p}", *[("alpha", "beta"), ("alpha", "gamma"), ("beta", "gamma")][p % 3], "r0", "AB"[p % 2]]
        for p in range(10_000)
    ]
    add(
        "pairwise_10000_prompts.csv",
        table(PW_HEADER, many),
        ok(
            FIT,
            "10,000 prompts x 1 vote (each prompt in one comparison; antisymmetric cutpoints still "
            "inform theta): bounded time and memory",
        ),
    )


def _bestworst_ranking_files() -> None:
    """Best-worst trials and rankings."""
    bw = "fit --format bestworst"
    add("bestworst_valid.csv", table(BW_HEADER, BW), ok(bw, "valid best-worst trials"))
    add("bestworst_semicolon.csv", table(BW_HEADER, BW, sep=";"), ok(bw, "semicolon delimiter"))
    add(
        "bestworst_two_most.csv",
        table(BW_HEADER, with_cell(BW, 1, 3, "most") if BW[1][3] != "most" else with_cell(BW, 2, 3, "most")),
        error(bw, "judgment", "a trial with two MOST"),
    )
    add(
        "bestworst_unknown_code.csv",
        table(BW_HEADER, with_cell(BW, 5, 3, "so-so")),
        error(bw, "judgment", "code so-so"),
    )
    add(
        "bestworst_repeated_system.csv",
        table(BW_HEADER, with_cell(BW, 1, 2, BW[0][2])),
        error(bw, "system", "a system listed twice in one trial"),
    )
    add(
        "bestworst_one_system.csv",
        table(BW_HEADER, [[f"p{p}", "r0", "alpha", "most"] for p in range(4)]),
        error(bw, "system", "one system only"),
    )
    rk = "fit --format ranking"
    add("ranking_valid.csv", table(RK_HEADER, RK), ok(rk, "valid rankings"))
    add("ranking_tab.tsv", table(RK_HEADER, RK, sep="\t"), ok(rk, "tab delimiter"))
    add("ranking_trailing_comma.csv", table(RK_HEADER, RK, end=","), ok(rk, "trailing comma on every line"))
    add(
        "ranking_negative_huge.csv",
        table(RK_HEADER, ranking_rows(rank=lambda k: [-5, 0, 7, 1e300][k])),
        ok(rk, "ranks -5, 0, 7, 1e300 still order the systems"),
    )
    add(
        "ranking_overflow.csv",
        table(RK_HEADER, with_cell(RK, 2, 3, "1e400")),
        error(rk, "rank", "rank 1e400 overflows to inf"),
    )
    add(
        "ranking_nonnumeric.csv",
        table(RK_HEADER, with_cell(with_cell(RK, 0, 3, "first"), 6, 3, "")),
        error(rk, "rank", "rank 'first' and a blank rank"),
    )
    add(
        "ranking_nan_inf.csv",
        table(RK_HEADER, with_cell(with_cell(RK, 0, 3, "NaN"), 1, 3, "-inf")),
        error(rk, "rank", "NaN / -inf ranks"),
    )
    add(
        "ranking_all_equal.csv",
        table(RK_HEADER, [[*r[:3], 1] for r in RK]),
        error(rk, "tie", "all ranks equal: all ties"),
    )
    add(
        "ranking_one_system.csv",
        table(RK_HEADER, [[f"p{p}", "r0", "alpha", 1] for p in range(4)]),
        error(rk, "system", "one system only"),
    )


def _ratings_files() -> None:
    """Absolute ratings (``fit --format ratings`` and ``select``)."""
    rfit = "fit --format ratings"
    add(
        "ratings_valid.csv",
        table(RT_HEADER, RT),
        ok(rfit, "valid ratings"),
        ok(SELECT, "valid ratings"),
        error(SELECT, "--out", "--out names an existing file", out="file"),
        error(SELECT, "not empty", "--out already holds a file", out="nonempty"),
    )
    add("ratings_utf16.csv", table(RT_HEADER, RT).encode("utf-16"), ok(SELECT, "UTF-16 with BOM"))
    add("ratings_header_only.csv", table(RT_HEADER, []), error(SELECT, "no data rows", "header, no rows"))
    add(
        "ratings_latin1.csv",
        table(RT_HEADER, with_cell(RT, 7, 0, "é")).encode("latin-1"),
        error(SELECT, "row 8", "Latin-1 byte in data row 8"),
    )
    add(
        "ratings_formula_ids.csv",
        table(
            RT_HEADER,
            [
                [FORMULAS[int(r[0][1:]) % 5] + r[0], dict(zip(RT_SYSTEMS, FORMULAS, strict=True))[r[1]], r[2]]
                for r in RT
            ],
        ),
        ok(SELECT, "formula-looking prompts and systems: subsets neutralised"),
        ok(rfit, "formula-looking prompts and systems: outputs neutralised"),
    )
    huge = [[f"q{p}", s, 1e308 if k == p % 2 else -1e308] for p in range(12) for k, s in enumerate(RT_SYSTEMS[:2])]
    add(
        "ratings_1e308.csv",
        table(RT_HEADER, huge),
        ok(rfit, "scores +-1e308: max - min overflows; a correct matrix (finite theta) is computable"),
    )
    add(
        "ratings_nan_inf.csv",
        table(RT_HEADER, with_cell(with_cell(RT, 3, 2, "NaN"), 4, 2, "inf")),
        error(rfit, "score", "NaN / inf scores"),
    )
    add(
        "ratings_no_pairs.csv",
        table(RT_HEADER, [[f"q{p}", RT_SYSTEMS[p % 5], r[2]] for p, r in enumerate(RT)]),
        error(rfit, "prompt", "every prompt rated for one system only: no pairs"),
        error(SELECT, "prompt", "every prompt rated for one system only: no pairs"),
    )
    add(
        "ratings_prompt_per_system.csv",
        table(RT_HEADER, [[f"{r[1]}-{r[0]}", r[1], r[2]] for r in RT]),
        error(rfit, "prompt", "prompt id unique per system: no shared prompts"),
    )
    add(
        "ratings_all_same.csv",
        table(RT_HEADER, [[*r[:2], 3] for r in RT]),
        error(rfit, "", "every score equal: the scale has no width, all ties"),
    )
    add(
        "ratings_one_system.csv",
        table(RT_HEADER, [[f"q{p}", "s1", 3] for p in range(6)]),
        error(rfit, "system", "one system only"),
    )
    add(
        "ratings_dup_annotator.csv",
        table([*RT_HEADER, "annotator"], [[*r, "a1"] for r in RT + RT[:2]]),
        error(rfit, "annotator", "one annotator scored the same cell twice"),
    )
    crit = [[*r, c] for c in ("fluency", "coherence") for r in RT]
    crit = [r if not (r[3] == "coherence" and i % 7 == 0) else [*r[:2], "", r[3]] for i, r in enumerate(crit)]
    add(
        "ratings_mixed_criteria_blanks.csv",
        table([*RT_HEADER, "criterion"], crit),
        ok(rfit + " --criterion fluency", "blank scores only in the other criterion"),
        error(rfit + " --criterion coherence", "score", "blank scores in the chosen criterion"),
        error(rfit, "criteri", "several criteria and none chosen"),
    )


def _responses_files() -> None:
    """Item responses."""
    resp = "fit --format responses"
    add("responses_valid.csv", table(RS_HEADER, RS), ok(resp, "valid item responses"))
    add("responses_fractional.csv", table(RS_HEADER, with_cell(RS, 4, 2, "1.5")), error(resp, "score", "score 1.5"))
    add(
        "responses_one_category.csv", table(RS_HEADER, [[*r[:2], 1] for r in RS]), error(resp, "score", "every score 1")
    )
    add(
        "responses_duplicate.csv", table(RS_HEADER, RS + RS[:1]), error(resp, "item", "a person answered an item twice")
    )
    add("responses_blank_person.csv", table(RS_HEADER, with_cell(RS, 10, 0, "")), error(resp, "person", "blank person"))
    add("responses_nan_inf.csv", table(RS_HEADER, with_cell(RS, 3, 2, "inf")), error(resp, "score", "score inf"))


def _study_files() -> None:
    """Cost studies (``cost``)."""
    add(
        "study_valid.csv",
        table(ST_HEADER, ST),
        ok(COST, "valid study"),
        error(COST, "not empty", "--out already holds a file", out="nonempty"),
        ok(COST + " --overwrite", "--overwrite keeps a stranger's file and writes", out="nonempty"),
    )
    add("study_semicolon.csv", table(ST_HEADER, ST, sep=";"), ok(COST, "semicolon delimiter"))
    add("study_utf16.csv", table(ST_HEADER, ST).encode("utf-16"), ok(COST, "UTF-16 with BOM"))
    add("study_trailing_comma.csv", table(ST_HEADER, ST, end=","), ok(COST, "trailing comma on every line"))
    add("study_header_only.csv", table(ST_HEADER, []), error(COST, "no data rows", "header, no rows"))
    add(
        "study_formula_ids.csv",
        table(ST_HEADER, study_rows(lambda c, i: FORMULAS[i % 5] + c.split("_")[0] + str(i))),
        ok(COST, "formula-looking participants: outputs neutralised"),
    )
    add(
        "study_formula_tasks.csv",
        table(ST_HEADER, [[*r[:2], {"numeric": "=1+1", "writing": "@SUM(1)"}[r[2]], *r[3:]] for r in ST]),
        ok(COST, "formula-looking task names: outputs neutralised"),
    )
    add(
        "study_three_conditions.csv",
        table(ST_HEADER, with_cell(ST, 0, 0, "both")),
        error(COST, "condition", "three condition labels"),
    )
    add("study_likert_range.csv", table(ST_HEADER, with_cell(ST, 5, 4, 7)), error(COST, "usefulness", "usefulness 7"))
    add("study_negative_time.csv", table(ST_HEADER, with_cell(ST, 2, 5, -3)), error(COST, "prompt_time_s", "time -3 s"))
    add(
        "study_nan_inf.csv",
        table(ST_HEADER, with_cell(with_cell(ST, 1, 4, "NaN"), 2, 6, "inf")),
        error(COST, "row", "usefulness NaN, time inf"),
    )
    add("study_instance_zero.csv", table(ST_HEADER, with_cell(ST, 0, 3, 0)), error(COST, "instance", "instance 0"))
    add("study_duplicate_rows.csv", table(ST_HEADER, ST + ST[:1]), error(COST, "instance", "the same row twice"))
    add(
        "study_wrong_time_side.csv",
        table(ST_HEADER, with_cell(ST, 0, 8, 50)),
        error(COST, "solve_time_s", "solve time on a with-model row"),
    )


def _drafts_files() -> None:
    """Revision drafts (``revise``)."""
    add(
        "drafts_valid.csv",
        table(DR_HEADER, DR),
        ok(REVISE, "valid drafts with references"),
        error(REVISE, "--out", "--out names an existing file", out="file"),
    )
    add("drafts_header_only.csv", table(DR_HEADER, []), error(REVISE, "no data rows", "header, no rows"))
    add("drafts_semicolon.csv", table(DR_HEADER, DR, sep=";"), ok(REVISE, "semicolon delimiter"))
    add("drafts_utf16.csv", table(DR_HEADER, DR).encode("utf-16"), ok(REVISE, "UTF-16 with BOM"))
    add(
        "drafts_latin1.csv",
        table(DR_HEADER, with_cell(DR, 2, 2, "Café au lait.")).encode("latin-1"),
        error(REVISE, "UTF-8", "Latin-1 bytes"),
    )
    add(
        "drafts_formula_ids.csv",
        table(DR_HEADER, [[FORMULAS[i % 5] + r[0], FORMULAS[(i + 1) % 5] + r[1], *r[2:]] for i, r in enumerate(DR)]),
        ok(REVISE, "formula-looking text ids and systems: revision_distance.csv neutralised"),
    )
    add(
        "drafts_markup.csv",
        table(DR_HEADER, [[r[0], MARKUP[i % 4], *r[2:]] for i, r in enumerate(DR)]),
        ok(REVISE, "Markdown / HTML system names"),
    )
    big = "All work and no play makes a dull draft. " * 25_000  # 1 MB
    add(
        "drafts_1mb.csv",
        table(DR_HEADER, [["t0", "gpt", big, "A short reference."]]),
        error(REVISE, "t0", "a 1 MB draft: a clear cap, fast (the diff took 370 s and 5 GB)"),
    )
    add("drafts_blank_draft.csv", table(DR_HEADER, with_cell(DR, 3, 2, "  ")), error(REVISE, "draft", "blank draft"))
    add(
        "drafts_blank_reference.csv",
        table(DR_HEADER, with_cell(DR, 1, 3, "")),
        error(REVISE, "reference", "blank reference in data row 2"),
    )
    add("drafts_duplicate.csv", table(DR_HEADER, DR + DR[:1]), error(REVISE, "row", "the same (text_id, system) twice"))
    add(
        "drafts_open_quote.csv",
        table(DR_HEADER, DR).replace("t2", '"t2', 1),
        error(REVISE, "row", "a quote never closed"),
    )
    add(
        "drafts_missing_column.csv",
        table(DR_HEADER[:2] + DR_HEADER[3:], [r[:2] + r[3:] for r in DR]),
        error(REVISE, "draft", "no draft column"),
    )


def _edits_files() -> None:
    """Uploaded edits (the page's reader)."""
    edit_lines = [dict(EDIT), {**EDIT, "system": "llama", "original_snippet": "softly", "revised_snippet": "gently"}]
    jsonl = "".join(json.dumps(e) + "\n" for e in edit_lines)
    add("edits_valid.jsonl", jsonl, ok("edits", "valid edits (JSON lines)"))
    add("edits_valid.csv", table(list(EDIT), [list(e.values()) for e in edit_lines]), ok("edits", "valid edits (CSV)"))
    add("edits_bad_json.jsonl", jsonl + '{"text_id": "t1", \n', error("edits", "row 3", "line 3 is not JSON"))
    add("edits_not_object.jsonl", jsonl + "[1, 2]\n", error("edits", "row 3", "line 3 is a list"))
    add(
        "edits_missing_field.csv",
        table(list(EDIT)[:-1], [list(e.values())[:-1] for e in edit_lines]),
        error("edits", "revised_snippet", "no revised_snippet column"),
    )
    add(
        "edits_formula.jsonl",
        "".join(json.dumps({**e, "text_id": FORMULAS[0]}) + "\n" for e in edit_lines),
        ok("edits", "formula-looking ids are text"),
    )


def build() -> None:
    """Fill ``files`` and ``cases``: the corpus, one ``add`` per file."""
    _pairwise_files()
    _bestworst_ranking_files()
    _ratings_files()
    _responses_files()
    _study_files()
    _drafts_files()
    _edits_files()


def write() -> None:
    """Rewrite ``tests/hostile/`` from scratch with every file and ``manifest.csv``."""
    build()
    if HOSTILE.exists():
        shutil.rmtree(HOSTILE)
    HOSTILE.mkdir(parents=True)
    for name, data in files.items():
        (HOSTILE / name).write_bytes(data)
    with open(HOSTILE / "manifest.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, MANIFEST_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(cases)
    size = sum(len(d) for d in files.values())
    print(f"wrote {len(files)} files ({size / 1e6:.2f} MB) and {len(cases)} cases to {HOSTILE}", file=sys.stderr)


def outcomes_table() -> str:
    """Run every manifest case (``tests/test_hostile.run_case``) and return the Markdown table."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("EVAL_CACHE_DIR", tempfile.mkdtemp())  # keep test fits out of the user's cache
    from tests.test_hostile import load_manifest, run_case

    def cell(text: str, width: int = 110) -> str:
        """A code span, so names such as ``<script>`` or ``**bold**`` in messages stay literal text."""
        text = text.replace(f"{ROOT}/", "").replace("`", "'")
        return f"`` {text[:width]} ``".replace("|", "\\|") if text else " "

    lines = [
        "| file | command | expected | observed exit | verdict | first line of message |",
        "|---|---|---|---|---|---|",
    ]
    for case in load_manifest():
        with tempfile.TemporaryDirectory() as tmp:
            result = run_case(case, Path(tmp))
        # the case's temporary folder is noise in a table
        result.message = result.message.replace(f"{tmp}/", "")
        result.problems = [p.replace(f"{tmp}/", "") for p in result.problems]
        expected = case["expect"] + (f" ({case['out']} --out)" if case["out"] != "fresh" else "")
        verdict = "pass" if not result.problems else "FAIL: " + cell(result.problems[0], 70)
        command = f"{case['command']} {case['args']}".strip()
        lines.append(
            f"| `{case['file']}` | {cell(command)} | {expected} "
            f"| {result.observed} | {verdict} | {cell(result.message)} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", action="store_true", help="run every case and print the Markdown table of outcomes")
    args = parser.parse_args()
    write()
    if args.table:
        print(outcomes_table())
