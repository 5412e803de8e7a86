"""Build the bundled data in ``data/`` from the shared data folder (see data/README.md).

Copies each long CSV with its LICENSE (and upstream README), and derives the compact text tables
the app shows next to the judgments, from the upstream files in ``raw/``:

- ``prompts.csv``: ``prompt_id, prompt_text``
- ``responses.csv``: ``prompt_id, system, response``

``prompt_id`` is the value of the column the votes use as prompt (LAMP ``item``, ROME ``case``,
PandaLM ``item_id``). Only prompts that occur in the long CSV are kept.

Usage: ``python scripts/build_text_tables.py [--source ../shared/data] [--out data]``
"""

from __future__ import annotations

import argparse
import collections
import csv
import glob
import json
import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COPIES = {
    "lamp_rankings": ["rankings_long.csv", "raw/LICENSE", "raw/README.md"],
    "rome_bestworst": ["bestworst_long.csv", "raw/LICENSE"],
    "pandalm_pairwise": ["pairwise_long.csv", "raw/LICENSE", "raw/README.md"],
    "hanna_means": ["mean_human_scores_long.csv", "raw/LICENSE", "raw/README.md"],
    "irt_reference": [
        "Science_mirt4_long.csv",
        "LSAT7_long.csv",
        "reference_estimates.json",
        "DESCRIPTION",
        "Science.Rd",
        "LSAT7.Rd",
    ],
}


def write_csv(path: Path, header: list[str], rows: list[tuple[str, ...]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(sorted(rows))
    print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {len(rows)} rows")


def used_ids(path: Path, column: str) -> set[str]:
    with path.open(encoding="utf-8") as f:
        return {row[column] for row in csv.DictReader(f)}


def lamp(src: Path, out: Path) -> None:
    """Instruction per item; the text of each condition per item.

    The same item was given to 3 writers in separately shuffled files; for 7 (item, condition)
    pairs the copies differ slightly (a few characters); the most frequent copy is kept, ties
    broken by the first file in sorted order.
    """
    items = used_ids(out / "rankings_long.csv", "item")
    prompts: dict[str, str] = {}
    texts: dict[tuple[str, str], collections.Counter] = collections.defaultdict(collections.Counter)
    for name in sorted(glob.glob(str(src / "raw" / "batch*__*.json"))):
        if name.endswith("_rankings.json"):
            continue
        for entry in json.loads(Path(name).read_text(encoding="utf-8")):
            prompts.setdefault(entry["id"], entry["instruction"])
            for slot, condition in entry["mapping"].items():
                texts[(entry["id"], condition)][entry["responses"][int(slot.split()[-1]) - 1]] += 1
    assert items <= set(prompts), items - set(prompts)
    write_csv(out / "prompts.csv", ["prompt_id", "prompt_text"], [(i, prompts[i]) for i in items])
    write_csv(
        out / "responses.csv",
        ["prompt_id", "system", "response"],
        [(i, c, counts.most_common(1)[0][0]) for (i, c), counts in texts.items() if i in items],
    )


def rome(src: Path, out: Path) -> None:
    """Counterfactual per case; each system's passage per case (from ``raw/ground_truth_*.json``)."""
    cases = used_ids(out / "bestworst_long.csv", "case")
    prompts: dict[str, str] = {}
    passages: dict[tuple[str, str], str] = {}
    for name in sorted(glob.glob(str(src / "raw" / "ground_truth_*.json"))):
        for sheet in json.loads(Path(name).read_text(encoding="utf-8")):
            for page in range(1, 11):
                case = sheet[f"page_{page}_fname"]
                prompts.setdefault(case, sheet[f"page_{page}_counterfactual"])
                for slot in "abc":
                    key = (case, sheet[f"page_{page}_passage_{slot}_label"])
                    text = sheet[f"page_{page}_passage_{slot}"]
                    assert passages.setdefault(key, text) == text, key
    assert cases <= set(prompts), cases - set(prompts)
    write_csv(out / "prompts.csv", ["prompt_id", "prompt_text"], [(c, prompts[c]) for c in cases])
    write_csv(
        out / "responses.csv",
        ["prompt_id", "system", "response"],
        [(c, s, t) for (c, s), t in passages.items() if c in cases],
    )


def pandalm(src: Path, out: Path) -> None:
    """Instruction (+ input) per item; response1 of system_a and response2 of system_b."""
    with (out / "pairwise_long.csv").open(encoding="utf-8") as f:
        pairs = {row["item_id"]: (row["system_a"], row["system_b"]) for row in csv.DictReader(f)}
    prompts, responses = [], []
    for entry in json.loads((src / "raw" / "testset-v1.json").read_text(encoding="utf-8")):
        item = str(entry["idx"])
        if item not in pairs:
            continue
        system_a, system_b = pairs[item]
        assert entry["cmp_key"] == f"{system_a}_{system_b}", item
        text = entry["instruction"] + (f"\n\nInput: {entry['input']}" if entry["input"] else "")
        prompts.append((item, text))
        responses += [(item, system_a, entry["response1"]), (item, system_b, entry["response2"])]
    write_csv(out / "prompts.csv", ["prompt_id", "prompt_text"], prompts)
    write_csv(out / "responses.csv", ["prompt_id", "system", "response"], responses)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=ROOT / "data")
    args = parser.parse_args()
    for folder, files in COPIES.items():
        (args.out / folder).mkdir(parents=True, exist_ok=True)
        for name in files:
            target = args.out / folder / os.path.basename(name)
            shutil.copyfile(args.source / folder / name, target)
            target.chmod(0o644)
    lamp(args.source / "lamp_rankings", args.out / "lamp_rankings")
    rome(args.source / "rome_bestworst", args.out / "rome_bestworst")
    pandalm(args.source / "pandalm_pairwise", args.out / "pandalm_pairwise")


if __name__ == "__main__":
    main()
