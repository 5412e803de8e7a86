"""Synthetic data from the graded response model with known parameters (tests and benchmarks)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib.irt.readouts import category_probs


@dataclass
class SimulatedGRM:
    """Codes drawn from the GRM and the parameters that drew them.

    codes : (I, J) int64 category index; theta : (I,); alpha : (J,); b : (J, K-1) logits.
    """

    codes: np.ndarray
    theta: np.ndarray
    alpha: np.ndarray
    b: np.ndarray


def simulate_grm(
    n_comparisons: int = 20,
    n_prompts: int = 200,
    n_categories: int = 7,
    *,
    seed: int = 0,
) -> SimulatedGRM:
    """Draw net ratings for the paper's design (20 comparisons x 200 prompts, u in [-3, 3]).

    Parameters follow the model's priors: theta ~ N(0, 1), log alpha ~ N(0, 0.5), and
    antisymmetric thresholds whose positive half is sorted |N(0, 2)| draws.
    """
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.0, n_comparisons)
    alpha = np.exp(rng.normal(0.0, 0.5, n_prompts))
    half = np.sort(np.abs(rng.normal(0.0, 2.0, (n_prompts, (n_categories - 1) // 2))), axis=1)
    b = np.concatenate([-half[:, ::-1], half], axis=1)
    probs = category_probs(theta, alpha, b)  # (I, J, K)
    cum = probs.cumsum(axis=-1)
    draws = rng.random((n_comparisons, n_prompts, 1))
    codes = np.minimum((draws > cum).sum(axis=-1), n_categories - 1).astype(np.int64)
    return SimulatedGRM(codes=codes, theta=theta, alpha=alpha, b=b)
