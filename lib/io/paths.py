"""Where the project's files are: the repository, its bundled data and the on-disk caches."""

from __future__ import annotations

import os
from pathlib import Path

import lib

ROOT = Path(lib.__file__).resolve().parents[1]
"""The repository (the folder holding ``lib/``, ``data/``, ``app.py``), found from the package itself
so that this module can live in any folder of it."""

DATA_DIR = ROOT / "data"
"""The bundled data sets (``data/README.md``)."""


def cache_dir(kind: str) -> Path:
    """The cache folder of one kind of result: ``$EVAL_CACHE_DIR/<kind>``, else ``.cache/<kind>``
    in the repository (not created here)."""
    return Path(os.environ.get("EVAL_CACHE_DIR") or ROOT / ".cache") / kind
