"""The fit cache: one format and one key for every fit (the rules of :mod:`lib.cache`).

An entry is two files named by its key (64 hexadecimal digits, :meth:`FitStore.key`): the posterior
as arviz netcdf (``{key}.nc``) and a JSON (``{key}.json``, written last) of the store format, the
key, the request it answers (data digest, settings, options), the netcdf's SHA-256, the diagnostics
and what the model keeps beside the draws (``extra``). An entry of another format (older entries
included), key or request, whose parts were not written together, or whose draws are not finite is
a miss, and is removed (:func:`lib.cache.load`). Each kind of fit has its own folder
(``lib.paths.cache_dir(kind)``), kept within :data:`CACHE_MAX_ENTRIES` and :data:`CACHE_MAX_BYTES`.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from lib.cache import (
    check_digest,
    digest,
    discard,
    load,
    netcdf_bytes,
    netcdf_from_bytes,
    prune,
    require_finite,
    write_bytes,
)
from lib.inference.diagnostics import Diagnostics, diagnostics_from_json, diagnostics_json
from lib.paths import cache_dir

T = TypeVar("T")

STORE_VERSION = 3
"""The entries' format: part of every key and checked on reading (entries of another format miss)."""

CACHE_MAX_ENTRIES = 50
CACHE_MAX_BYTES = 200 * 2**20
"""Bounds of each fit cache folder; the oldest entries are removed on save (one session of
refits grew it to 128 MB)."""


def digest_of(*values: Any) -> str:
    """SHA-256 (64 hexadecimal digits) of data: arrays by dtype, shape and bytes, tables by their CSV,
    dataclasses field by field (so a field added later is hashed without a change here), other
    values by their JSON (labels hash their text, never their pointers)."""
    h = hashlib.sha256()

    def add(value: Any) -> None:
        if is_dataclass(value) and not isinstance(value, type):
            for f in fields(value):
                h.update(f.name.encode())
                add(getattr(value, f.name))
        elif isinstance(value, np.ndarray) and value.dtype.kind not in "OUS":
            h.update(f"{value.dtype}{value.shape}".encode())
            h.update(np.ascontiguousarray(value).tobytes())
        elif hasattr(value, "to_csv"):  # a table
            h.update(value.to_csv(index=False).encode())
        else:
            h.update(json.dumps(value.tolist() if isinstance(value, np.ndarray) else value, default=str).encode())

    for value in values:
        add(value)
    return h.hexdigest()


def arrays_json(arrays: dict[str, np.ndarray]) -> dict:
    """Named arrays as JSON values (with their dtypes), for an entry's ``extra``."""
    return {
        "values": {n: np.asarray(v).tolist() for n, v in arrays.items()},
        "dtypes": {n: str(np.asarray(v).dtype) for n, v in arrays.items()},
    }


def arrays_from_json(entry: dict) -> dict[str, np.ndarray]:
    """The inverse of :func:`arrays_json`.

    Raises
    ------
    ValueError
        A value is not finite (no fit stores one: the entry was damaged or edited).
    """
    arrays = {n: np.asarray(v, dtype=entry["dtypes"][n]) for n, v in entry["values"].items()}
    if not all(np.isfinite(v).all() for v in arrays.values()):
        raise ValueError("a stored array is not finite")
    return arrays


@dataclass
class Stored:
    """A cache entry read back: the posterior, its diagnostics and the model's ``extra`` (JSON)."""

    idata: Any
    diagnostics: Diagnostics
    extra: dict


def _normal(value: Any) -> Any:
    """``value`` as it reads back from JSON (tuples become lists)."""
    return json.loads(json.dumps(value))


