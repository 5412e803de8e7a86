"""Does a full posterior agree with the plan's fast analyses? The GRM fitted by NUTS on a few of a
design's simulated studies, beside ``grm_map`` (and ``grm_bank``) on the same studies."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from lib.engine.cluster import Engine, TaskProgress
from lib.errors import DesignError, SettingsError
from lib.inference.settings import gives_posterior
from lib.irt.settings import FitSettings
from lib.planning.analyses import LEVEL, analyse, net_codes
from lib.planning.design import GRM_ANALYSES, NUTS_CHECK_SETTINGS, Assumptions, Design
from lib.planning.simulate import Study, simulate_study

NUTS_COLUMNS = [
    "replicate",
    "comparison",
    "theta",
    "analysis",
    "estimate",
    "low",
    "high",
    "excludes_zero",
    "nuts_mean",
    "nuts_low",
    "nuts_high",
    "nuts_excludes_zero",
    "agree",
    "rhat_max",
    "ess_bulk_min",
    "divergences",
]
"""The columns of :func:`nuts_check` (``nuts_check.csv``)."""


def study_matrix(study: Study):
    """The net ratings of a simulated study as a :class:`lib.judgments.ratings.RatingMatrix` (systems named
    ``S0``, ``S1``, ...; ratings rescaled as :func:`lib.planning.analyses.net_codes` does)."""
    from lib.judgments.ratings import RatingMatrix

    codes, n_categories = net_codes(study)
    categories = np.arange(n_categories) - n_categories // 2
    names = np.array([f"S{k}" for k in range(len(study.skills))])
    a, b = names[study.pairs[:, 0]], names[study.pairs[:, 1]]
    prompts = np.array([f"p{j}" for j in range(codes.shape[1])])
    return RatingMatrix(
        u=categories[codes].astype(float),
        comparisons=pd.DataFrame(
            {"comparison": [f"{y} vs {x}" for x, y in zip(a, b, strict=True)], "system_a": a, "system_b": b}
        ),
        prompt_ids=prompts,
        categories=categories,
        groups=pd.DataFrame({"prompt_id": prompts, "group": prompts}),
        n_votes=np.full(codes.shape, study.scores.shape[2], dtype=np.int64),
    )


def _check_replicate(item: tuple) -> pd.DataFrame:
    """The NUTS check of one simulated study (one Dask task): its rows of :data:`NUTS_COLUMNS`."""
    from lib.irt.data_checks import auto_cutpoints
    from lib.irt.fit import fit_grm

    assumptions, design, seed, r, settings, analyses = item
    tail = (1 - LEVEL) / 2
    study = simulate_study(assumptions, design, seed, r)
    rm = study_matrix(study)
    if settings.cutpoints == "antisymmetric":  # as fit chooses them, and grm_map (shared for two systems)
        settings = replace(settings, cutpoints=auto_cutpoints(rm, "pairwise"))
    try:
        fit = fit_grm(rm, settings, use_cache=False)
    except DesignError as err:
        raise DesignError(f"NUTS check, simulated study {r}: {err}") from None
    theta = fit.idata["posterior"]["theta"].stack(sample=("chain", "draw")).transpose("comparison", "sample")
    draws = theta.to_numpy()
    low, high = np.quantile(draws, [tail, 1 - tail], axis=1)
    nuts = {
        "nuts_mean": draws.mean(axis=1),
        "nuts_low": low,
        "nuts_high": high,
        "nuts_excludes_zero": (low > 0) | (high < 0),
    }
    d = fit.diagnostics
    rows = []
    for name in analyses:
        result = analyse(name, study)
        rows.append(
            pd.DataFrame(
                {
                    "replicate": r,
                    "comparison": rm.comparisons["comparison"],
                    "theta": study.theta,
                    "analysis": name,
                    "estimate": result.estimate,
                    "low": result.low,
                    "high": result.high,
                    "excludes_zero": result.excludes_zero,
                    **nuts,
                    "agree": result.excludes_zero == nuts["nuts_excludes_zero"],
                    "rhat_max": d.rhat_max,
                    "ess_bulk_min": d.ess_bulk_min,
                    "divergences": d.divergences,
                }
            )
        )
    return pd.concat(rows, ignore_index=True)[NUTS_COLUMNS]


def nuts_check(
    assumptions: Assumptions,
    design: Design,
    replicates: int = 3,
    *,
    seed: int = 0,
    settings: FitSettings | None = None,
    analyses: tuple[str, ...] = ("grm_map",),
    engine: Engine | None = None,
    progress: TaskProgress | None = None,
) -> pd.DataFrame:
    """Fit the GRM by NUTS on the first simulated studies of a design and compare it, comparison by
    comparison, with the plan's GRM analyses on the same studies.

    Parameters
    ----------
    assumptions : Assumptions
    design : Design
        Its prompts, annotators and strategy set the studies (its analysis is not used).
    replicates : int
        Studies checked: replicates 0..N-1 of the plan with this ``seed``, i.e. the same studies
        (:func:`lib.planning.simulate.seeds`).
    seed : int
        The plan's seed.
    settings : FitSettings, optional
        The NUTS fit (:func:`lib.irt.fit.fit_grm`, not cached); default
        :data:`NUTS_CHECK_SETTINGS` with this seed.
    analyses : tuple of str
        Of :data:`GRM_ANALYSES`. ``grm_map``'s interval is its nominal one, before the plan's
        calibration under the null.
    engine : Engine, optional
        Where the fits run, one study per task (an entered :class:`lib.engine.cluster.Engine`); None runs
        them here, one after another. The numbers are the same either way.
    progress : callable, optional
        ``progress(done, total)`` in studies.

    Returns
    -------
    DataFrame
        :data:`NUTS_COLUMNS`, one row per (replicate, comparison, analysis), by replicate: the true
        ``theta``, the analysis's ``estimate`` (EAP given the item parameters) and 95% interval, the
        NUTS posterior mean and central 95% interval of theta, whether each interval excludes 0 and
        whether they ``agree`` on it, and the NUTS fit's R-hat max, min bulk ESS and divergences
        (over theta, alpha and b).

    Raises
    ------
    SettingsError
        Invalid assumptions or design, fewer than 1 replicate, an analysis that is not a GRM one,
        a sampler without a posterior, or the ``normal`` response model.
    DesignError
        A simulated study the GRM cannot be fitted to (e.g. every judgment a tie), its replicate named.
    """
    settings = settings or replace(NUTS_CHECK_SETTINGS, seed=seed)
    settings.validate()
    if not gives_posterior(settings.sampler):
        raise SettingsError(f"the NUTS check needs a sampler with a posterior, not '{settings.sampler}'")
    unknown = [a for a in analyses if a not in GRM_ANALYSES]
    if unknown or not analyses:
        raise SettingsError(
            f"the NUTS check compares the GRM analyses ({', '.join(GRM_ANALYSES)}), "
            f"not '{unknown[0] if unknown else ''}'"
        )
    if replicates < 1:
        raise SettingsError(f"the NUTS check needs at least 1 replicate (got {replicates})")
    design = Design(design.prompts, design.annotators, design.strategy, analyses[0])
    design.validate(assumptions)
    items = [(assumptions, design, seed, r, settings, tuple(analyses)) for r in range(replicates)]
    if engine is None:
        found = {}
        for r, item in enumerate(items):
            found[r] = _check_replicate(item)
            if progress is not None:
                progress(r + 1, replicates)
    else:
        found = dict(engine.map(_check_replicate, items, progress=progress))
    return pd.concat([found[r] for r in range(replicates)], ignore_index=True)
