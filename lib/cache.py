"""The rules every on-disk cache follows (fits, LLM answers): a damaged entry is a miss and is
removed, writes are atomic under concurrency, a cache that cannot be written only warns, and the
folder stays within a bound."""

from __future__ import annotations

import contextlib
import os
import tempfile
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path


def discard(*paths: Path) -> None:
    """Remove cache files (best effort: the cache may be read-only, or another session was first)."""
    for path in paths:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def write_atomic(path: Path, write: Callable[[str], None]) -> None:
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


def store(path: Path, write: Callable[[str], None], what: str) -> bool:
    """:func:`write_atomic`, but a failure only warns (``RuntimeWarning``): the result the caller
    computed is still returned to the user, just not cached. Returns whether it was written."""
    try:
        write_atomic(path, write)
    except OSError as err:
        warnings.warn(f"the {what} cache {path.parent} cannot be written ({err.strerror or err}); "
                      "the result is kept but not cached", RuntimeWarning, stacklevel=3)
        return False
    return True


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
