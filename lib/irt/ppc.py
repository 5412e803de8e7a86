"""Posterior predictive checks of the graded response model on the net-rating matrix.

For S thinned posterior draws, one replicated matrix ``u_rep`` is drawn at the observed cells from
the GRM category probabilities (:func:`lib.irt.readouts.category_probs`). The observed number of
ratings in each category is compared with the replicates' counts, over all prompts and per prompt,
and each prompt gets a posterior predictive p-value for its mean net rating (Gelman, Meng & Stern
1996; Gelman et al. 2013, *Bayesian Data Analysis*, 3rd ed., sec. 6.3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from lib.errors import SettingsError
from lib.inference.settings import gives_posterior
from lib.irt.readouts import category_probs
from lib.irt.settings import needs_posterior

PPC_DRAWS = 200
"""Posterior draws replicated: the p-values are then known to about +-0.035 (binomial SE at 0.5)."""

INTERVAL = 0.94
"""Central mass of the replicated-count interval (arviz's default credible mass)."""

P_EXTREME = 0.025
"""A prompt whose p-value is below this or above 1 - this is flagged as misfitting. Posterior
predictive p-values crowd towards 0.5 under a model that fits (they are conservative), so a flag is
a strong signal, not a 5% test."""


CATEGORY_P = P_EXTREME
"""Family-wise level of the category verdict (:meth:`PosteriorPredictive.category_table`): a category
misfits when its count's two-sided mid-p-value is below CATEGORY_P / K (Bonferroni over the K
categories), e.g. 0.0036 for K = 7: no more than about 1 in 280 replicates as far out as the data."""


@dataclass
class PosteriorPredictive:
    """Observed and replicated net ratings of every prompt.

    Attributes
    ----------
    categories : ndarray, shape (K,)
        Value of each category, e.g. -3..3.
    prompt_ids : ndarray, shape (J,), str
    observed : ndarray, shape (J, K), int64
        Observed ratings of prompt j in category k (missing cells not counted).
    replicated : ndarray, shape (S, J, K), int64
        The same counts in each of the S replicates (same cells as observed).
    p_value : ndarray, shape (J,)
        ``P(mean u_rep > mean u_obs) + 0.5 P(mean u_rep = mean u_obs)`` over the replicates (the
        mid-p value, so that a discrete statistic is not pushed towards 1); NaN for a prompt with
        no rating. Near 0: the model predicts higher net ratings than observed; near 1: lower.
    """

    categories: np.ndarray
    prompt_ids: np.ndarray
    observed: np.ndarray
    replicated: np.ndarray
    p_value: np.ndarray

    def _counts(self, observed: np.ndarray, replicated: np.ndarray) -> pd.DataFrame:
        tail = (1 - INTERVAL) / 2
        # inverted_cdf keeps the bounds on observable (integer) counts.
        low, high = np.quantile(replicated, [tail, 1 - tail], axis=0, method="inverted_cdf")
        return pd.DataFrame(
            {
                "category": self.categories,
                "observed": observed,
                "replicated_mean": replicated.mean(axis=0),
                "replicated_low": low,
                "replicated_high": high,
            }
        )

    def overall(self) -> pd.DataFrame:
        """Counts per category over all prompts.

        Returns
        -------
        DataFrame, K rows
            ``category, observed, replicated_mean, replicated_low, replicated_high``: the observed
            count, the replicates' mean count and their central 94% interval.
        """
        return self._counts(self.observed.sum(axis=0), self.replicated.sum(axis=1))

    def for_prompt(self, prompt_id: str) -> pd.DataFrame:
        """Counts per category of one prompt, columns as :meth:`overall`.

        Raises
        ------
        SettingsError
            If ``prompt_id`` is not a prompt of the data.
        """
        hit = np.flatnonzero(self.prompt_ids == prompt_id)
        if not len(hit):
            raise SettingsError(f"unknown prompt '{prompt_id}'")
        return self._counts(self.observed[hit[0]], self.replicated[:, hit[0]])

    def category_table(self) -> pd.DataFrame:
        """Counts per category over all prompts (:meth:`overall`) with a misfit flag per category.

        Returns
        -------
        DataFrame, K rows
            The columns of :meth:`overall` and ``p_value`` (two-sided mid-p-value of the observed
            count among the replicates' counts, ``2 min(P(rep < obs), P(rep > obs)) + P(rep = obs)``,
            capped at 1) and ``misfit`` (``p_value < CATEGORY_P / K``).
        """
        table = self.overall()
        observed, replicated = self.observed.sum(axis=0), self.replicated.sum(axis=1)
        below, equal = (replicated < observed).mean(axis=0), (replicated == observed).mean(axis=0)
        above = 1 - below - equal
        table["p_value"] = np.minimum(1.0, 2 * np.minimum(below, above) + equal)
        table["misfit"] = table["p_value"] < CATEGORY_P / len(self.categories)
        return table

    def verdict(self) -> tuple[bool, str]:
        """Whether the model reproduces the data, in one sentence for the page and the report.

        Rule: the model misfits when the count of any category over all prompts is a misfit of
        :meth:`category_table` (family-wise level :data:`CATEGORY_P`); prompts whose p-value of
        :meth:`prompt_table` is extreme are added to the sentence.

        Returns
        -------
        (bool, str)
            True and a sentence saying so when it fits; False and the misfitting categories with
            their observed counts and replicated intervals otherwise.
        """
        table, prompts = self.category_table(), self.prompt_table()
        n_bad = int(prompts["misfit"].sum())
        prompt_note = (
            f" {n_bad} of {len(prompts)} prompts misfit their mean net rating (p-value outside "
            f"[{P_EXTREME}, {1 - P_EXTREME}])."
            if n_bad
            else ""
        )
        bad = table[table["misfit"]]
        if bad.empty:
            return True, (
                f"The model reproduces the number of ratings in every category (each observed count "
                f"is within the replicates' range at a family-wise level of {CATEGORY_P}).{prompt_note}"
            )
        listed = "; ".join(
            f"{r.category:g}: observed {r.observed:g}, replicated {r.replicated_low:g} to "
            f"{r.replicated_high:g} ({INTERVAL:.0%} interval)"
            for r in bad.itertuples()
        )
        return False, (
            f"The model misfits the data: {len(bad)} of {len(table)} categories have counts the "
            f"replicates almost never give (mid-p below {CATEGORY_P}/{len(table)}): {listed}. Its "
            f"abilities describe data unlike these; check the data's coding or the design.{prompt_note}"
        )

    def prompt_table(self) -> pd.DataFrame:
        """One row per prompt: its mean net rating, observed and replicated, and the p-value.

        Returns
        -------
        DataFrame, J rows
            ``prompt_id, n_ratings, mean_observed, mean_replicated, p_value, misfit`` (misfit:
            p-value outside [P_EXTREME, 1 - P_EXTREME]).
        """
        n = self.observed.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_obs = self.observed @ self.categories / n
            mean_rep = (self.replicated @ self.categories).mean(axis=0) / n
        p = self.p_value
        return pd.DataFrame(
            {
                "prompt_id": self.prompt_ids,
                "n_ratings": n,
                "mean_observed": mean_obs,
                "mean_replicated": mean_rep,
                "p_value": p,
                "misfit": (p < P_EXTREME) | (p > 1 - P_EXTREME),
            }
        )


def replicate(
    codes: np.ndarray,
    categories: np.ndarray,
    theta: np.ndarray,
    alpha: np.ndarray,
    b: np.ndarray,
    *,
    prompt_ids: np.ndarray | None = None,
    seed: int = 0,
) -> PosteriorPredictive:
    """Draw one replicated rating matrix per parameter draw and compare it with the data.

    Parameters
    ----------
    codes : ndarray, shape (I, J), int
        Observed category index 0..K-1, -1 where missing (``RatingMatrix.codes()``).
    categories : ndarray, shape (K,)
        Value of each category (net ratings, e.g. -3..3).
    theta : ndarray, shape (S, I)
    alpha : ndarray, shape (S, J)
    b : ndarray, shape (S, J, K-1)
        S draws of the GRM parameters (posterior draws; or the same point repeated, for a
        plug-in check).
    prompt_ids : ndarray, shape (J,), optional
        Labels of the prompts; ``0..J-1`` by default.
    seed : int
        Seed of ``numpy.random.default_rng``: the same seed gives the same replicates.

    Returns
    -------
    PosteriorPredictive
    """
    codes = np.asarray(codes, dtype=np.int64)
    categories = np.asarray(categories)
    n_draws = len(theta)
    n_cat = len(categories)
    rated = codes >= 0
    one_hot = np.eye(n_cat, dtype=np.int64)
    observed = (one_hot[np.where(rated, codes, 0)] * rated[..., None]).sum(axis=0)  # (J, K)
    rng = np.random.default_rng(seed)
    replicated = np.empty((n_draws, *observed.shape), dtype=np.int64)
    for s in range(n_draws):  # one draw at a time: (I, J, K) memory, not (S, I, J, K)
        cum = category_probs(theta[s], alpha[s], b[s]).cumsum(axis=-1)
        u_rep = np.minimum((rng.random((*codes.shape, 1)) > cum).sum(axis=-1), n_cat - 1)
        replicated[s] = (one_hot[u_rep] * rated[..., None]).sum(axis=0)
    # Sums of integer category values: equal means compare exactly (same number of ratings).
    sum_obs, sum_rep = observed @ categories, replicated @ categories
    p = (sum_rep > sum_obs).mean(axis=0) + 0.5 * (sum_rep == sum_obs).mean(axis=0)
    p = np.where(observed.sum(axis=1) > 0, p, np.nan)
    ids = np.arange(codes.shape[1]).astype(str) if prompt_ids is None else np.asarray(prompt_ids)
    return PosteriorPredictive(categories, ids, observed, replicated, p)


def posterior_predictive(fit, rm, *, n_draws: int = PPC_DRAWS, seed: int = 0) -> PosteriorPredictive:
    """Posterior predictive check of a fitted GRM on its rating matrix.

    Parameters
    ----------
    fit : lib.irt.fit.GRMFit
        A NUTS fit of ``rm``.
    rm : lib.judgments.ratings.RatingMatrix
    n_draws : int
        Posterior draws used, evenly thinned over all chains (all of them when there are fewer).
    seed : int

    Returns
    -------
    PosteriorPredictive

    Raises
    ------
    SettingsError
        For a MAP fit (a single point, no posterior draws) or a fit of other data.
    """
    post = fit.idata["posterior"]
    total = post.sizes["chain"] * post.sizes["draw"]
    if not gives_posterior(fit.diagnostics.sampler) or total < 2:
        raise SettingsError(needs_posterior("posterior predictive checks"))
    if (post.sizes["comparison"], post.sizes["prompt"]) != rm.shape:
        raise SettingsError("this fit was made on other data: fit the model again")
    pick = np.unique(np.linspace(0, total - 1, min(n_draws, total)).round().astype(int))

    def flat(var: str, *dims: str) -> np.ndarray:
        values = post[var].transpose("chain", "draw", *dims).to_numpy()
        return values.reshape(total, *values.shape[2:])[pick]

    return replicate(
        rm.codes(),
        rm.categories,
        flat("theta", "comparison"),
        flat("alpha", "prompt"),
        flat("b", "prompt", "threshold"),
        prompt_ids=rm.prompt_ids,
        seed=seed,
    )
