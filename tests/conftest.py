"""Helpers shared by the lib tests."""

from __future__ import annotations

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
        comparisons=pd.DataFrame({"comparison": [f"c{i}" for i in range(n_comp)], "system_a": "",
                                  "system_b": ""}),
        prompt_ids=ids, categories=np.arange(-3, 4),
        groups=pd.DataFrame({"prompt_id": ids, "group": ids}), n_votes=(codes >= 0).astype(np.int64),
    )


@pytest.fixture
def codes_to_matrix():
    """:func:`rating_matrix_from_codes`, for tests that fit simulated codes."""
    return rating_matrix_from_codes