class FitStore:
    """The cache folder of one kind of fit.

    Parameters
    ----------
    kind : str
        ``lib.paths.cache_dir(kind)`` holds the entries (``"fits"``: the GRM; ``"rankings"``).
    model_version : int
        Raise it when the model changes: it is part of every key and request, so older entries miss.
    """

    def __init__(self, kind: str, model_version: int) -> None:
        self.kind, self.model_version = kind, model_version

    @property
    def folder(self) -> Path:
        """The cache folder (read from the environment on each use)."""
        return cache_dir(self.kind)

    def request(self, data: str, settings: Any, **options: Any) -> dict:
        """What a fit answers: the digest of its data, its settings (a dataclass) and other options."""
        return _normal({"model": self.model_version, "data": data, "settings": asdict(settings), "options": options})

    def key(self, request: dict) -> str:
        """The entry's name: SHA-256 of the store format, the kind and the request (64 hex digits)."""
        return hashlib.sha256(json.dumps([STORE_VERSION, self.kind, request]).encode()).hexdigest()

    def paths(self, key: str) -> tuple[Path, Path]:
        """The entry's files: (JSON, netcdf)."""
        return self.folder / f"{key}.json", self.folder / f"{key}.nc"

    def load(self, request: dict, read: Callable[[Stored], T]) -> T | None:
        """``read`` of the entry answering ``request`` (the model's fit), or None.

        Never raises (:func:`lib.cache.load`): an unreadable entry (truncated file, other format, a
        folder), one stored for another request, whose .nc is not the one its .json was written
        with (SHA-256), whose draws are not all finite, or that ``read`` refuses (raises: e.g. a
        posterior that does not fit the data) is a miss, and its files are removed.
        """
        key = self.key(request)

        def parse(meta: bytes, raw: bytes) -> T:
            entry = json.loads(meta.decode("utf-8"))
            if (entry["format"], entry["key"], entry["request"]) != (STORE_VERSION, key, request):
                raise LookupError("the entry belongs to another format, data or settings")
            check_digest(raw, entry["nc_sha256"])
            diagnostics = diagnostics_from_json(entry["diagnostics"])
            idata = netcdf_from_bytes(raw)
            require_finite(idata)
            return read(Stored(idata, diagnostics, entry["extra"]))

        return load(list(self.paths(key)), parse)

    def save(self, request: dict, idata: Any, diagnostics: Diagnostics, extra: dict | None = None) -> Path:
        """Write an entry (:mod:`lib.cache`: made in memory, free space checked, atomic) and remove the
        oldest beyond the bounds. Returns the .nc path.

        Raises
        ------
        OSError
            The cache folder cannot be written.
        """
        key = self.key(request)
        meta, nc = self.paths(key)
        raw = netcdf_bytes(idata)  # in memory: a full disk fails the plain write below, cleanly
        entry = {
            "format": STORE_VERSION,
            "key": key,
            "request": request,
            "nc_sha256": digest(raw),
            "diagnostics": json.loads(diagnostics_json(diagnostics)),
            "extra": extra or {},
        }
        write_bytes(nc, raw)
        write_bytes(meta, json.dumps(entry).encode("utf-8"))  # last: it names the .nc written before it
        prune(
            ([f, f.with_suffix(".json")] for f in self.folder.glob("*.nc")),
            max_entries=CACHE_MAX_ENTRIES,
            max_bytes=CACHE_MAX_BYTES,
        )
        return nc

    def remember(self, name: str, value: dict) -> None:
        """Write a small JSON note ``{name}.json`` (e.g. which fit of some data was the user's last).

        Raises
        ------
        OSError
            The cache folder cannot be written.
        """
        write_bytes(self.folder / f"{name}.json", json.dumps(value).encode("utf-8"))

    def recall(self, name: str, parse: Callable[[dict], Any]) -> Any:
        """``parse`` of the note :meth:`remember` wrote, or None; a damaged note (or one ``parse``
        refuses) is a miss and is removed."""
        return load(self.folder / f"{name}.json", lambda raw: parse(json.loads(raw.decode("utf-8"))))

    def forget(self, name: str) -> None:
        """Remove a note."""
        discard(self.folder / f"{name}.json")


def try_cache_write(write: Callable[[], object], warnings_list: list[str]) -> None:
    """Run a cache write; on failure warn (``RuntimeWarning``) and append the message to
    ``warnings_list`` (a fit's ``diagnostics.warnings``): the result stands, it is just not cached."""
    try:
        write()
    except Exception as err:  # whatever the cache does, the fit stands
        reason = getattr(err, "strerror", None) or err
        message = f"the fit could not be saved in the cache ({reason}): it is not kept for next time."
        warnings.warn(message, RuntimeWarning, stacklevel=3)
        warnings_list.append(message)
