"""The mixed models (``lmm``, ``lmm_reml``) on studies simulated from a pilot (issue 29 item 4): RuntimeWarnings
logged, interval widths by design and prompt choice, and the ML fit against statsmodels' MixedLM.

On the SQuALITY human evaluation (nyu-mll/SQuALITY, ``data/human-eval/all-responses.jsonl``: 3 systems, 100
questions, 3 of 4 workers rank the 3 responses of each) ``lmm`` logged 52,080 warnings (log(0), divide by
zero) at 10 prompts x 3 annotators and its mean interval width was 3.57 there against 0.31-0.46 elsewhere.
The rankings CSV is made from that file with::

    python -c "import json,csv,sys; w=csv.writer(sys.stdout); w.writerow(['prompt','annotator','system','rank',
    'criterion']); [w.writerow([f'{r[\"passage-id\"]}_{q}', 'w'+v['worker_id'], s, v[c+'-rank'], c]) for r in map(
    json.loads, open('all-responses.jsonl')) for q, x in r['questions'].items() for s, y in x.items() for v in
    y['reviews'] for c in ('overall', 'correctness', 'selection')]" > squality_rankings.csv

    python bench/bench_lmm_pilot.py --input squality_rankings.csv --format ranking --criterion overall
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.cli import add_input_options, read_input
from lib.planning.analyses import analyse
from lib.planning.design import Design, assumptions_from_pilot
from lib.planning.mixed import crossed_ml
from lib.planning.simulate import simulate_study


def statsmodels_se(x: np.ndarray) -> float:
    """The SE of the mean of MixedLM (ML, crossed prompt and annotator components), best of three optimizers."""
    import statsmodels.formula.api as smf

    n_j, n_k = x.shape
    df = pd.DataFrame({"y": x.ravel(), "p": np.repeat(np.arange(n_j), n_k), "a": np.tile(np.arange(n_k), n_j), "g": 1})
    model = smf.mixedlm("y ~ 1", df, groups="g", vc_formula={"p": "0 + C(p)", "a": "0 + C(a)"}, re_formula="0")
    fits = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in (["lbfgs"], ["powell", "lbfgs"], ["nm", "lbfgs"]):
            try:
                fits.append(model.fit(reml=False, method=method))
            except (ValueError, np.linalg.LinAlgError):
                continue
    return float(max(fits, key=lambda f: f.llf).bse_fe.iloc[0]) if fits else np.nan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_input_options(parser, "the pilot CSV")
    parser.add_argument("--studies", type=int, default=40)
    parser.add_argument("--compare", type=int, default=5, help="studies per design compared with statsmodels")
    args = parser.parse_args()
    assumptions = assumptions_from_pilot(read_input(args), effect=0.3)
    sds = f"prompt x comparison SD {assumptions.item_sd:.2f}, annotator x comparison SD {assumptions.annotator_sd:.2f}"
    print(f"pilot: {sds}")
    print("strategy   prompts annotators | warnings | lmm width mean (max) | lmm_reml width | max |SE - MixedLM| / SE")
    start = time.perf_counter()
    for strategy in ("random", "top_alpha"):
        for prompts in (10, 25, 50):
            for annotators in (1, 3, 5):
                design = Design(prompts, annotators, strategy, "lmm")
                widths, reml, gaps, caught = [], [], [], 0
                for r in range(args.studies):
                    study = simulate_study(assumptions, design, 0, r)
                    with warnings.catch_warnings(record=True) as logged:
                        warnings.simplefilter("always")
                        widths.append(analyse("lmm", study).width.mean())
                        reml.append(analyse("lmm_reml", study).width.mean())
                    caught += len(logged)
                    if r < args.compare and annotators > 1:
                        for x in study.scores:
                            se, ref = crossed_ml(x).se, statsmodels_se(x)
                            if se > 0 and np.isfinite(ref):
                                gaps.append(abs(se - ref) / se)
                gap = f"{max(gaps):.4f}" if gaps else "-"
                print(
                    f"{strategy:9} {prompts:8d} {annotators:10d} | {caught:8d} | {np.mean(widths):6.3f} "
                    f"({np.max(widths):6.3f}) | {np.mean(reml):14.3f} | {gap}",
                    flush=True,
                )
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
