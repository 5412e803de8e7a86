"""The rules every on-disk cache follows (fits, rankings, plans, LLM answers).

- Reading: an entry that is absent is a miss; one that is not a regular file (a folder, a FIFO, a
  device, a link), cannot be read or parsed, was stored for another request, or whose parts are not
  the ones written together (each entry's metadata holds the SHA-256 of its payload) is a miss too,
  and is removed (:func:`load`).
- Writing: the payload is made in memory first (netcdf through :func:`netcdf_bytes`, so no library
  writes to disk), the free space is checked against its size, and it is written under a unique
  temporary name and renamed (:func:`write_bytes`): a full disk is an ``OSError`` before or during a
  plain write, never a half-written file or a crash in a library's close path. A cache that cannot be
  written only warns (:func:`store`); the result the caller computed is returned all the same.
- Size: the folder stays within a count and a byte bound (:func:`prune`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import os
import shutil
import stat
import tempfile
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

T = TypeVar("T")

FREE_SPACE_MARGIN = 32 * 2**20
"""Bytes left free on the disk after a cache write: a cache never fills a disk the user needs."""


def discard(*paths: Path) -> None:
    """Remove cache entries, files or whatever stands in their place (a folder, a link: never what a
    link points to). Best effort: the cache may be read-only, or another session was first."""
    for path in paths:
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def read(path: Path) -> bytes:
    """The bytes of a cache file, opened without following a link and without blocking on a FIFO.

    Raises
    ------
    FileNotFoundError
        Nothing at ``path``.
    OSError
        Not a regular file (a folder, FIFO, device or link), or unreadable.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return f.read()


def load(paths: Path | Sequence[Path], parse: Callable[..., T]) -> T | None:
    """``parse(*contents)`` of one entry's files, or None.

    Never raises: when a file is missing the entry is a miss; when any file is not a readable
    regular file, or ``parse`` raises (damaged content, another request's entry, a payload that is not
    the one its metadata names, values that a computation cannot have produced), the entry is a miss
    and all its files are removed.
    """
    files = [paths] if isinstance(paths, Path) else list(paths)
    try:
        contents = [read(p) for p in files]
    except FileNotFoundError:
        return None
    except OSError:
        discard(*files)
        return None
    try:
        return parse(*contents)
    except Exception:  # whatever a damaged entry raises, it is a miss, never an error
        discard(*files)
        return None


def digest(raw: bytes) -> str:
    """SHA-256 of a payload (hexadecimal): stored in an entry's metadata, checked by the loader."""
    return hashlib.sha256(raw).hexdigest()


def check_digest(raw: bytes, expected: object) -> None:
    """Raise ``LookupError`` unless ``raw`` is the payload whose :func:`digest` is ``expected``."""
    if digest(raw) != expected:
        raise LookupError("the payload is not the one this entry's metadata was written with")


def write_atomic(path: Path, write: Callable[[str], object]) -> None:
    """Write ``path`` through ``write(temporary_name)`` and a rename.

    The temporary file is unique and in the same folder, so concurrent writers of one key never
    share it and a reader never sees a half-written file.

    Raises
    ------
    OSError
        The folder cannot be written (the temporary file is removed).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        discard(Path(tmp))
        raise


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` atomically (:func:`write_atomic`) after checking that the disk keeps
    :data:`FREE_SPACE_MARGIN` bytes free.

    Raises
    ------
    OSError
        ``ENOSPC`` when the disk has too little room (nothing is written), or the write failed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(path.parent).free
    if free < len(data) + FREE_SPACE_MARGIN:
        raise OSError(
            errno.ENOSPC,
            f"{free / 2**20:.1f} MB free on the disk, {len(data) / 2**20:.1f} MB needed "
            f"and {FREE_SPACE_MARGIN // 2**20} MB kept free",
        )
    write_atomic(path, lambda tmp: Path(tmp).write_bytes(data))


def store(path: Path, data: bytes, what: str) -> bool:
    """:func:`write_bytes`, but a failure only warns (``RuntimeWarning``): the result the caller
    computed is still returned to the user, just not cached. Returns whether it was written."""
    try:
        write_bytes(path, data)
    except OSError as err:
        warnings.warn(
            f"the {what} cache {path.parent} cannot be written ({err.strerror or err}); "
            "the result is kept but not cached",
            RuntimeWarning,
            stacklevel=3,
        )
        return False
    return True


def netcdf_bytes(idata: Any) -> bytes:
    """An ``arviz.InferenceData`` as netcdf file contents, made in memory (as ``idata.to_netcdf``
    writes it: attributes at the root, one group per group, whole numbers and flags zlib-compressed; draws of
    real numbers are written as they are: they do not compress (an arena's entry, 1,000 skill draws and 50 of
    20,000 prompts' alpha: 5% smaller for an eight times longer write, 0.8 s against 0.1 s).

    h5netcdf writing to a file crashed the process (segmentation fault in its close) when the disk
    filled half-way; in memory nothing can fail half-way, and the bytes are then written plainly.
    Dask's local scheduler is set for the write: in a Dask worker xarray would otherwise guard the
    buffer with a cluster-wide lock named after it, which failed every save and then hung the worker
    (tests/test_cache_in_worker.py).
    """
    import dask
    import xarray as xr

    buf = io.BytesIO()
    mode: Literal["w", "a"] = "w"
    with dask.config.set(scheduler="synchronous"):
        if idata.attrs:
            xr.Dataset(attrs=idata.attrs).to_netcdf(buf, mode=mode, engine="h5netcdf", group="/")
            mode = "a"
        for group in idata.groups():
            data = getattr(idata, group)
            encoding = {
                name: {"zlib": v.dtype.kind in "biu"} for name, v in data.variables.items() if v.dtype.kind in "biufc"
            }
            data.to_netcdf(buf, mode=mode, group=group, engine="h5netcdf", encoding=encoding)
            mode = "a"
    return buf.getvalue()


def netcdf_from_bytes(raw: bytes) -> Any:
    """The ``arviz.InferenceData`` of :func:`netcdf_bytes`' contents, loaded into memory."""
    import arviz as az

    idata = az.from_netcdf(io.BytesIO(raw))
    idata.load()
    return idata


def require_finite(idata: Any, group: str = "posterior") -> None:
    """Raise ``ValueError`` unless every variable of ``idata``'s group holds finite numbers only (a
    fit never stores NaN or inf draws: such an entry was damaged or edited)."""
    import numpy as np

    for name, values in getattr(idata, group).data_vars.items():
        array = values.to_numpy()
        if array.dtype.kind in "fc" and not np.isfinite(array).all():
            raise ValueError(f"{group} variable {name} holds values that are not finite")


def prune(entries: Iterable[list[Path]], *, max_entries: int, max_bytes: int) -> None:
    """Keep the newest cache entries within a count and a size bound, removing the oldest.

    Parameters
    ----------
    entries : iterable of lists of Path
        Each entry's files, its first file dating it (modification time).
    max_entries, max_bytes : int
        Bounds; the newest entry is kept even when it alone is larger than ``max_bytes``.
    """
    dated = []
    for files in entries:
        with contextlib.suppress(OSError):  # another session may remove it meanwhile
            size = sum(f.stat().st_size for f in files if f.exists())
            dated.append((files[0].stat().st_mtime, size, files))
    dated.sort(key=lambda e: e[0], reverse=True)
    total = 0
    for rank, (_, size, files) in enumerate(dated):
        total += size
        if rank >= max_entries or (rank > 0 and total > max_bytes):
            discard(*files)
