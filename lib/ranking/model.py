"""The structured ranking model: one skill per system, the prompt parameters of the GRM.

For a vote (or a net-rating cell) of systems A < B on prompt j, with ordered outcome y (A better /
tie / B better, or the net rating's categories)::

    P(y >= c) = logistic(alpha_j (s_B - s_A + delta_AB + gamma side - b_jc))

and for a score of system k on prompt j by annotator r (*ratings*, an ordinal mixed model)::

    P(y >= c) = logistic(alpha_j (s_k + eta_j - zeta_r - b_c)),   eta_j ~ N(0, sigma_eta)

where the annotator severity zeta_r ~ N(0, sigma_zeta) is optional (0 when not asked): a severe
annotator (zeta > 0) gives lower scores to everyone, and without it a system rated mostly by severe
annotators is ranked too low. With style control the votes' location gets ``+ beta' z_v``, the style
covariates of vote v (B's answer against A's, :mod:`lib.ranking.style`) with coefficients beta ~ N(0, 1)
(``style``, logits per SD of a feature): LMArena's style control (arena-rank's contextual Bradley–Terry) in the
votes likelihood. Ranked by category, a vote of category c compares s_Bc and s_Ac, each system's skill in the
category shrunk towards its overall skill (:mod:`lib.ranking.categories`).

Priors: skills ~ N(0, 1) on the sum-to-zero subspace (``pm.ZeroSumNormal``) or N(0, 1) with a
baseline's skill fixed at 0; log alpha_j ~ N(0, 0.5) (votes of an arena: log alpha_j ~ N(0, sigma_alpha),
non-centred, sigma_alpha ~ HalfNormal(0.5) learnt from all prompts, :func:`learns_alpha_spread`) and
antisymmetric thresholds b ~ N(0, 2) as in the GRM (:mod:`lib.irt.model`): per prompt for cells, as the
GRM, but one set shared by all prompts for votes (an arena prompt has a handful of votes: per-prompt tie
thresholds under their broad prior pulled alpha down and stretched the skills by 30% in simulation).
Votes without ties have the single threshold 0, so with alpha_j = 1 the model is Bradley-Terry.
Ratings: free ordered thresholds b_c ~ N(0, 2) shared by all prompts, and alpha_j = 1 when each
(prompt, system) cell holds one score (:func:`one_score_a_cell`). Optional pair deviations
delta_AB = tau z_AB, z ~ N(0, 1), tau ~ HalfNormal(0.5) (intransitivity), and a position effect
gamma ~ N(0, 1) added on the side of the system shown first (side = +1 when B was first, -1 when A
was, 0 when unknown). sigma_eta, sigma_zeta ~ HalfNormal(1).
Hierarchical effects are non-centred (eta = sigma_eta z_j, zeta = sigma_zeta z_r, z ~ N(0, 1)), so
the MAP + Laplace fit (:mod:`lib.ranking.fit`) has a finite mode; the severities couple prompts, so
they are global variables of its block Hessian.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lib.irt.settings import B_PRIOR_SD, LOG_ALPHA_PRIOR_SD, check_cutpoints
from lib.ranking.data import RankingData, system_codes
from lib.ranking.likelihoods import Likelihood, of_unit

if TYPE_CHECKING:
    import pymc as pm

# pymc and pytensor (3 s to import) are imported by the functions that build the PyMC model: the observations
# and their checks are the data of every route, and a fit that builds no PyMC model does not load them
# (tests/ranking/test_rank_imports.py).

SKILL_PRIOR_SD = 1.0
TAU_PRIOR_SD = 0.5
GAMMA_PRIOR_SD = 1.0
SIGMA_ETA_PRIOR_SD = 1.0
SIGMA_ZETA_PRIOR_SD = 1.0
STYLE_PRIOR_SD = 1.0
"""Prior scales (logits) of skills, pair deviations, position bias, the prompt effect, annotator severity and
the style coefficients (per SD of a standardised feature)."""

LOCAL = ("log_alpha", "log_alpha_z", "b_log_gap", "eta_z")
"""Free variables with one row per prompt: prompts couple only through the other (global)
variables, which the Laplace fit's block Hessian uses."""
SCALES = ("sigma_alpha", "sigma_eta")
"""Global variables that scale the prompt variables' prior (:attr:`lib.inference.settings.LaplaceSettings.scales`)."""

