"""Where a page may send its Dask tasks. Not a page itself; imported as ``ui.engine``."""

from __future__ import annotations

import os

import streamlit as st

SCHEDULER_SWITCH = "EVAL_ALLOW_SCHEDULER"
"""The app is served to strangers: only an operator who sets this to 1 lets visitors send tasks to a
Dask scheduler of their choice (``docs/planner.md``); otherwise the field is not shown."""


def scheduler_field(key: str, container=st) -> str | None:
    """The scheduler address typed in a text field shown only when :data:`SCHEDULER_SWITCH` is 1;
    None (an embedded cluster) when it is empty or not shown."""
    if os.environ.get(SCHEDULER_SWITCH) != "1":
        return None
    typed = container.text_input(
        "Dask scheduler address (empty: an embedded cluster on this machine)",
        "",
        key=key,
        placeholder="tcp://HOST:8786",
    )
    return typed.strip() or None
