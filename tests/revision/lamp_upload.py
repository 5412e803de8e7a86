"""The LAMP-shaped upload (one home for the lib and page tests): what a researcher gets from LAMP's
re-annotation files (the bundled ``data/lamp_edits/raw/W*_edits.json``), where each writer's drafts
carry the writer's own ids (``W3_reannotation_1`` ...), so no draft has edits from two writers."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from lib.io.paths import DATA_DIR

WRITERS = ("W3", "W12", "W16")
EDIT_MAPPING = {"system": "source", "revised_snippet": "edited"}
"""The roles whose columns the names do not give (``writer``, ``id``, ``original``, ``category`` are guessed)."""


def reannotation() -> dict[str, list[dict]]:
    """Each writer's paragraphs, as in ``raw/<writer>_edits.json``."""
    return {
        w: json.loads((DATA_DIR / "lamp_edits" / "raw" / f"{w}_edits.json").read_text(encoding="utf-8"))
        for w in WRITERS
    }


def write_upload(directory: Path) -> tuple[Path, Path]:
    """``drafts.csv`` (``text_id, system, draft``: one row per writer's paragraph, 150) and ``edits.csv``
    (``writer, id, source, type, category, original, edited``: the columns of LAMP's ``edits_long.csv``,
    1,093 edits)."""
    drafts, edits = [], []
    for writer, paragraphs in reannotation().items():
        for p in paragraphs:
            drafts.append((p["id"], p["source"], p["preedit"]))
            edits += [
                (writer, p["id"], p["source"], p["type"], e["categorization"], e["originalText"], e["editedText"])
                for e in p["fine_grained_edits"]
            ]
    pd.DataFrame(drafts, columns=["text_id", "system", "draft"]).to_csv(directory / "drafts.csv", index=False)
    pd.DataFrame(edits, columns=["writer", "id", "source", "type", "category", "original", "edited"]).to_csv(
        directory / "edits.csv", index=False
    )
    return directory / "drafts.csv", directory / "edits.csv"


def per_writer_means() -> pd.Series:
    """Revision Distance per source model straight from the re-annotation files: each paragraph's
    number of edits by the writer who revised it, averaged over the 150 paragraphs (index ``system``)."""
    rows = [(p["source"], len(p["fine_grained_edits"])) for ps in reannotation().values() for p in ps]
    return pd.DataFrame(rows, columns=["system", "edits"]).groupby("system")["edits"].mean()
