"""Calibrated item parameters of a prompt bank: one point estimate or weighted posterior draws."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from lib.irt.readouts import DEFAULT_GRID, item_loglik

_CHUNK = 1_000_000
"""Cells (draws x grid points x prompts) per block when evaluating the log-likelihood: each of the
few float64 temporaries of a block then takes about 8 MB."""


@dataclass(frozen=True)
class ItemParams:
    """Item parameters of J prompts on a theta scale with prior N(0, 1).

    Attributes
    ----------
    alpha : ndarray, shape (S, J)
        Discriminations, one row per draw (S = 1 for a point estimate).
    b : ndarray, shape (S, J, K-1)
        Ordered thresholds, logits.
    log_weights : ndarray, shape (S,)
        Normalised log weights of the draws (uniform, or leave-one-out importance weights).
    """

    alpha: np.ndarray
    b: np.ndarray
    log_weights: np.ndarray

    @classmethod
    def point(cls, alpha: np.ndarray, b: np.ndarray) -> ItemParams:
        """A single point estimate, alpha (J,) and b (J, K-1)."""
        return cls(np.asarray(alpha, float)[None], np.asarray(b, float)[None], np.zeros(1))

    @classmethod
    def draws(cls, alpha: np.ndarray, b: np.ndarray, log_weights: np.ndarray | None = None) -> ItemParams:
        """Posterior draws, alpha (S, J) and b (S, J, K-1), with optional log weights (S,)."""
        alpha = np.asarray(alpha, float)
        lw = np.zeros(len(alpha)) if log_weights is None else np.asarray(log_weights, float)
        return cls(alpha, np.asarray(b, float), lw - logsumexp(lw))

    @property
    def n_draws(self) -> int:
        """S, the number of draws (1 for a point estimate)."""
        return self.alpha.shape[0]

    def mean(self) -> tuple[np.ndarray, np.ndarray]:
        """Weighted posterior means ``(alpha (J,), b (J, K-1))``; the point itself for S = 1."""
        w = np.exp(self.log_weights)
        return w @ self.alpha, np.tensordot(w, self.b, axes=1)

    def reweighted(self, log_weights: np.ndarray) -> ItemParams:
        """The same draws with new log weights (S,)."""
        return ItemParams.draws(self.alpha, self.b, log_weights)

    def linked(self, scale: float, shift: float = 0.0) -> ItemParams:
        """Re-express on the scale ``theta' = scale * theta + shift`` (IRT linking).

        ``alpha (theta - b)`` is kept: ``alpha' = alpha / scale``, ``b' = scale * b + shift``.
        """
        return ItemParams(self.alpha / scale, self.b * scale + shift, self.log_weights)

    def loglik(self, codes_row: np.ndarray, grid: np.ndarray = DEFAULT_GRID) -> np.ndarray:
        """Per-prompt log-likelihood of one comparison's codes, shape (S, J, G), in blocks of draws.

        Missing prompts (code -1) contribute 0. See :func:`lib.irt.readouts.item_loglik`.
        """
        step = max(1, _CHUNK // (len(grid) * self.alpha.shape[1]))
        return np.concatenate(
            [
                item_loglik(codes_row, self.alpha[s : s + step], self.b[s : s + step], grid)
                for s in range(0, self.n_draws, step)
            ]
        )
