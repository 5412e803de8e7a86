"""The bundled LAMP human edits (lib.revision.lamp): tables, categories, and damaged files as typed errors."""

from __future__ import annotations

import pytest

from lib.errors import FormatError
from lib.revision.lamp import WRITERS, load_lamp, normalize_category
from lib.revision.locate import locate_edits
from lib.revision.metrics import revision_distance


def test_lamp_tables():
    lamp = load_lamp()
    assert len(lamp.edits) == 1093 and lamp.evaluated.groupby("editor").size().to_dict() == {
        "W12": 50,
        "W16": 50,
        "W3": 50,
    }
    assert set(lamp.drafts["system"]) == {"gpt4o", "claude3.5-sonnet", "llama370B"}
    assert normalize_category("Unnecessary/ Redundant Exposition") == "Unnecessary/Redundant Exposition"
    assert lamp.edits["revision_intention"].str.contains("/ ").sum() == 0
    rd = revision_distance(locate_edits(lamp.edits, lamp.drafts), lamp.evaluated)
    assert rd["revision_distance"].sum() == 1093


def test_a_writers_post_edit_paragraphs_are_the_references_of_the_paragraphs_it_revised():
    lamp = load_lamp()
    refs = lamp.with_reference("W12")
    assert refs.columns.tolist() == ["text_id", "system", "draft", "reference"] and len(refs) == len(lamp.drafts) == 54
    mine = lamp.postedits[lamp.postedits["editor"] == "W12"]
    assert refs["reference"].notna().sum() == len(mine) == 50
    assert set(refs.dropna()["reference"]) == set(mine["postedit"])


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"preedit": "x"}', "\udcff"])
def test_a_damaged_writer_file_is_a_format_error_naming_it(tmp_path, content):
    (tmp_path / "raw").mkdir()
    for writer in WRITERS:
        (tmp_path / "raw" / f"{writer}_edits.json").write_text("[]")
    (tmp_path / "raw" / "W12_edits.json").write_text(content, encoding="utf-8", errors="surrogateescape")
    with pytest.raises(FormatError, match=r"W12_edits.json"):
        load_lamp(tmp_path)
    with pytest.raises(FormatError, match="cannot read the LAMP edits"):
        load_lamp(tmp_path / "absent")