LOGLIK_TERMS = "loglik_terms"
"""Name of the (N,) log-likelihood of each observation that the potential ``loglik`` sums: the influence of
each vote is read from it (:func:`lib.inference.influence.drop_influence`, :mod:`lib.ranking.robustness`)."""

_VOTE_CODES = {"a": 0, "tie": 1, "b": 2}


@dataclass
class Observations:
    """The judgments as flat arrays, one entry per observation (vote, cell or score).

    Attributes
    ----------
    system_a : ndarray (N,), int
        Index into ``systems`` of system A (alphabetically first), -1 for ratings.
    system_b : ndarray (N,), int
        Index of system B, or of the rated system.
    prompt : ndarray (N,), int
        Index into ``prompts``.
    code : ndarray (N,), int
        Outcome category 0..K-1.
    side : ndarray (N,), float
        +1 when B was shown first, -1 when A was, 0 when not known.
    pair : ndarray (N,), int
        Index into ``pairs`` (-1 for ratings).
    systems, prompts : list of str
    pairs : DataFrame
        ``system_a, system_b`` of every pair judged at least once.
    categories : list of str
        Labels of the K ordered outcomes.
    unit : {"vote", "cell", "score"}
        What one observation is: names the likelihood (:func:`lib.ranking.likelihoods.of_unit`).
    annotator : ndarray (N,), int, or None
        Index into ``annotators`` of who gave each score (ratings); None for paired judgments.
    annotators : list of str
        The distinct annotator ids, sorted ("" alone when the file names none).
    weight : ndarray (N,), float, or None
        Each vote's weight in the log-likelihood (its annotator's reliability,
        :func:`lib.judgments.annotator_quality.vote_weights`); None: every observation counts once.
    features : ndarray (N, p) or None
        Style covariates of each vote, B's answer against A's (style control); None without.
    feature_names : list of str
        Their names.
    category : ndarray (N,), int, or None
        Index into ``category_names`` of each vote's category (:mod:`lib.ranking.categories`); None without.
    category_names : list of str
        The distinct categories, sorted.
    """

    system_a: np.ndarray
    system_b: np.ndarray
    prompt: np.ndarray
    code: np.ndarray
    side: np.ndarray
    pair: np.ndarray
    systems: list[str]
    prompts: list[str]
    pairs: pd.DataFrame
    categories: list[str]
    unit: str
    annotator: np.ndarray | None = None
    annotators: list[str] = field(default_factory=list)
    weight: np.ndarray | None = None
    features: np.ndarray | None = None
    feature_names: list[str] = field(default_factory=list)
    category: np.ndarray | None = None
    category_names: list[str] = field(default_factory=list)

    @property
    def likelihood(self) -> Likelihood:
        """The spec of the likelihood these observations are of (:data:`lib.ranking.likelihoods.LIKELIHOODS`)."""
        return of_unit(self.unit)

    @property
    def paired(self) -> bool:
        """Whether every observation is a pair of systems (a vote), none a single system's rating (the
        likelihood's ``paired``)."""
        return self.likelihood.paired


def observations(rd: RankingData) -> Observations:
    """Flatten the data of a likelihood (:class:`lib.ranking.data.RankingData`) to index arrays, by its spec's
    ``observations`` (:data:`lib.ranking.likelihoods.LIKELIHOODS`).

    Votes are oriented so that A is the alphabetically first system (``lib.judgments.ratings.orient_votes``);
    outcomes are 0 = A better, 1 = tie, 2 = B better, or 0 = A, 1 = B when no vote is a tie; style covariates
    (a's answer against b's as in the file) change sign with the votes turned round, to B's against A's. Ratings
    keep one observation per annotator's score, the outcome being the score's rank among the
    distinct scores.
    """
    return rd.spec.load("observations")(rd)


