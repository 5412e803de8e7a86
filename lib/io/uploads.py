"""Uploads kept on disk so that a browser reload finds them (issue 29 item 4).

A reload starts a new Streamlit session, whose memory is empty: the upload of the Data page was gone, although
the URL said ``data=upload``. The file is stored in the cache (``cache_dir("uploads")``) under a random key
that the URL carries (``?data=upload&upload=KEY``), with the choices made on the Data page to read it (format,
columns, criterion, filter). Whoever has the link on this server can open the upload, as they could open the
page; the key is 128 random bits, so it cannot be guessed. Entries older than :data:`MAX_AGE_DAYS` days, and
the oldest beyond :data:`MAX_ENTRIES` or :data:`MAX_BYTES`, are removed.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lib.io.cache import check_digest, digest, discard, load, prune, store
from lib.io.paths import cache_dir

MAX_FILE_BYTES = 50 * 2**20
"""The largest upload kept: the app's own upload limit (``.streamlit/config.toml``, ``maxUploadSize``)."""

MAX_ENTRIES, MAX_BYTES = 20, 200 * 2**20
"""Bounds of the kept uploads; the oldest go first."""

MAX_AGE_DAYS = 7
"""An upload not used for this long is removed (its choices are written again whenever they change)."""

KEY = re.compile(r"[A-Za-z0-9_-]{22}")
"""What a key looks like (``secrets.token_urlsafe(16)``): anything else is never looked up on disk."""


@dataclass
class KeptUpload:
    """A kept upload: the file's ``name`` and bytes, and the Data page's ``choices`` to read it (JSON values)."""

    name: str
    data: bytes
    choices: dict[str, Any] = field(default_factory=dict)


def _paths(key: str) -> tuple[Path, Path]:
    folder = cache_dir("uploads")
    return folder / f"{key}.json", folder / f"{key}.bin"


def keep_upload(name: str, data: bytes) -> str | None:
    """Store an upload and return its key, or None when it cannot be kept (larger than
    :data:`MAX_FILE_BYTES`, or the cache cannot be written: a warning says why)."""
    if len(data) > MAX_FILE_BYTES:
        return None
    key = secrets.token_urlsafe(16)
    meta, body = _paths(key)
    if not store(body, data, "upload") or not _write_meta(key, name, digest(data), {}):
        discard(meta, body)
        return None
    _prune()
    return key


def _write_meta(key: str, name: str, sha: str, choices: dict[str, Any]) -> bool:
    meta, _ = _paths(key)
    return store(meta, json.dumps({"key": key, "name": name, "sha256": sha, "choices": choices}).encode(), "upload")


def kept_upload(key: str) -> KeptUpload | None:
    """The upload kept under ``key``, or None (not a key, never kept here, removed, or damaged)."""
    if not KEY.fullmatch(key):
        return None

    def parse(meta: bytes, body: bytes) -> KeptUpload:
        entry = json.loads(meta.decode("utf-8"))
        if entry["key"] != key:
            raise LookupError("another upload's entry")
        check_digest(body, entry["sha256"])
        return KeptUpload(str(entry["name"]), body, dict(entry["choices"]))

    return load(list(_paths(key)), parse)


def keep_choices(key: str, choices: dict[str, Any]) -> bool:
    """Store the Data page's choices for the upload kept under ``key`` (JSON values), which also marks it as in
    use; False when it is no longer kept."""
    found = kept_upload(key)
    return found is not None and _write_meta(key, found.name, digest(found.data), choices)


def _prune() -> None:
    """Remove kept uploads older than :data:`MAX_AGE_DAYS`, then the oldest beyond the bounds."""
    folder = cache_dir("uploads")
    entries = [[meta, meta.with_suffix(".bin")] for meta in folder.glob("*.json")]
    discard(*(body for body in folder.glob("*.bin") if not body.with_suffix(".json").exists()))  # half-written
    oldest = time.time() - MAX_AGE_DAYS * 86400
    for files in entries:
        try:
            if files[0].stat().st_mtime < oldest:
                discard(*files)
        except OSError:  # removed meanwhile by another session
            continue
    prune(([m, b] for m, b in entries if m.exists()), max_entries=MAX_ENTRIES, max_bytes=MAX_BYTES)
