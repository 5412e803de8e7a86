"""Exact false detection of the leaderboard's votes likelihood: two systems, no difference, one vote a prompt.

With one vote per prompt and prompts exchangeable under the model, the posterior depends on the data
only through the counts (n_A, n_tie, n_B). For each number of ties t, the default fit
(:data:`lib.ranking.fit.DEFAULT_SAMPLER`, through the same readers as a user's file) is run on
count tables found by bisection for the smallest margin m* = n_B - n_A whose P(B better) exceeds
0.975 (P grows with the margin; the decision is symmetric). Under the null of
:func:`lib.ranking.simulate.simulate_arena` (tie rate 0.1 at alpha = 1, log alpha ~ N(0, 0.3)) the
counts are multinomial with tie probability tau = E[1 - 2 logistic(-alpha b)], so

    false detection = sum_t P(t) P(|n_B - n_A| >= m*(t) | t),   n_B | t ~ Binomial(n - t, 1/2)

exactly (no Monte-Carlo error), for the prompts counts given. Each t is a task on the Dask engine.

    python bench/bench_null_calibration_votes_exact.py [--prompts 40]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit, logit

from lib.engine.cluster import Engine
from lib.inputs import analysis_input
from lib.io.tables import read_csv
from lib.judgments.formats import DEFAULT_CRITERION
from lib.ranking.data import ranking_data
from lib.ranking.fit import DEFAULT_SAMPLER, RankSettings, fit_ranking

LEVEL = 0.975
TIE_RATE, LOG_ALPHA_SD = 0.1, 0.3
"""simulate_arena's defaults: the null the sampling benchmark (bench_null_calibration_rank.py) uses."""
COLUMNS = {
    "prompt": "prompt_id",
    "system_a": "system_a",
    "system_b": "system_b",
    "annotator": "annotator_id",
    "choice": "winner",
}


def tie_probability() -> float:
    """tau = E[1 - 2 logistic(-alpha b)], b = logit((1 + tie_rate) / 2), log alpha ~ N(0, 0.3) (Gauss-Hermite)."""
    x, w = np.polynomial.hermite_e.hermegauss(60)
    alpha = np.exp(LOG_ALPHA_SD * x)
    return float(np.sum(w * (1 - 2 * expit(-alpha * logit((1 + TIE_RATE) / 2)))) / np.sum(w))


def p_b_better(n_a: int, n_tie: int, n_b: int) -> float:
    """P(B better) of the default fit on a table of these counts, one vote a prompt."""
    winners = ["a"] * n_a + ["tie"] * n_tie + ["b"] * n_b
    votes = pd.DataFrame(
        {
            "prompt_id": [f"p{j:03d}" for j in range(len(winners))],
            "system_a": "sysA",
            "system_b": "sysB",
            "annotator_id": "r0",
            "winner": winners,
            "criterion": DEFAULT_CRITERION,
        }
    )
    table = read_csv(votes.to_csv(index=False).encode(), "votes.csv")
    data = analysis_input(table, "pairwise", COLUMNS, file="votes.csv", merge_redundant=False)
    skill = fit_ranking(ranking_data(data, "votes"), RankSettings(draws=4000, seed=0)).skill_draws()
    return float(np.mean(skill[:, 1] > skill[:, 0]))


def threshold(task: tuple[int, int]) -> int:
    """The smallest margin n_B - n_A (same parity as n - t) that is detected, n - t + 2 when none is."""
    prompts, t = task
    n = prompts - t
    margins = list(range(n % 2, n + 1, 2))
    lo, hi = 0, len(margins)  # detected from margins[hi] on; margins[len] = none
    while lo < hi:
        mid = (lo + hi) // 2
        m = margins[mid]
        if p_b_better((n - m) // 2, t, (n + m) // 2) > LEVEL:
            hi = mid
        else:
            lo = mid + 1
    return margins[lo] if lo < len(margins) else n + 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=40)
    parser.add_argument(
        "--mass", type=float, default=1e-4, help="tie counts less likely than this are bounded, not fitted"
    )
    args = parser.parse_args()
    os.environ["EVAL_CACHE_DIR"] = tempfile.mkdtemp(prefix="null-exact-")
    tau = tie_probability()
    p_t = stats.binom.pmf(np.arange(args.prompts + 1), args.prompts, tau)
    fitted = [t for t in range(args.prompts + 1) if p_t[t] >= args.mass]
    start = time.perf_counter()
    with Engine() as engine:
        m_star = {fitted[i]: m for i, m in engine.map(threshold, [(args.prompts, t) for t in fitted])}
    rate = 0.0
    print(f"sampler {DEFAULT_SAMPLER}, {args.prompts} prompts, one vote each, tie probability {tau:.4f}")
    print("ties | P(ties) | smallest detected margin | P(detect | ties)")
    for t in fitted:
        n = args.prompts - t
        # |n_B - n_A| >= m  <=>  n_B >= (n + m) / 2 or n_B <= (n - m) / 2
        detect = 2 * stats.binom.sf((n + m_star[t]) / 2 - 1, n, 0.5) if m_star[t] > 0 else 1.0
        rate += p_t[t] * detect
        print(f"{t} | {p_t[t]:.4f} | {m_star[t]} | {detect:.4f}")
    rest = 1 - p_t[fitted].sum()
    seconds = time.perf_counter() - start
    print(f"false detection {rate:.4f} (+ at most {rest:.4f} from unfitted tie counts); {seconds:.0f} s")


if __name__ == "__main__":
    main()
