"""Importing :mod:`ui` does nothing visible; every page hands a legacy-mode run over to app.py itself.

A page opened by its URL on a fresh server runs alone (Streamlit's legacy ``pages/`` mode) until it
calls :func:`ui.navigation.serve_through_app` (the browser test tests/browser/test_direct_url.py shows
the result). That call is each page's first statement, not a side effect of importing a helper."""

from __future__ import annotations

import ast
import importlib
import sys
from unittest import mock

from lib.io.paths import ROOT
from ui.navigation import SECTIONS


def test_importing_ui_calls_no_streamlit_command():
    saved = {name: module for name, module in sys.modules.items() if name == "ui" or name.startswith("ui.")}
    try:
        for name in saved:
            del sys.modules[name]
        with (
            mock.patch("streamlit.session_state", {}),  # a new session: nothing handed over yet
            mock.patch("streamlit.navigation") as navigation,
            mock.patch("streamlit.rerun") as rerun,
        ):
            importlib.import_module("ui")
            importlib.import_module("ui.navigation")
        assert not navigation.called and not rerun.called
    finally:
        sys.modules.update(saved)


def _first_call(page: str) -> str | None:
    """The name of the function the page's first statement after its imports calls."""
    body = ast.parse((ROOT / page).read_text(encoding="utf-8")).body
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom) or (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)  # the module docstring
        ):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
            return node.value.func.id
        return None
    return None


def test_every_page_hands_over_to_app_first():
    pages = [path for section in SECTIONS.values() for path, _title, _icon in section]
    assert sorted(pages) == sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))
    assert {page: _first_call(page) for page in pages} == dict.fromkeys(pages, "serve_through_app")
