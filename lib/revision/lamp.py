"""Loader for the bundled LAMP human edits (``data/lamp_edits``; Chakrabarty et al. 2024).

50 LLM paragraphs from 3 source models, each revised by 3 professional writers (W3, W12, W16)
into categorised span edits, with the paragraph before (``preedit``) and after (``postedit``).
A few writers saw different paragraphs under the same id, so drafts are keyed by their text:
``text_id`` is ``lamp-NN`` in order of first appearance (W3, W12, W16 files).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from lib.errors import FormatError
from lib.io.paths import DATA_DIR
from lib.revision.diff_edits import revision_level
from lib.revision.revised import revised_table
from lib.revision.schema import EDIT_COLUMNS

LAMP_DIR = DATA_DIR / "lamp_edits"
WRITERS: tuple[str, ...] = ("W3", "W12", "W16")


@dataclass(frozen=True)
class LampData:
    """The LAMP paragraphs as tables.

    Attributes
    ----------
    drafts : DataFrame
        ``text_id, system, draft, type, instruction``: one row per distinct pre-edit paragraph
        (``system`` is the source model).
    postedits : DataFrame
        ``text_id, system, editor, postedit``: each writer's edited paragraph.
    edits : DataFrame
        :data:`~lib.revision.schema.EDIT_COLUMNS`: one row per human edit, ``editor`` the writer,
        ``revision_intention`` the LAMP category.
    """

    drafts: pd.DataFrame
    postedits: pd.DataFrame
    edits: pd.DataFrame

    @property
    def evaluated(self) -> pd.DataFrame:
        """``text_id, system, editor, postedit, draft``: one row per paragraph a writer revised."""
        return revised_table(self.drafts, self.postedits)

    def with_reference(self, writer: str) -> pd.DataFrame:
        """``text_id, system, draft, reference``: every paragraph, with ``writer``'s post-edit
        paragraph as its reference (None where the writer did not revise it)."""
        post = self.postedits.loc[self.postedits["editor"] == writer, ["text_id", "system", "postedit"]]
        return self.drafts[["text_id", "system", "draft"]].merge(
            post.rename(columns={"postedit": "reference"}), on=["text_id", "system"], how="left"
        )


def normalize_category(name: str) -> str:
    """Merge the two spellings the data uses for one category (``Unnecessary/ Redundant ...``)."""
    return " ".join(name.replace("/ ", "/").split())


def load_lamp(directory: Path = LAMP_DIR) -> LampData:
    """Read ``raw/W*_edits.json`` into :class:`LampData`.

    Raises
    ------
    FormatError
        If a writer's file is missing, is not JSON, or a paragraph lacks a field or has the wrong layout.
    """
    ids: dict[str, str] = {}
    drafts, posts, edits = [], [], []
    for writer in WRITERS:
        path = Path(directory) / "raw" / f"{writer}_edits.json"
        try:
            paragraphs = json.loads(path.read_text(encoding="utf-8"))
        except OSError as err:
            raise FormatError(f"cannot read the LAMP edits ({err.strerror})", file=str(path)) from err
        except ValueError as err:  # not UTF-8, or not JSON
            raise FormatError(f"the LAMP edits are not valid JSON ({err})", file=path.name) from err
        if not isinstance(paragraphs, list):
            raise FormatError("the LAMP edits must be a JSON list of paragraphs", file=path.name)
        for row, par in enumerate(paragraphs, start=1):
            try:
                pre, system = par["preedit"], par["source"]
                if pre not in ids:
                    ids[pre] = f"lamp-{len(ids) + 1:02d}"
                    drafts.append((ids[pre], system, pre, par.get("type", ""), par.get("instruction", "")))
                text_id = ids[pre]
                posts.append((text_id, system, writer, par["postedit"]))
                for k, e in enumerate(par["fine_grained_edits"]):
                    original, revised = e["originalText"], e["editedText"]
                    category = normalize_category(e["categorization"])
                    action = "delete" if not revised.strip() else "replace"
                    edits.append(
                        (
                            text_id,
                            system,
                            writer,
                            k,
                            action,
                            f"Human edit by {writer} (LAMP category: {category})",
                            revision_level(original),
                            category,
                            original,
                            revised,
                        )
                    )
            except KeyError as err:
                raise FormatError(f"paragraph lacks the field {err}", file=path.name, rows=[row]) from err
            except (TypeError, AttributeError) as err:  # a number or list where an object or text belongs
                raise FormatError(f"paragraph is not in the LAMP layout ({err})", file=path.name, rows=[row]) from err
    return LampData(
        drafts=pd.DataFrame(drafts, columns=["text_id", "system", "draft", "type", "instruction"]),
        postedits=pd.DataFrame(posts, columns=["text_id", "system", "editor", "postedit"]),
        edits=pd.DataFrame(edits, columns=list(EDIT_COLUMNS)),
    )


if __name__ == "__main__":  # python -m lib.revision.lamp: how well the human edits reproduce postedit
    from lib.revision.locate import locate_edits
    from lib.revision.metrics import postedit_reproduction

    lamp = load_lamp()
    located = locate_edits(lamp.edits, lamp.drafts)
    rep = postedit_reproduction(located, lamp.evaluated)
    print(
        f"{len(rep)} paragraphs, {len(located)} edits, {int((~located['located']).sum())} unlocated, "
        f"{int((~located['applied'] & located['located']).sum())} not applied (overlap)"
    )
    print(
        f"mean similarity to postedit: {rep['similarity'].mean():.4f} (unedited preedit: {rep['baseline'].mean():.4f})"
    )
    print(
        f"exact reproduction (whitespace-normalised): {rep['exact'].mean():.3f} ({int(rep['exact'].sum())}/{len(rep)})"
    )
