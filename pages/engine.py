"""The Dask engine as the pages start it. Not a page itself; imported as ``pages.engine``."""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from lib.engine import Engine

SCHEDULER_SWITCH = "EVAL_ALLOW_SCHEDULER"
"""The app is served to strangers: only an operator who sets this to 1 lets visitors send tasks to a
Dask scheduler of their choice (``docs/planner.md``); otherwise the field is not shown."""


def scheduler_field(key: str, container=st) -> str | None:
    """The scheduler address typed in a text field shown only when :data:`SCHEDULER_SWITCH` is 1;
    None (an embedded cluster) when it is empty or not shown."""
    if os.environ.get(SCHEDULER_SWITCH) != "1":
        return None
    typed = container.text_input("Dask scheduler address (empty: an embedded cluster on this machine)", "",
                                 key=key, placeholder="tcp://HOST:8786")
    return typed.strip() or None


@contextmanager
def page_engine(scheduler: str | None = None) -> Iterator[Engine]:
    """:class:`lib.engine.Engine` entered under a bare ``__main__``.

    Streamlit installs the running page as ``sys.modules["__main__"]`` (with its ``__file__``), and
    the worker processes of an embedded cluster are spawned by multiprocessing, which re-imports
    ``__main__`` from that file in every child: each worker would run the page and fail to start.

    Raises
    ------
    lib.errors.SettingsError
        The scheduler cannot be reached (:class:`lib.engine.Engine`).
    """
    page_main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        engine = Engine(scheduler).__enter__()
    finally:
        sys.modules["__main__"] = page_main
    try:
        yield engine
    finally:
        engine.__exit__(None, None, None)