def score_observations(rd: RankingData) -> Observations:
    """The ratings likelihood's observations: one per annotator's score (:func:`observations`)."""
    r = rd.ratings
    assert r is not None  # the ratings likelihood has its table
    scores = np.sort(r["score"].unique())
    prompts, prompt = np.unique(r["prompt_id"].to_numpy(dtype=str), return_inverse=True)
    n = len(r)
    system = pd.Categorical(r["system"], categories=rd.systems).codes.astype(np.int64)
    rank = np.searchsorted(scores, r["score"].to_numpy()).astype(np.int64)
    annotators, annotator = np.unique(r["annotator_id"].to_numpy(dtype=str), return_inverse=True)
    return Observations(
        np.full(n, -1),
        system,
        prompt.astype(np.int64),
        rank,
        np.zeros(n),
        np.full(n, -1),
        list(rd.systems),
        prompts.tolist(),
        pd.DataFrame(columns=["system_a", "system_b"]),
        [f"{c:g}" for c in scores],
        rd.spec.unit,
        annotator.astype(np.int64),
        annotators.tolist(),
    )


def cell_observations(rd: RankingData) -> Observations:
    """The cells likelihood's observations: one per judged (pair, prompt) cell of the rating matrix
    (:func:`observations`)."""
    rm = rd.matrix
    assert rm is not None  # the cells likelihood has its matrix
    i, j = np.nonzero(rm.codes() >= 0)
    comp = rm.comparisons.iloc[i]
    a, b = comp["system_a"].to_numpy(dtype=str), comp["system_b"].to_numpy(dtype=str)
    code, prompt_ids = rm.codes()[i, j], np.asarray(rm.prompt_ids).astype(str)
    return _paired(rd, a, b, j, code, prompt_ids, np.zeros(len(i)), [str(c) for c in rm.categories], None, None)


def vote_observations(rd: RankingData) -> Observations:
    """The votes likelihood's observations: one per vote, oriented (:func:`observations`)."""
    from lib.judgments.ratings import orient_votes

    raw = rd.votes
    assert raw is not None  # the votes likelihood has its votes
    votes = orient_votes(raw)
    # the names stay text columns (pandas' str): compared and looked up as they are, never as Python strings
    a, b = votes["system_a"], votes["system_b"]
    ties = (votes["winner"] == "tie").any()
    code = votes["winner"].astype("category").map(_VOTE_CODES if ties else {"a": 0, "b": 1}).to_numpy(np.int64)
    categories = ["A better", "tie", "B better"] if ties else ["A better", "B better"]
    j, prompt_ids = pd.factorize(votes["prompt_id"], sort=True)
    side = np.zeros(len(votes))
    if "first" in votes:
        side = (votes["first"] == b).to_numpy(dtype=float) - (votes["first"] == a).to_numpy(dtype=float)
    weight = votes["weight"].to_numpy(dtype=float) if "weight" in votes else None
    style = None
    if rd.style is not None:
        turned = (a != raw["system_a"]).to_numpy(dtype=bool)  # the votes orient_votes turned
        style = np.where(turned[:, None], rd.style.values, -rd.style.values)
    return _paired(rd, a, b, j, code, prompt_ids, side, categories, weight, style)


