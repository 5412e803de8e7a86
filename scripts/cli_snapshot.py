"""Run every command on the bundled data into a folder, or compare two such folders.

A refactoring must leave every command's outputs unchanged. ``snapshot DIR`` writes them; ``compare
A B`` says which files differ. CSV and JSON lines must be byte-identical; in ``diagnostics.json`` the
seconds (``wall_s``, ``timings``) are left out; ``posterior.nc`` is compared by its values (netcdf files carry a
creation time).

Usage::

    python scripts/cli_snapshot.py snapshot out/before
    python scripts/cli_snapshot.py compare out/before out/after
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"

LAMP_COLUMNS = "prompt=item,system=condition,trial=instruction_id"

RUNS: dict[str, list[str]] = {
    "fit_lamp_map": [
        "fit",
        "--input",
        str(DATA / "lamp_rankings/rankings_long.csv"),
        "--format",
        "ranking",
        "--columns",
        LAMP_COLUMNS,
        "--sampler",
        "map",
    ],
    "fit_hanna_map": [
        "fit",
        "--input",
        str(DATA / "hanna_means/mean_human_scores_long.csv"),
        "--format",
        "ratings",
        "--criterion",
        "Coherence",
        "--sampler",
        "map",
    ],
    "fit_lamp_numpyro": [
        "fit",
        "--input",
        str(DATA / "lamp_rankings/rankings_long.csv"),
        "--format",
        "ranking",
        "--columns",
        LAMP_COLUMNS,
        "--chains",
        "2",
        "--draws",
        "100",
        "--tune",
        "100",
        "--seed",
        "3",
    ],
    "select_hanna": [
        "select",
        "--input",
        str(DATA / "hanna_means/mean_human_scores_long.csv"),
        "--format",
        "ratings",
        "--criterion",
        "Relevance",
        "--no-merge",
        "--k",
        "5,10,20,40",
        "--random-draws",
        "5",
    ],
    "cost_example": ["cost", "--input", str(DATA / "cost_example/study.csv"), "--weights", "1,0.5,1,1"],
}


def _lamp_drafts(folder: Path) -> Path:
    """Writer W3's LAMP paragraphs as a drafts file for ``revise --engine diff``."""
    from lib.revision.lamp import load_lamp

    lamp = load_lamp()
    w3 = lamp.postedits[lamp.postedits["editor"] == "W3"][["text_id", "system", "postedit"]]
    drafts = lamp.drafts[["text_id", "system", "draft"]].merge(w3, on=["text_id", "system"])
    path = folder / "lamp_drafts.csv"
    drafts.rename(columns={"postedit": "w3_text"}).to_csv(path, index=False)
    return path


def snapshot(out: Path) -> None:
    from lib.cli import main

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        runs = dict(RUNS)
        runs["revise_lamp_w3"] = [
            "revise",
            "--drafts",
            str(_lamp_drafts(Path(tmp))),
            "--engine",
            "diff",
            "--reference-column",
            "w3_text",
        ]
        for name, argv in runs.items():
            code = main([*argv, "--out", str(out / name), "--overwrite"])
            print(f"{name}: exit {code}", flush=True)


def _untimed(path: Path) -> dict:
    return {k: v for k, v in json.loads(path.read_text()).items() if k not in ("wall_s", "timings")}


def _same(a: Path, b: Path) -> bool:
    if a.name == "posterior.nc":
        import xarray as xr

        return all(
            xr.open_dataset(a, group=g).load().equals(xr.open_dataset(b, group=g).load()) for g in ("posterior",)
        )
    if a.name == "diagnostics.json":
        return _untimed(a) == _untimed(b)
    return a.read_bytes() == b.read_bytes()


def compare(before: Path, after: Path) -> int:
    names = sorted(
        {p.relative_to(before) for p in before.rglob("*") if p.is_file()}
        | {p.relative_to(after) for p in after.rglob("*") if p.is_file()}
    )
    differ = [n for n in names if not ((before / n).exists() and (after / n).exists() and _same(before / n, after / n))]
    for n in differ:
        print(f"differs: {n}")
    print(f"{len(names) - len(differ)} of {len(names)} files identical")
    return 1 if differ else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("snapshot").add_argument("out", type=Path)
    cmp = sub.add_parser("compare")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = parser.parse_args()
    sys.exit(snapshot(args.out) if args.action == "snapshot" else compare(args.before, args.after))
