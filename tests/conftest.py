"""Helpers shared by the lib tests."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from lib.ratings import RatingMatrix


def rating_matrix_from_codes(codes: np.ndarray) -> RatingMatrix:
    """Net ratings -3..3 from category codes (I, J), -1 missing; no named systems (simulated data)."""
    n_comp, n_prompts = codes.shape
    ids = np.array([f"p{j}" for j in range(n_prompts)])
    return RatingMatrix(
        u=np.where(codes >= 0, codes - 3.0, np.nan),
        comparisons=pd.DataFrame({"comparison": [f"c{i}" for i in range(n_comp)], "system_a": "", "system_b": ""}),
        prompt_ids=ids,
        categories=np.arange(-3, 4),
        groups=pd.DataFrame({"prompt_id": ids, "group": ids}),
        n_votes=(codes >= 0).astype(np.int64),
    )


@pytest.fixture(autouse=True, scope="session")
def _own_cache_dir(tmp_path_factory):
    """Fits, rankings and plans made by tests go to a temporary folder, never the repository's .cache
    (a test that wants a fresh cache sets ``EVAL_CACHE_DIR`` itself)."""
    if "EVAL_CACHE_DIR" not in os.environ:
        os.environ["EVAL_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
        yield
        del os.environ["EVAL_CACHE_DIR"]
    else:
        yield


@pytest.fixture
def codes_to_matrix():
    """:func:`rating_matrix_from_codes`, for tests that fit simulated codes."""
    return rating_matrix_from_codes
