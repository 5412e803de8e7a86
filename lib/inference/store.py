"""The fit cache: one format and one key for every fit (the rules of :mod:`lib.io.cache`).

An entry is two files named by its key (64 hexadecimal digits, :meth:`FitStore.key`): the posterior
as arviz netcdf (``{key}.nc``) and a JSON (``{key}.json``, written last) of the store format, the
key, the request it answers (data digest, settings, options), the netcdf's SHA-256, the diagnostics
and what the model keeps beside the draws (``extra``). An entry of another format (older entries
included), key or request, whose parts were not written together, or whose draws are not finite is
a miss, and is removed (:func:`lib.io.cache.load`). Each kind of fit has its own folder
(``lib.io.paths.cache_dir(kind)``), kept within :data:`CACHE_MAX_ENTRIES` and :data:`CACHE_MAX_BYTES`.

What can be recomputed is not written: a store made with ``thin_dim`` keeps of each posterior
variable of that dimension larger than :data:`THIN_VALUES` values only every few draws and its exact
mean (:func:`thinned`, :func:`restored`). An arena of 20,000 prompts x 1,000 Laplace draws held 160 MB
of prompt discriminations, 15 s of netcdf writing, where the leaderboard reads only their means.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from lib.inference.diagnostics import Diagnostics, diagnostics_from_json, diagnostics_json
from lib.io.cache import (
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
from lib.io.paths import cache_dir

T = TypeVar("T")

STORE_VERSION = 4
"""The entries' format: part of every key and checked on reading (entries of another format miss)."""

CACHE_MAX_ENTRIES = 50
CACHE_MAX_BYTES = 200 * 2**20
"""Bounds of each fit cache folder; the oldest entries are removed on save (one session of
refits grew it to 128 MB)."""
THIN_VALUES = 2**20
"""A variable of a store's ``thin_dim`` with more values than this is written thinned (:func:`thinned`)."""
THINNED, DRAW, MEAN = "__thinned", "__draw", "__mean"
"""Suffixes of a thinned variable's kept draws, of their draw dimension and of its exact mean in a
written posterior."""


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


def thinned(posterior: Any, dim: str) -> Any:
    """The posterior (xarray Dataset, dims ``chain, draw, ...``) as written to the cache: each variable
    of dimension ``dim`` with more than :data:`THIN_VALUES` values is replaced by every ``step``-th draw
    (``step`` = its size over :data:`THIN_VALUES`, rounded up; ``{name}__thinned``, draw dimension
    ``{name}__draw``) and its posterior mean over all draws (``{name}__mean``, float64); the others are kept whole."""
    out = posterior
    for name, var in posterior.data_vars.items():
        if dim in var.dims and var.size > THIN_VALUES:
            kept = var.isel(draw=slice(None, None, -(-var.size // THIN_VALUES)))
            out = out.drop_vars(name).assign(
                {
                    f"{name}{THINNED}": kept.drop_vars("draw").rename({"draw": f"{name}{DRAW}"}),
                    # draws are finite (a fit stores no NaN): the plain mean, not xarray's NaN-skipping copy (0.6 s
                    # for an arena's 20,000,000 alpha draws), summed in float64 whatever the draws' type
                    f"{name}{MEAN}": var.mean(("chain", "draw"), skipna=False, dtype=np.float64),
                }
            )
    return out


def restored(posterior: Any) -> Any:
    """The inverse of :func:`thinned` as far as the cache goes: each thinned variable gets back all its
    draws, each kept draw repeated ``step`` times and the whole shifted so that its mean over chains and
    draws is the stored one (to float64's rounding); variables kept whole are unchanged. The spread of a thinned
    variable is that of its kept draws: read-outs of it should use its mean."""
    out = posterior
    for name in [n.removesuffix(THINNED) for n in posterior.data_vars if n.endswith(THINNED)]:
        kept = posterior[f"{name}{THINNED}"].transpose("chain", f"{name}{DRAW}", ...)
        dims = kept.dims[2:]
        step = -(-posterior.sizes["draw"] // kept.shape[1])
        values = np.repeat(kept.to_numpy(), step, axis=1)[:, : posterior.sizes["draw"]]
        mean = posterior[f"{name}{MEAN}"].transpose(*dims).to_numpy()
        # in the mean's float64: the mean of float32 draws (the votes' alpha, lib.ranking.marginal) is then the stored
        # one to float64's rounding, as a fresh fit's read-outs take it (summed in float64)
        values = values + (mean - values.mean(axis=(0, 1), dtype=mean.dtype))
        out = out.drop_vars([f"{name}{THINNED}", f"{name}{MEAN}"]).assign({name: (("chain", "draw", *dims), values)})
    return out


def _with_posterior(idata: Any, posterior: Any) -> Any:
    """A new InferenceData of ``idata``'s groups and attributes with ``posterior`` in place of its own."""
    import arviz as az

    return az.InferenceData(attrs=idata.attrs, **({g: idata[g] for g in idata.groups()} | {"posterior": posterior}))


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
        ``lib.io.paths.cache_dir(kind)`` holds the entries (``"fits"``: the GRM; ``"rankings"``).
    model_version : int
        Raise it when the model changes: it is part of every key and request, so older entries miss.
    thin_dim : str, optional
        Posterior variables of this dimension (e.g. ``"prompt"``) are written thinned when large
        (:func:`thinned`): only for fits whose read-outs use their means alone.
    """

    def __init__(self, kind: str, model_version: int, thin_dim: str | None = None) -> None:
        self.kind, self.model_version, self.thin_dim = kind, model_version, thin_dim

    @property
    def folder(self) -> Path:
        """The cache folder (read from the environment on each use)."""
        return cache_dir(self.kind)

    def request(self, data: Sequence[Any], settings: Any, **options: Any) -> dict:
        """What a fit answers, every fit's one cache key (named by :meth:`key`): the digest of its data
        (:func:`digest_of` of the values ``data`` lists), its settings (a dataclass) and other options."""
        return _normal(
            {"model": self.model_version, "data": digest_of(*data), "settings": asdict(settings), "options": options}
        )

    def key(self, request: dict) -> str:
        """The entry's name: SHA-256 of the store format, the kind and the request (64 hex digits)."""
        return hashlib.sha256(json.dumps([STORE_VERSION, self.kind, request]).encode()).hexdigest()

    def paths(self, key: str) -> tuple[Path, Path]:
        """The entry's files: (JSON, netcdf)."""
        return self.folder / f"{key}.json", self.folder / f"{key}.nc"

    def load(self, request: dict, read: Callable[[Stored], T]) -> T | None:
        """``read`` of the entry answering ``request`` (the model's fit), or None.

        Never raises (:func:`lib.io.cache.load`): an unreadable entry (truncated file, other format, a
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
            if self.thin_dim is not None:
                idata = _with_posterior(idata, restored(idata["posterior"]))
            require_finite(idata)
            return read(Stored(idata, diagnostics, entry["extra"]))

        return load(list(self.paths(key)), parse)

    def save(self, request: dict, idata: Any, diagnostics: Diagnostics, extra: dict | None = None) -> Path:
        """Write an entry (:mod:`lib.io.cache`: made in memory, free space checked, atomic) and remove the
        oldest beyond the bounds. Returns the .nc path.

        Raises
        ------
        OSError
            The cache folder cannot be written.
        """
        key = self.key(request)
        meta, nc = self.paths(key)
        if self.thin_dim is not None:
            idata = _with_posterior(idata, thinned(idata["posterior"], self.thin_dim))
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
