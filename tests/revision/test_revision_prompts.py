"""Prompt templates (lib.revision.prompts): unknown names and missing references are typed errors."""

from __future__ import annotations

import pytest

from lib.errors import SettingsError
from lib.revision.prompts import REFERENCE_BASED, build_messages, prompt_template


def test_prompt_errors_are_settings_errors():
    with pytest.raises(SettingsError, match="needs a reference"):
        build_messages(REFERENCE_BASED, "draft", None)
    with pytest.raises(SettingsError, match="unknown prompt 'nope'; the prompts are reference-based, reference-free"):
        prompt_template("nope")
    assert prompt_template("reference-free").needs_reference is False
