"""scripts/make_cost_example.py: the bundled synthetic study is its output."""

from __future__ import annotations

import pandas as pd
from cost_studies import EXAMPLE

from lib.io.paths import ROOT


def test_bundled_example_is_the_scripts_output():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_cost_example", ROOT / "scripts" / "make_cost_example.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made = module.make()
    bundled = pd.read_csv(EXAMPLE)
    pd.testing.assert_frame_equal(made.reset_index(drop=True), bundled, check_dtype=False)
    assert "SYNTHETIC" in (EXAMPLE.parent / "README.md").read_text()
