"""False detections of the paired GRM with two systems and no true difference (issue 16 item 11).

For 1 and 3 annotators per prompt (40 prompts, votes a or b with probability 1/2, no ties), the
cutpoints the fit chooses (lib/data_checks.py:auto_cutpoints) are used for

- the exact posterior by quadrature (lib/irt/quadrature.py) over --quad-studies simulated studies
  (1 annotator: every outcome enumerated, exact), also for the old per-prompt thresholds;
- NUTS (numpyro, --chains x --draws) on --nuts-studies of the same studies, with its agreement with
  the quadrature.

A detection is P(B better) outside [0.025, 0.975]. Rates are printed with their binomial Monte
Carlo SE. Run: ``.venv/bin/python bench/bench_null_calibration.py [--nuts-studies 40]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import binom

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.data_checks import auto_cutpoints
from lib.irt.fit import fit_grm
from lib.irt.quadrature import TwoSystemPosterior
from lib.irt.settings import FitSettings
from lib.irt.summary import ability_table
from lib.ratings import net_ratings

PROMPTS = 40


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


def detected(p):
    return (np.asarray(p) < 0.025) | (np.asarray(p) > 0.975)


def rate_line(label: str, hits: np.ndarray) -> str:
    rate = float(np.mean(hits))
    return f"{label}: {rate:.4f} (MC SE {np.sqrt(rate * (1 - rate) / len(hits)):.4f}, {len(hits)} studies)"


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
                print(
                    f"  exact over all outcomes, {cut}: {(binom.pmf(wins, PROMPTS, 0.5) * detected(p)).sum():.4f}"
                    f" (P(B better) at 25 of 40 wins {p[25]:.3f})"
                )
        focus = counts.mean(axis=0)
        quad = {}
        for cut in (cutpoints, "antisymmetric"):
            start = time.perf_counter()
            quad[cut] = TwoSystemPosterior(k, cut, focus=focus if cut == "shared" else None).p_b_better(counts)
            print(
                "  " + rate_line(f"quadrature, {cut}", detected(quad[cut])) + f" [{time.perf_counter() - start:.0f} s]",
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
            agree = detected(nuts_p) == detected(quad[cutpoints][studies])
            print(
                "  "
                + rate_line(f"NUTS, {cutpoints}", detected(nuts_p))
                + f"; same decision as the quadrature in {agree.sum()} of {len(agree)}; "
                f"max |P difference| {np.max(np.abs(np.array(nuts_p) - quad[cutpoints][studies])):.3f}"
            )


if __name__ == "__main__":
    main()
