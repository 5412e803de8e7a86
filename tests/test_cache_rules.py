"""lib.io.cache: atomic writes, failed writes that only warn, and the size bound."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from lib.io.cache import prune, store, write_atomic


def test_concurrent_writers_of_one_key_never_collide_and_leave_no_temporary_files(tmp_path):
    target = tmp_path / "entry.json"
    errors = []

    def write(n: int) -> None:
        try:
            write_atomic(target, lambda tmp: Path(tmp).write_text(chr(65 + n) * 1000))
        except OSError as err:  # pragma: no cover - the failure this test is about
            errors.append(err)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    text = target.read_text()
    assert len(set(text)) == 1 and len(text) == 1000  # one writer's whole content, never a mix
    assert [p.name for p in tmp_path.iterdir()] == ["entry.json"]


def test_a_failed_write_warns_and_keeps_nothing(tmp_path):
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("a file where the cache folder should be")
    with pytest.warns(RuntimeWarning, match="cannot be written"):
        assert store(blocker / "x.json", b"{}", "test") is False


def test_prune_keeps_the_newest_entries_within_count_and_size(tmp_path):
    entries = []
    for n in range(5):
        f = tmp_path / f"{n}.nc"
        f.write_bytes(b"x" * 100)
        os.utime(f, (n, n))  # entry n is the n-th oldest
        entries.append([f])
    prune(entries, max_entries=3, max_bytes=10_000)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2.nc", "3.nc", "4.nc"]
    prune([[tmp_path / f"{n}.nc"] for n in (2, 3, 4)], max_entries=10, max_bytes=150)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["4.nc"]  # the newest stays even alone over the bound


def test_draws_of_real_numbers_are_written_uncompressed_and_whole_numbers_compressed():
    """Float draws do not compress (zlib saved 5% of an arena's entry for an eight times longer write): written
    as they are, re-written so after a read (which carries the file's encoding); counts and flags compressed."""
    import io

    import arviz as az
    import h5py
    import numpy as np

    from lib.io.cache import netcdf_bytes, netcdf_from_bytes

    rng = np.random.default_rng(0)
    idata = az.from_dict(
        posterior={"skill": rng.normal(size=(1, 50, 3))}, sample_stats={"diverging": np.zeros((1, 50), dtype=bool)}
    )
    for raw in (netcdf_bytes(idata), netcdf_bytes(netcdf_from_bytes(netcdf_bytes(idata)))):
        with h5py.File(io.BytesIO(raw), "r") as f:
            assert f["posterior/skill"].compression is None
            assert f["sample_stats/diverging"].compression == "gzip"
        np.testing.assert_array_equal(netcdf_from_bytes(raw).posterior["skill"], idata.posterior["skill"])
