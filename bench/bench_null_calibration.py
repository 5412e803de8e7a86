"""False detections of the paired GRM with two systems and no true difference (issue 16 item 11, issue 30 item 4).

For 1 and 3 annotators per prompt (40 prompts, votes a or b with probability 1/2, no ties), the
cutpoints the fit chooses (lib/irt/data_checks.py:auto_cutpoints) are used for

- the exact posterior by quadrature (lib/irt/quadrature.py) over --quad-studies simulated studies
  (1 annotator: every outcome enumerated, exact), also for the old per-prompt thresholds;
- NUTS (numpyro, --chains x --draws) on --nuts-studies of the same studies, with its agreement with
  the quadrature.

A detection is P(B better) outside [1 - level, level], at 0.975 (a 95% interval excluding 0) and at
the decision level the Abilities page states (lib.irt.settings.DECISION_LEVEL). Rates are printed with
their binomial Monte Carlo SE. One annotator also prints P(B better) at 26 of 40 wins by the rule used
before issue 30 (nodes above 0 plus half the node at 0), by Simpson's rule (now) and by scipy's adaptive
quad, and the exact false detections of one vote a prompt (ties included: every count table of A, tie, B
weighted by its multinomial probability) by tie rate and number of prompts.
Run: ``.venv/bin/python bench/bench_null_calibration.py [--nuts-studies 40]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import binom

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.irt.data_checks import auto_cutpoints
from lib.irt.fit import fit_grm
from lib.irt.quadrature import THETA_GRID, TwoSystemPosterior, adaptive_p_b_better, null_detection_rates
from lib.irt.settings import DECISION_LEVEL, FitSettings
from lib.irt.summary import ability_table
from lib.judgments.ratings import net_ratings

PROMPTS = 40
LEVELS = (0.975, DECISION_LEVEL)
TIE_RATES = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
PROMPT_COUNTS = (10, 20, 30, 40, 50, 60, 80, 100, 150)


def votes(net_row: np.ndarray, annotators: int, rng: np.random.Generator):
    """Votes whose per-prompt net rating is ``net_row`` (B wins (net + m) / 2 of m votes)."""
    import pandas as pd

    rows = []
    for j, net in enumerate(net_row):
        wins = ["b"] * int((net + annotators) // 2) + ["a"] * int((annotators - net) // 2)
        for r, w in enumerate(rng.permutation(wins)):
            rows.append(
                {
                    "prompt_id": f"p{j}",
                    "system_a": "a",
                    "system_b": "b",
                    "annotator": f"r{r}",
                    "winner": w,
                    "criterion": "overall",
                }
            )
    return pd.DataFrame(rows)


def detected(p, level: float = 0.975):
    return (np.asarray(p) < 1 - level) | (np.asarray(p) > level)


def rate_line(label: str, p: np.ndarray) -> str:
    rates = [float(np.mean(detected(p, level))) for level in LEVELS]
    return (
        f"{label}: "
        + ", ".join(
            f"at {level:g} {r:.4f} (MC SE {np.sqrt(r * (1 - r) / len(p)):.4f})"
            for level, r in zip(LEVELS, rates, strict=True)
        )
        + f", {len(p)} studies"
    )


def exact_one_vote() -> None:
    """P(B better) of 26 of 40 tie-free wins by three rules, and the exact null rates by tie rate."""
    posterior = TwoSystemPosterior(3, "shared")
    counts = np.array([[PROMPTS - 26, 0, 26]])
    weights = np.exp(posterior.log_posterior(counts))[0]
    old = weights[THETA_GRID > 0].sum() + 0.5 * weights[THETA_GRID == 0].sum()
    print(
        f"  P(B better) at 26 of 40 tie-free wins: {old:.5f} by the rule before issue 30 (nodes above 0 + half "
        f"the node at 0), {posterior.p_b_better(counts)[0]:.5f} by Simpson's rule (now), "
        f"{adaptive_p_b_better(PROMPTS - 26, 0, 26):.5f} by scipy's adaptive quad"
    )
    wins = np.arange(PROMPTS + 1)
    every = np.exp(posterior.log_posterior(np.stack([PROMPTS - wins, np.zeros_like(wins), wins], axis=1)))
    old_p = every[:, THETA_GRID > 0].sum(axis=1) + 0.5 * every[:, THETA_GRID == 0].sum(axis=1)
    print(
        f"  exact, 40 prompts, no ties, at 0.975: {(binom.pmf(wins, PROMPTS, 0.5) * detected(old_p)).sum():.4f} by "
        "the rule before issue 30"
    )
    print(f"  exact false detections, one vote a prompt, shared cutpoints, at 0.975 / {DECISION_LEVEL:g}:")
    print("  prompts | " + " | ".join(f"tie rate {t:g}" for t in TIE_RATES))
    worst = np.zeros(len(LEVELS))
    for prompts in PROMPT_COUNTS:
        rates = null_detection_rates(prompts, TIE_RATES, LEVELS, posterior)
        worst = np.maximum(worst, rates.max(axis=0))
        print(f"  {prompts} | " + " | ".join(f"{r[0]:.4f} / {r[1]:.4f}" for r in rates))
    print(
        f"  largest over {PROMPT_COUNTS[0]}-{PROMPT_COUNTS[-1]} prompts and tie rates {TIE_RATES[0]:g}-"
        f"{TIE_RATES[-1]:g}: " + ", ".join(f"at {level:g} {w:.4f}" for level, w in zip(LEVELS, worst, strict=True))
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quad-studies", type=int, default=4000)
    ap.add_argument("--nuts-studies", type=int, default=40)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2016)
    ap.add_argument(
        "--annotators",
        type=int,
        nargs="+",
        choices=(1, 3),
        default=[1, 3],
        help="annotators per prompt, each a condition (default: 1 3)",
    )
    ap.add_argument(
        "--first-study", type=int, default=0, help="NUTS fits studies first..first+nuts-studies-1 of the quadrature's"
    )
    args = ap.parse_args()
    for annotators in args.annotators:
        rng = np.random.default_rng(args.seed + annotators)
        net = 2 * rng.binomial(annotators, 0.5, size=(args.quad_studies, PROMPTS)) - annotators
        rm = net_ratings(votes(net[0], annotators, rng), merge_redundant=False)
        cutpoints = auto_cutpoints(rm, "pairwise")
        k = 2 * annotators + 1
        counts = np.stack([(net == v).sum(axis=1) for v in range(-annotators, annotators + 1)], axis=1)
        print(f"\n{annotators} annotator(s) per prompt, {PROMPTS} prompts, chosen cutpoints: {cutpoints}")
        if annotators == 1:
            wins = np.arange(PROMPTS + 1)
            every = np.stack([PROMPTS - wins, np.zeros_like(wins), wins], axis=1)
            for cut in (cutpoints, "antisymmetric"):
                p = TwoSystemPosterior(k, cut).p_b_better(every)
                rates = [(binom.pmf(wins, PROMPTS, 0.5) * detected(p, level)).sum() for level in LEVELS]
                print(
                    f"  exact over all outcomes, {cut}: "
                    + ", ".join(f"at {level:g} {r:.4f}" for level, r in zip(LEVELS, rates, strict=True))
                    + f" (P(B better) at 25 of 40 wins {p[25]:.3f})"
                )
            exact_one_vote()
        focus = counts.mean(axis=0)
        quad = {}
        for cut in (cutpoints, "antisymmetric"):
            start = time.perf_counter()
            quad[cut] = TwoSystemPosterior(k, cut, focus=focus if cut == "shared" else None).p_b_better(counts)
            print(
                "  " + rate_line(f"quadrature, {cut}", quad[cut]) + f" [{time.perf_counter() - start:.0f} s]",
                flush=True,
            )
        nuts_p = []
        settings = FitSettings(cutpoints=cutpoints, chains=args.chains, draws=args.draws, seed=args.seed)
        studies = range(args.first_study, args.first_study + args.nuts_studies)
        for s in studies:
            start = time.perf_counter()
            rm = net_ratings(votes(net[s], annotators, rng), merge_redundant=False)
            fit = fit_grm(rm, settings, use_cache=False)
            nuts_p.append(float(ability_table(fit, rm)["p_b_better"].iloc[0]))
            print(
                f"  NUTS study {s + 1}: P(B better) {nuts_p[-1]:.3f}, quadrature {quad[cutpoints][s]:.3f}, "
                f"converged {fit.diagnostics.converged} [{time.perf_counter() - start:.0f} s]",
                flush=True,
            )
        if nuts_p:
            agree = detected(nuts_p, DECISION_LEVEL) == detected(quad[cutpoints][studies], DECISION_LEVEL)
            print(
                "  "
                + rate_line(f"NUTS, {cutpoints}", np.array(nuts_p))
                + f"; same decision as the quadrature in {agree.sum()} of {len(agree)}; "
                f"max |P difference| {np.max(np.abs(np.array(nuts_p) - quad[cutpoints][studies])):.3f}"
            )


if __name__ == "__main__":
    main()
