"""Small studies for the storage tests (synthetic items: no file needed)."""

from __future__ import annotations

import pandas as pd

from lib.study.create import create_study
from lib.study.items import read_items

SYSTEMS = ("alpha", "beta", "gamma")


def items_table(n_prompts: int, *, gold_prompts: int = 0, systems=SYSTEMS, criteria=("consistency", "fluency")):
    """``n_prompts`` regular prompts and ``gold_prompts`` gold ones (gold: first system MOST, last LEAST)."""
    rows = []
    for p in range(n_prompts + gold_prompts):
        gold = p >= n_prompts
        for k, system in enumerate(systems):
            row = {
                "prompt_id": f"p{p:02d}",
                "prompt_text": f"fact {p}",
                "system": system,
                "response": f"{system} on {p}",
            }
            for c in criteria:
                row[f"gold_{c}"] = ("most" if k == 0 else "least" if k == len(systems) - 1 else "") if gold else ""
            rows.append(row)
    return pd.DataFrame(rows)


def make_study(
    url: str, n_prompts=4, *, annotators=3, per_item=3, gold_prompts=0, gold_rate=0.0, task="bestworst", seed=0
):
    """A stored study; returns :class:`lib.study.create.Created`."""
    criteria = ["consistency", "fluency"]
    items = read_items(items_table(n_prompts, gold_prompts=gold_prompts), task, criteria, file="items.csv")
    return create_study(
        items,
        task=task,
        criteria=criteria,
        annotators=annotators,
        per_item=per_item,
        gold_rate=gold_rate,
        instructions="Read **carefully**.",
        name="test study",
        seed=seed,
        url=url,
    )


def answer(page, *, most="A", least="C"):
    """Choices for a best-worst page: the same MOST / LEAST labels on both criteria."""
    return {c: {"most": most, "least": least} for c in ("consistency", "fluency")}


def shown(url: str, assignment_id: int) -> list[str]:
    """The systems of a task in the order shown (the database's record; the annotator sees labels only)."""
    from lib.study.db import transaction
    from lib.study.models import Assignment

    with transaction(url) as session:
        return list(session.get(Assignment, assignment_id).shown_order)


def labels(order: list[str], most: str, least: str) -> dict[str, str]:
    """The labels (A, B, ...) of the systems ``most`` and ``least`` in a shown order."""
    return {"most": "ABCDEFG"[order.index(most)], "least": "ABCDEFG"[order.index(least)]}