def _paired(rd: RankingData, a, b, j, code, prompt_ids, side, categories, weight, style) -> Observations:
    """Paired observations from the systems A and B of each (names), its prompt index ``j`` into ``prompt_ids``,
    its outcome code, side, weight and style covariates, with the votes' categories of ``rd``."""
    category_names, category = (None, None) if rd.category is None else np.unique(rd.category, return_inverse=True)
    ia, ib = (system_codes(x, rd.systems) for x in (a, b))
    pairs, pair = np.unique(ia * len(rd.systems) + ib, return_inverse=True)
    names = np.asarray(rd.systems)
    return Observations(
        ia,
        ib,
        np.asarray(j, dtype=np.int64),
        np.asarray(code, dtype=np.int64),
        side,
        pair.astype(np.int64),
        list(rd.systems),
        [str(p) for p in prompt_ids],
        pd.DataFrame({"system_a": names[pairs // len(names)], "system_b": names[pairs % len(names)]}),
        categories,
        rd.spec.unit,
        weight=weight,
        features=style,
        feature_names=list(rd.style.names) if rd.style is not None and style is not None else [],
        category=None if category is None else category.astype(np.int64),
        category_names=[] if category_names is None else [str(c) for c in category_names],
    )


def one_score_a_cell(obs: Observations) -> bool:
    """Whether ratings hold one score in every (prompt, system) cell they fill (False for paired judgments).

    There a prompt's discrimination alpha_j rests on the prompt's few scores, with its effect eta_j,
    and is noise that overstates differences: with two equal systems, 40 prompts and one score a
    cell, free alpha_j declared one better (P(best) above 0.975) in 7-10% of simulated null studies,
    alpha_j = 1 in about 6% of the same (``bench/bench_null_calibration_rank.py``; docs/leaderboard.md,
    "Null calibration"; issue 16). The fit then shares one discrimination, as the GRM shares its
    thresholds where each cell holds one judgment.
    """
    if obs.paired:
        return False
    cells = obs.prompt * len(obs.systems) + obs.system_b
    return len(np.unique(cells)) == len(cells)


def learns_alpha_spread(obs: Observations) -> bool:
    """Whether votes learn the spread of the prompts' discriminations: log alpha_j = sigma_alpha z_j,
    z_j ~ N(0, 1), sigma_alpha ~ HalfNormal(0.5), where most votes come from prompts whose votes compare
    two or more pairs of systems (an arena).

    A prompt's few votes cannot place its alpha_j, so its posterior stays near the prior's: under the
    fixed log alpha_j ~ N(0, 0.5) the mean alpha came out 1.16 where the simulated one was 1.04 (log alpha
    SD 0.3), the skills 4% too close together and 83 of 100 true skills in their 95% intervals; learning
    sigma_alpha gave 0.29-0.31, slopes 0.99-1.01 and 195 of 200 (``bench/bench_arena_coverage.py``: 50
    systems, 4 simulated arenas; ``bench/bench_arena_rank.py``: 98 of 100; docs/leaderboard.md, issue 19).
    Where a prompt's votes all compare one pair (PandaLM: three annotators on one pair), their agreement
    cannot tell the prompt's discrimination from its own preference between the two: the spread learnt
    there was 3 (NUTS) and no Gaussian described it, and the fixed prior stays.
    """
    if not obs.likelihood.per_vote:
        return False
    pairs_on_prompt = pd.Series(obs.pair).groupby(obs.prompt).nunique()
    return bool((pairs_on_prompt.to_numpy()[obs.prompt] >= 2).mean() > 0.5)


def build_ranking(
    obs: Observations,
    *,
    baseline: str | None = None,
    intransitivity: bool = False,
    position_bias: bool = False,
    fixed_alpha: bool = False,
    annotator_effect: bool = False,
) -> pm.Model:
    """Build the ranking model (module docstring) for flattened observations.

    Parameters
    ----------
    obs : Observations
    baseline : str, optional
        System whose skill is 0; None: skills sum to zero.
    intransitivity : bool
        Add pair deviations ``delta`` (pair) with scale ``tau`` (paired likelihoods only).
    position_bias : bool
        Add ``gamma`` on the side of the system shown first (votes only).
    fixed_alpha : bool
        alpha_j = 1 for every prompt (Bradley-Terry when votes have no ties).
    annotator_effect : bool
        Add annotator severities ``zeta`` (annotator) with scale ``sigma_zeta`` (ratings only).

    Returns
    -------
    pymc.Model
        Posterior variables ``skill`` (system), ``alpha`` (prompt), ``b`` ((prompt, threshold)
        for paired data, (threshold,) for ratings), ``sigma_alpha`` where :func:`learns_alpha_spread`,
        and as asked ``tau``, ``delta`` (pair),
        ``gamma``, ``sigma_eta``, ``eta`` (prompt), ``sigma_zeta``, ``zeta`` (annotator), and ``style``
        (feature) when ``obs`` has style covariates, ``sigma_category`` and ``category_skill`` (category, system)
        when it has categories (:mod:`lib.ranking.categories`). The log-likelihood is the potential ``loglik``,
        the sum of the observations' :data:`LOGLIK_TERMS` (each multiplied by its weight, ``obs.weight``).

    Raises
    ------
    SettingsError
        A baseline that is not a system; intransitivity or position bias for ratings; annotator
        severity for paired judgments or with fewer than two annotators; a net rating scale with an
        even number of categories.

    Notes
    -----
    With ``obs.weight`` each vote's log-likelihood is multiplied by its weight (a weighted likelihood: a vote
    of weight 0 counts for nothing, one of weight 1 as an unweighted vote).
    """
    import pymc as pm
    import pytensor.tensor as pt

    from lib.irt.model import ordinal_logp

    check_effects(
        obs,
        baseline=baseline,
        intransitivity=intransitivity,
        position_bias=position_bias,
        annotator_effect=annotator_effect,
    )
    n_systems, n_prompts = len(obs.systems), len(obs.prompts)
    coords = {"system": obs.systems, "prompt": obs.prompts, "threshold": np.arange(1, len(obs.categories))}
    if obs.paired:
        coords["pair"] = (obs.pairs["system_b"] + " vs " + obs.pairs["system_a"]).tolist()
    if annotator_effect:
        coords["annotator"] = obs.annotators
    if obs.features is not None:
        coords["feature"] = obs.feature_names
    if obs.category is not None:
        coords["category"] = obs.category_names
    with pm.Model(coords=coords) as model:
        if baseline is None:
            skill = pm.ZeroSumNormal("skill", sigma=SKILL_PRIOR_SD, dims="system")
        else:
            k = obs.systems.index(baseline)
            free = pm.Normal("skill_free", 0.0, SKILL_PRIOR_SD, shape=n_systems - 1)
            skill = pm.Deterministic("skill", pt.concatenate([free[:k], pt.zeros(1), free[k:]]), dims="system")
        if fixed_alpha:
            alpha = pm.Deterministic("alpha", pt.ones(n_prompts), dims="prompt")
        elif learns_alpha_spread(obs):
            sigma_alpha = pm.HalfNormal("sigma_alpha", LOG_ALPHA_PRIOR_SD)
            z_alpha = pm.Normal("log_alpha_z", 0.0, 1.0, dims="prompt")
            alpha = pm.Deterministic("alpha", pt.exp(sigma_alpha * z_alpha), dims="prompt")
        else:
            log_alpha = pm.Normal("log_alpha", 0.0, LOG_ALPHA_PRIOR_SD, dims="prompt")
            alpha = pm.Deterministic("alpha", pt.exp(log_alpha), dims="prompt")
        prompt, code = pt.as_tensor(obs.prompt), pt.as_tensor(obs.code)
        location, cut, rows = obs.likelihood.load("terms")(
            obs,
            skill,
            prompt,
            intransitivity=intransitivity,
            position_bias=position_bias,
            annotator_effect=annotator_effect,
        )
        terms = ordinal_logp(alpha[prompt], location, cut, rows, code)
        if obs.weight is not None:
            terms = terms * pt.as_tensor(obs.weight)
        terms.name = LOGLIK_TERMS
        pm.Potential("loglik", pt.sum(terms))
    return model


def check_effects(
    obs: Observations, *, baseline: str | None, intransitivity: bool, position_bias: bool, annotator_effect: bool
) -> None:
    """Refuse effects the data cannot carry (see :func:`build_ranking`'s Raises): the full model's refusals, made by
    the likelihoods' own Laplace fits too (:mod:`lib.ranking.marginal`, :mod:`lib.ranking.marginal_ratings`), before
    they fit.

    Raises
    ------
    lib.errors.SettingsError
        A baseline that is not a system; intransitivity or position bias for ratings; annotator severity for
        paired judgments, or with fewer than two named annotators.
    """
    from lib.errors import SettingsError

    if baseline is not None and baseline not in obs.systems:
        raise SettingsError(f"baseline '{baseline}' is not one of the systems")
    if not obs.paired and (intransitivity or position_bias):
        raise SettingsError("intransitivity and position bias need paired judgments (votes or cells), not ratings")
    if annotator_effect and obs.paired:
        raise SettingsError(
            "annotator severity is part of the ratings likelihood (scores of one system by one "
            "annotator); paired judgments (votes or cells) compare systems within an annotator"
        )
    named = [a for a in obs.annotators if a]  # "": the file has no annotator column
    if annotator_effect and len(named) < 2:
        raise SettingsError(
            "annotator severity needs scores from at least two annotators: map the file's "
            f"annotator column (these scores name {len(named)})"
        )


def paired_terms(
    obs: Observations, skill, prompt, *, intransitivity: bool, position_bias: bool, annotator_effect: bool
):
    """Votes or cells (inside the model's context): the location ``skill_b - skill_a`` (+ ``delta``,
    + ``gamma`` as asked), the antisymmetric thresholds ``b`` and the row of ``b`` of each observation
    (``annotator_effect`` is refused for paired judgments, :func:`build_ranking`)."""
    import pymc as pm
    import pytensor.tensor as pt

    from lib.irt.model import antisymmetric_cutpoints

    n_prompts, n_categories = len(obs.prompts), len(obs.categories)
    # tensors, not numpy arrays, as indices: PyTensor checks a numpy index element by element in Python
    # (about 1 s per index of an arena's 500,000 votes)
    a, b = pt.as_tensor(obs.system_a), pt.as_tensor(obs.system_b)
    if obs.category is None:
        location = skill[b] - skill[a]
    else:  # each vote compares the two systems' skills in its category
        from lib.ranking.categories import category_skills

        per, c = category_skills(skill), pt.as_tensor(obs.category)
        location = per[c, b] - per[c, a]
    if intransitivity:
        tau = pm.HalfNormal("tau", TAU_PRIOR_SD)
        z = pm.Normal("delta_z", 0.0, 1.0, dims="pair")
        location = location + pm.Deterministic("delta", tau * z, dims="pair")[obs.pair]
    if position_bias:
        location = location + pm.Normal("gamma", 0.0, GAMMA_PRIOR_SD) * obs.side
    if obs.features is not None:
        location = location + pt.dot(
            pt.as_tensor(obs.features), pm.Normal("style", 0.0, STYLE_PRIOR_SD, dims="feature")
        )
    # votes share one set of thresholds (a prompt has too few votes to place its own, and
    # their broad prior drags alpha down and spreads the skills); cells keep the GRM's own
    shared = obs.likelihood.per_vote
    if n_categories == 2:  # no ties: the single threshold is 0 (Bradley-Terry)
        cut = pt.zeros((1, 1))
    else:
        check_cutpoints("antisymmetric", n_categories)
        cut = antisymmetric_cutpoints(1 if shared else n_prompts, (n_categories - 1) // 2)
    pm.Deterministic("b", cut[0] if shared else cut, dims=("threshold",) if shared else ("prompt", "threshold"))
    rows = pt.zeros_like(prompt) if shared else prompt
    return location, cut, rows


def ratings_terms(
    obs: Observations, skill, prompt, *, intransitivity: bool, position_bias: bool, annotator_effect: bool
):
    """Ratings (inside the model's context): the location ``skill + eta`` (- ``zeta`` as asked), one
    ordered set of thresholds ``b`` and its row (0) for every score (``intransitivity`` and ``position_bias``
    are refused for ratings, :func:`build_ranking`)."""
    import pymc as pm
    import pytensor.tensor as pt
    from pymc.distributions import transforms

    sigma_eta = pm.HalfNormal("sigma_eta", SIGMA_ETA_PRIOR_SD)
    eta = pm.Deterministic("eta", sigma_eta * pm.Normal("eta_z", 0.0, 1.0, dims="prompt"), dims="prompt")
    location = skill[obs.system_b] + eta[prompt]
    if annotator_effect:
        sigma_zeta = pm.HalfNormal("sigma_zeta", SIGMA_ZETA_PRIOR_SD)
        z = pm.Normal("zeta_z", 0.0, 1.0, dims="annotator")
        location = location - pm.Deterministic("zeta", sigma_zeta * z, dims="annotator")[obs.annotator]
    cut = pm.Normal(
        "b",
        0.0,
        B_PRIOR_SD,
        dims="threshold",
        transform=transforms.ordered,
        initval=np.linspace(-1.5, 1.5, len(obs.categories) - 1),
    )[None, :]
    rows = pt.zeros_like(prompt)
    return location, cut, rows


def posterior_names(model: pm.Model) -> list[str]:
    """The variables a ranking fit keeps: skill, alpha, b and whichever optional effects exist."""
    names = [
        *("skill", "alpha", "sigma_alpha", "b", "tau", "delta", "gamma", "style", "sigma_category", "category_skill"),
        *("sigma_eta", "eta", "sigma_zeta", "zeta"),
    ]
    return [n for n in names if n in model.named_vars]
