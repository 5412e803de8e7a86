"""Uploads kept on disk for a browser reload (issue 29 item 4): found again by their key, with their reading
choices; a key that is not one is never looked up; too large, damaged, old and surplus entries are not kept."""

from __future__ import annotations

import os
import time

import pytest

from lib.io import uploads
from lib.io.uploads import KEY, MAX_AGE_DAYS, keep_choices, keep_upload, kept_upload


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EVAL_CACHE_DIR", str(tmp_path))


def test_an_upload_is_found_again_by_its_key_with_its_choices():
    key = keep_upload("mine.csv", b"item,system_a,system_b,choice\nq1,x,y,A\n")
    assert key is not None and KEY.fullmatch(key)
    assert keep_choices(key, {"upload_format": "pairwise", "upload_filter_values": ["a"]})
    found = kept_upload(key)
    assert found is not None and found.name == "mine.csv" and found.data.startswith(b"item,")
    assert found.choices == {"upload_format": "pairwise", "upload_filter_values": ["a"]}
    assert keep_upload("mine.csv", b"x") != key  # every upload gets a key of its own


@pytest.mark.parametrize("key", ["../../etc/passwd", "", "short", "a" * 21 + "/", "x" * 200])
def test_a_key_that_is_not_one_is_never_looked_up(key, tmp_path):
    assert kept_upload(key) is None and not keep_choices(key, {})
    assert not (tmp_path / "uploads").exists()


def test_a_file_beyond_the_apps_upload_limit_is_not_kept(monkeypatch):
    monkeypatch.setattr(uploads, "MAX_FILE_BYTES", 10)
    assert keep_upload("big.csv", b"x" * 11) is None
    assert keep_upload("small.csv", b"x" * 10) is not None


def test_a_damaged_entry_is_a_miss_and_is_removed(tmp_path):
    key = keep_upload("mine.csv", b"a,b\n1,2\n")
    body = tmp_path / "uploads" / f"{key}.bin"
    body.write_bytes(b"a,b\n1,3\n")  # not the file whose digest the entry holds
    assert kept_upload(key) is None and not body.exists()


def test_old_and_surplus_uploads_are_removed(tmp_path, monkeypatch):
    old = keep_upload("old.csv", b"1")
    stale = time.time() - (MAX_AGE_DAYS + 1) * 86400
    os.utime(tmp_path / "uploads" / f"{old}.json", (stale, stale))
    monkeypatch.setattr(uploads, "MAX_ENTRIES", 2)
    keys = []
    for age in (20, 10, 0):  # stored in turn, the first the oldest
        keys.append(keep_upload("new.csv", b"2"))
        then = time.time() - age
        os.utime(tmp_path / "uploads" / f"{keys[-1]}.json", (then, then))
    keep_upload("newest.csv", b"3")
    assert kept_upload(old) is None
    assert [kept_upload(k) is not None for k in keys] == [False, False, True]  # the newest two are kept
