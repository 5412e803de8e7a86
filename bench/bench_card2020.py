"""Card et al. 2020's Likert power table on the planner (issue 16, item 7).

Their simulation (``power_sim.R`` of github.com/dallascard/NLP-power-analysis): two systems coded -1/+1,
every worker rates every item for both, item and worker random intercepts and slopes, analysed by lme4's
``lmer`` (ML) with power = share of ``t > 1.96`` over 200 simulations. The planner runs the same design
through :data:`lib.planning.design.PRESETS` (normal response, prompt x comparison and annotator x
comparison effects) and ``lmm`` (:func:`lib.planning.mixed.crossed_ml`, the same ML fit on each
worker's paired difference). For each row it prints the published power, the planner's nominal power
(the same one-sided decision, Wald z > 1.96) with its Monte-Carlo SE, that decision's false detections
with no true difference (nominally 2.5%), and the planner's calibrated power (:func:`lib.planning.power.plan`:
the critical z is the 95th percentile of the null twins' |z|), which is what a test of true size 5% reaches.

Then, for the high-variance setting at 100 items x 3 and x 10 workers (issue 30), what each analysis gives a
user: its power at its nominal 5% level, its real false-detection rate there, whether it is valid
(:func:`lib.planning.power.valid_at_nominal`), the threshold that would hold 5% and the power at it.

    python bench/bench_card2020.py [--studies 200] [--setting high|low|both] [--skip-table]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

from lib.planning.analyses import analyse
from lib.planning.design import PRESETS, Design
from lib.planning.power import plan
from lib.planning.simulate import simulate_study

PUBLISHED = {  # (setting, beta, items, workers) -> power; their highvar_lowmer_lmer.csv
    "high": {
        (0.05, 50, 3): 0.235,
        (0.05, 50, 10): 0.24,
        (0.05, 100, 3): 0.27,
        (0.05, 100, 10): 0.315,
        (0.05, 500, 3): 0.27,
        (0.05, 500, 10): 0.34,
        (0.1, 50, 3): 0.44,
        (0.1, 50, 10): 0.7,
        (0.1, 100, 3): 0.555,
        (0.1, 100, 10): 0.795,
        (0.1, 500, 3): 0.545,
        (0.1, 500, 10): 0.87,
        (0.15, 50, 3): 0.69,
        (0.15, 50, 10): 0.955,
        (0.15, 100, 3): 0.75,
        (0.15, 100, 10): 0.98,
        (0.15, 500, 3): 0.75,
        (0.15, 500, 10): 0.995,
        (0.2, 50, 3): 0.89,
        (0.2, 50, 10): 0.995,
        (0.2, 100, 3): 0.885,
        (0.2, 100, 10): 1.0,
        (0.2, 500, 3): 0.92,
        (0.2, 500, 10): 1.0,
    },
    "low": {
        (0.05, 50, 3): 0.455,
        (0.05, 50, 10): 0.575,
        (0.05, 100, 3): 0.6,
        (0.05, 100, 10): 0.835,
        (0.05, 500, 3): 0.665,
        (0.05, 500, 10): 0.95,
        (0.1, 50, 3): 0.94,
        (0.1, 50, 10): 0.985,
        (0.1, 100, 3): 0.945,
        (0.1, 100, 10): 1.0,
        (0.1, 500, 3): 0.975,
        (0.1, 500, 10): 1.0,
        (0.15, 50, 3): 1.0,
        (0.15, 50, 10): 1.0,
        (0.15, 100, 3): 1.0,
        (0.15, 100, 10): 1.0,
        (0.15, 500, 3): 1.0,
        (0.15, 500, 10): 1.0,
        (0.2, 50, 3): 1.0,
        (0.2, 50, 10): 1.0,
        (0.2, 100, 3): 1.0,
        (0.2, 100, 10): 1.0,
        (0.2, 500, 3): 1.0,
        (0.2, 500, 10): 1.0,
    },
}
SEED = 2020


def nominal(assumptions, design: Design, studies: int, null: bool = False) -> float:
    """Share of studies whose lmm Wald z exceeds 1.96 in the direction of the effect (their one-sided rule)."""
    hits = []
    for r in range(studies):
        study = simulate_study(assumptions, design, SEED, r, null=null)
        direction = np.sign(simulate_study(assumptions, design, SEED, r).theta[0])  # the null twin's is 0
        hits.append(direction * analyse("lmm", study).z[0] > 1.96)
    return float(np.mean(hits))


USER_ANALYSES = ("t_test", "wilcoxon", "sign_test", "lmm", "lmm_reml")


def what_a_user_gets(studies: int) -> None:
    """Issue 30: per analysis, power at its nominal level and its real false-detection rate, in the
    high-variance setting."""
    preset = PRESETS["card2020_high"]
    print(f"high-variance setting, {studies} studies: what each analysis gives at its nominal 5% level")
    print("beta items workers analysis  | power | false det. | valid | critical z | power at it")
    for beta in (0.05, 0.1):
        for items, workers in ((100, 3), (100, 10)):
            assumptions = preset.assumptions(preset.effect(beta), bank_size=items)
            found = plan(
                assumptions,
                [Design(items, workers, "random", name) for name in USER_ANALYSES],
                replicates=studies,
                seed=SEED,
            )
            for r in found.itertuples():
                row = f"{beta:4.2f} {items:5d} {workers:7d} {r.analysis:9} | {r.power:5.3f} | {r.false_detection:10.3f}"
                print(f"{row} | {r.valid!s:5} | {r.critical_z:10.2f} | {r.calibrated_power:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=200)
    parser.add_argument("--setting", choices=["high", "low", "both"], default="both")
    parser.add_argument("--skip-table", action="store_true", help="only what each analysis gives a user")
    args = parser.parse_args()
    os.environ["EVAL_CACHE_DIR"] = tempfile.mkdtemp(prefix="card2020-")
    start = time.perf_counter()
    what_a_user_gets(args.studies)
    if args.skip_table:
        return
    outside = 0
    print(f"{args.studies} studies per row; SE of a power p: sqrt(p (1 - p) / {args.studies})")
    print(
        "setting beta items workers | published | planner nominal (+-SE) | diff/SE | null false det. | calibrated "
        "(two-sided 5%)"
    )
    for setting in ["high", "low"] if args.setting == "both" else [args.setting]:
        preset = PRESETS[f"card2020_{setting}"]
        for (beta, items, workers), published in PUBLISHED[setting].items():
            assumptions = preset.assumptions(preset.effect(beta), bank_size=items)
            design = Design(items, workers, "random", "lmm")
            power = nominal(assumptions, design, args.studies)
            false = nominal(assumptions, design, args.studies, null=True)
            calibrated = plan(assumptions, [design], replicates=args.studies, seed=SEED)["calibrated_power"].iloc[0]
            se = np.sqrt(max(published * (1 - published), power * (1 - power), 1 / args.studies) * 2 / args.studies)
            z = (power - published) / se
            outside += abs(z) > 2
            print(
                f"{setting:>7} {beta:4.2f} {items:5d} {workers:7d} | {published:9.3f} | {power:12.3f} (+-"
                f"{np.sqrt(power * (1 - power) / args.studies):.3f}) | {z:7.1f} | {false:15.3f} | {calibrated:10.3f}"
            )
    print(
        f"{outside} rows differ from the published power by more than 2 SE of the difference; "
        f"{time.perf_counter() - start:.0f} s"
    )


if __name__ == "__main__":
    main()
