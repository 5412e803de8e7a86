"""Prompt-clustered intervals at the leaderboard's defaults (issue 30, item 1): figures printed, not a test.

Each set simulates an arena whose votes share a prompt x system effect u_jk ~ N(0, SD) (or none:
independent votes; :func:`lib.ranking.simulate.simulate_arena`, 8 systems, random pairs on random
prompts, 10% ties, log alpha_j ~ N(0, 0.3)), fits it as ``rank`` does (MAP + Laplace, the default sampler)
with the intervals the model gives, and then applies the prompt clustering of each mode to the same
draws (:func:`lib.ranking.clusters.cluster_by_prompt`, what the fit runs after sampling: the default's
draws are those of a fit with the default settings). Printed per design: how many true skills the 95%
intervals cover (with the binomial SE), the RMS of z = (mean - truth) / sd, in how many sets the
dependence warning fired, the design effect (median and mean of its SE), and Bradley–Terry's per-vote
and prompt-clustered sandwich intervals on the same votes.

The same file runs on the code before the change (``PYTHONPATH=<old checkout>``): there the modes are
the model's intervals (the old default) and ``cluster_prompts=True`` (clipped sandwich).

Usage: ``python bench/bench_prompt_clusters.py [--sets 40] [--designs 30x50x0.3 30x50x0 100x15x0]``
(``PROMPTSxVOTES_PER_PROMPTxSD``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

N_SYSTEMS = 8
POINTS = 400 / np.log(10)
"""Rating points per logit (Bradley–Terry's arena scale)."""
DEPENDENT = "votes on the same prompt are dependent"


def modes():
    """The intervals compared: mode -> argument of ``cluster_by_prompt`` (None: the model's own)."""
    from lib.ranking import clusters

    if hasattr(clusters, "CLUSTER_MODES"):
        return {"model (off)": None, "default (auto)": clusters.DEFAULT_CLUSTERING, "on": "on"}
    return {"model (old default)": None, "cluster_prompts=True (old)": True}


def one_set(n_prompts: int, per_prompt: int, sd: float, seed: int) -> dict:
    """Coverage counts, squared z and the warning of each mode on one simulated set."""
    from lib.inputs import AnalysisInput
    from lib.judgments.formats import read_pairwise
    from lib.ranking.baseline import bradley_terry
    from lib.ranking.clusters import cluster_by_prompt
    from lib.ranking.data import ranking_data
    from lib.ranking.fit import RankSettings, fit_ranking
    from lib.ranking.model import observations
    from lib.ranking.simulate import simulate_arena

    votes, truth = simulate_arena(N_SYSTEMS, n_prompts, n_prompts * per_prompt, prompt_system_sd=sd, seed=seed)
    roles = {"prompt": "prompt_id", "system_a": "system_a", "system_b": "system_b"}
    roles |= {"annotator": "annotator_id", "choice": "winner"}
    judgments = read_pairwise(votes, roles, file="arena.csv")
    rd = ranking_data(AnalysisInput(None, "pairwise", "arena.csv", None, judgments=judgments))
    off = "off" if "model (off)" in modes() else False
    fit = fit_ranking(rd, RankSettings(cluster_prompts=off, seed=seed), use_cache=False)
    order = [rd.systems.index(s) for s in truth["systems"]]
    out: dict = {"warned": any(DEPENDENT in w for w in fit.diagnostics.warnings)}
    for name, mode in modes().items():
        idata, said = fit.idata.copy(), []
        if mode is not None:
            cluster_by_prompt(idata, observations(rd), mode, said)
        skill = idata["posterior"]["skill"].stack(s=("chain", "draw")).transpose("s", "system").to_numpy()[:, order]
        low, high = np.quantile(skill, [0.025, 0.975], axis=0)
        z = (skill.mean(0) - truth["skill"]) / skill.std(0)
        inside = (low <= truth["skill"]) & (truth["skill"] <= high)
        out[name] = (int(inside.sum()), z**2)
        attrs = idata["posterior"].attrs
        if "design_effect" in attrs:
            out["design_effect"] = (float(attrs["design_effect"]), float(attrs["design_effect_se"]))
    true = 1000 + POINTS * truth["skill"]
    for cluster in (None, "prompt_id"):
        table = bradley_terry(votes, cluster=cluster).set_index("system").loc[truth["systems"]]
        out[f"Bradley–Terry {'prompt-clustered' if cluster else 'per vote'}"] = (
            int(((table["bt_low"] <= true) & (true <= table["bt_high"])).sum()),
            ((table["bt_rating"] - true) / ((table["bt_high"] - table["bt_low"]) / (2 * 1.959964))).to_numpy() ** 2,
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=40)
    parser.add_argument("--designs", nargs="+", default=["30x50x0.3", "30x50x0", "100x15x0"])
    args = parser.parse_args()
    for design in args.designs:
        prompts, per, sd = design.split("x")
        runs = [one_set(int(prompts), int(per), float(sd), seed) for seed in range(args.sets)]
        n = args.sets * N_SYSTEMS
        print(f"{N_SYSTEMS} systems x {prompts} prompts x {per} votes, prompt x system SD {sd}, {args.sets} sets:")
        for name in [k for k in runs[0] if k not in ("warned", "design_effect")]:
            covered = sum(r[name][0] for r in runs)
            p = covered / n
            rms = np.sqrt(np.mean(np.concatenate([r[name][1] for r in runs])))
            se = np.sqrt(p * (1 - p) / n)
            print(f"  {name:30s} 95% intervals cover {p:6.1%} +- {se:.1%} ({covered} of {n}), RMS z {rms:.2f}")
        print(f"  dependence warning fired in {sum(r['warned'] for r in runs)} of {args.sets} sets")
        if "design_effect" in runs[0]:
            de, se = np.array([r["design_effect"] for r in runs]).T
            low, high = np.nanquantile(de, [0.25, 0.75])
            print(
                f"  design effect: median {np.nanmedian(de):.2f} (quartiles {low:.2f}-{high:.2f}), "
                f"mean {np.nanmean(de):.3f}, mean SE {np.nanmean(se):.2f}"
            )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
