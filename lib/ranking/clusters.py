"""Votes on the same prompt are not independent: prompt-clustered variances, the design effect and its noise.

A prompt can favour one system more than its skill says (a prompt x system effect); every vote on
that prompt then leans the same way, and a model that treats votes as independent gives intervals
that are too narrow (8 systems, 30 prompts x 50 votes, an effect of SD 0.3 logits: the model's 95%
intervals covered 85% of the simulated skills, ``bench/bench_prompt_clusters.py``). The remedy is the
cluster-robust sandwich, which sums the likelihood's scores within a prompt before taking their outer
products (Liang & Zeger 1986; Cameron & Miller 2015): for Bradley–Terry's maximum likelihood
(:func:`lib.ranking.baseline.bradley_terry`) and, as a "Bayesian sandwich" (Müller 2013, "Risk of
Bayesian inference in misspecified models, and the sandwich covariance matrix", Econometrica 81(5)),
for the posterior of the skills (:func:`prompt_clustering`), which the leaderboard uses by default
(:data:`CLUSTER_MODES`).

Light imports only (numpy): the command line's parser reads :data:`CLUSTER_MODES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from lib.engine.blas import one_blas_thread

if TYPE_CHECKING:
    import arviz as az

CLUSTER_MODES = {
    "auto": "prompt-clustered intervals whenever they can be estimated: at least {min} prompts, two or more "
    "votes a prompt on average (else the model's, and the fit says why)",
    "on": "prompt-clustered intervals whenever the prompts carry several votes, even with fewer than {min} prompts",
    "off": "the model's intervals, which treat votes as independent (the fit still says when votes are dependent)",
}
"""Choices of ``RankSettings.cluster_prompts`` (``--cluster-prompts``, the page's setting), name -> help text
(``{min}``: :data:`MIN_PROMPTS`)."""
DEFAULT_CLUSTERING = "auto"
"""The leaderboard's prompt clustering unless one is chosen (:class:`lib.ranking.fit.RankChoices`, the page and
the command line alike): the clustered intervals cost nothing at nominal coverage where votes are
independent (95.3%, as the model's, in simulations of 8 systems x 30 prompts x 50 votes) and cover more
where they are not (90.3% against 85.6% with a prompt x system effect of SD 0.3; ``docs/leaderboard.md``,
"Votes that share a prompt")."""
MIN_PROMPTS = 20
"""Fewer prompts than this give no design effect (the figure is withheld with a statement) and, by
default, no clustering: a sandwich summed over a handful of clusters is noise (a 20-page pilot of the
Studies page read "37572.18 times what independent votes give"; Cameron & Miller 2015, sec. VI, on few
clusters)."""
CREDIBLE_Z = 1.645
"""Votes are called dependent when the design effect exceeds 1 by more than this many of its standard
errors (a one-sided 5% test) ..."""
DESIGN_EFFECT_WARN = 1.2
"""... and exceeds this (20% more variance, intervals 10% wider): a smaller excess changes little, and the
estimate of independent votes sits a few percent above 1 (the Laplace posterior is a little narrow)."""

T_SEED = 0
"""Seed of the chi-square mixing that makes the clustered draws Student-t (:func:`prompt_clustering`): the
same fit gives the same intervals."""

DEPENDENT_NOTE = (
    "votes on the same prompt are dependent: the skills' variance is {de:.2f} times (± {se:.2f}) what "
    "independent votes give (design effect over {n} prompts; a prompt favours some systems more than their "
    "skill says)."
)
CLUSTER_ADVICE = " Use prompt-clustered intervals (--cluster-prompts on, or the Leaderboard's setting)."
CLUSTERED_NOTE = " The intervals are prompt-clustered (cluster-robust sandwich)."
CLUSTERED_INFO = (
    "The intervals are prompt-clustered (cluster-robust sandwich; design effect {de:.2f} ± {se:.2f} over {n} "
    "prompts, no sign that votes on the same prompt are dependent)."
)
FEW_PROMPTS_NOTE = (
    "whether votes on the same prompt are dependent cannot be told from {n} prompts (at least {min} are "
    "needed for a design effect): the intervals treat votes as independent and may be too narrow."
)
BEYOND_NOTE = (
    "no design effect is given: the prompt-clustered sandwich gives the skills more variance than votes "
    "could have even if all the observations of a prompt agreed ({bound} times, the most a prompt carries), "
    "so it measures how badly the model's prompt discriminations (alpha_j up to {alpha:.1f}) describe these "
    "votes, not their dependence. {intervals}"
)
BEYOND_INTERVALS = {
    False: "The intervals are the model's and may be too narrow: a NUTS fit or more votes a prompt will tell.",
    True: "The intervals are prompt-clustered from that sandwich, as asked.",
}
FEW_PROMPTS_FORCED_NOTE = (
    "prompt-clustered intervals from {n} prompts (fewer than {min}, as asked): a sandwich summed over so few "
    "prompts is itself uncertain, and no design effect is given."
)


def cluster_scores(ia: np.ndarray, ib: np.ndarray, score: np.ndarray, cluster: np.ndarray, k: int) -> np.ndarray:
    """``C / (C - 1) sum_c g_c g_c'`` with ``g_c = sum_(v in c) score_v (e_a - e_b)``: the middle of a
    cluster-robust sandwich (Cameron & Miller 2015, "A practitioner's guide to cluster-robust
    inference", J. Human Resources 50(2), eqs. 11-12, with the small-sample factor C / (C - 1)).

    Parameters
    ----------
    ia, ib : ndarray (N,) of int
        The two systems of each observation (``score`` is d loglik / d(s_a - s_b)).
    score : ndarray (N,)
    cluster : ndarray (N,) of int >= 0
        Cluster index of each observation (its prompt's); an index no observation carries is no cluster.
    k : int
        Number of systems.

    Returns
    -------
    ndarray (k, k)
    """
    g = _cluster_sums(ia, ib, score, cluster, k)
    return g.T @ g * len(g) / max(len(g) - 1, 1)


def _cluster_sums(ia: np.ndarray, ib: np.ndarray, score: np.ndarray, cluster: np.ndarray, k: int) -> np.ndarray:
    """``g_c = sum_(v in c) score_v (e_a - e_b)`` for every cluster carrying observations, (C, k), in index order
    (``cluster``: (N,) int >= 0)."""
    cluster = np.asarray(cluster, dtype=np.int64)
    size = (int(cluster.max(initial=-1)) + 1) * k
    # two weighted counts over (cluster, system) cells: an arena's 500,000 votes in 0.01-0.02 s (np.add.at and the
    # labels' np.unique took 0.06 s)
    cells = cluster * k
    g = np.bincount(cells + ia, weights=score, minlength=size) - np.bincount(cells + ib, weights=score, minlength=size)
    return g.reshape(-1, k)[np.bincount(cluster) > 0]


@dataclass
class Clustering:
    """Prompt clustering of a ranking fit's observations (:func:`prompt_clustering`).

    ``design_effect``: the clustered variance of the skills over the model's, averaged over the systems
    whose skill varies, and ``se`` its standard error (both NaN when not estimated: fewer than
    :data:`MIN_PROMPTS` prompts, one observation a prompt, or no draw varies); ``n_prompts``; ``several``:
    whether the prompts carry two or more observations on average; ``dependent``: :func:`dependent`;
    ``skill_draws`` (S, K): the draws moved about their mean so that their scale is the clustered covariance
    (Student-t; the draws as given when not asked to move them; None when they cannot be formed);
    ``most``: the most observations a prompt carries; ``beyond``: whether the sandwich's variance ratio
    exceeded ``most`` (the design effect is then NaN, :func:`prompt_clustering`).
    """

    design_effect: float
    se: float
    n_prompts: int
    several: bool
    dependent: bool
    skill_draws: np.ndarray | None
    most: int = 0
    beyond: bool = False


def dependent(design_effect: float, se: float) -> bool:
    """Whether a design effect says votes on the same prompt are dependent: above 1 by more than
    :data:`CREDIBLE_Z` standard errors, and above :data:`DESIGN_EFFECT_WARN` (False for NaN).

    With independent votes this fired in 3 of 40 simulated studies of 30 prompts x 50 votes and 0 of 20
    of 100 prompts x 15 votes; with a prompt x system effect of SD 0.3, in 27 of 40
    (``bench/bench_prompt_clusters.py``; on exact Gaussian posteriors 5 and 87 of 200,
    ``tests/ranking/test_rank_clusters.py``).
    """
    return bool(design_effect - CREDIBLE_Z * se > 1 and design_effect > DESIGN_EFFECT_WARN)


def vote_scores(skill_mean: np.ndarray, obs, means: dict[str, np.ndarray]) -> np.ndarray:
    """``d_v = d loglik_v / d location_v`` of each paired observation (N,), at the given parameters.

    The location is ``s_B - s_A (+ gamma side + delta_AB + style features' beta)`` in ``P(y >= c) = logistic(alpha_j
    (location - b_jc))``. NaN or infinite where the parameters put an observed category at probability 0.
    """
    from scipy.special import expit

    loc = skill_mean[obs.system_b] - skill_mean[obs.system_a]
    if "gamma" in means:
        loc = loc + means["gamma"] * obs.side
    if "delta" in means:
        loc = loc + means["delta"][obs.pair]
    if "style" in means:  # style control's covariates (lib.ranking.model)
        loc = loc + obs.features @ means["style"]
    alpha = means["alpha"][obs.prompt]
    b = np.atleast_2d(means["b"])
    b = b[0] if len(b) == 1 else b[obs.prompt]  # (C - 1,) shared, or (N, C - 1)
    cum = np.empty((len(loc), b.shape[-1] + 2))  # P(y >= c), c = 0..C
    cum[:, 0], cum[:, -1] = 1.0, 0.0
    expit(alpha[:, None] * (loc[:, None] - b), out=cum[:, 1:-1])
    code = np.asarray(obs.code)[:, None]
    lo, hi = np.take_along_axis(cum, code, 1)[:, 0], np.take_along_axis(cum, code + 1, 1)[:, 0]
    with np.errstate(all="ignore"):
        return alpha * (lo * (1 - lo) - hi * (1 - hi)) / np.maximum(lo - hi, 1e-300)


def prompt_clustering(
    skill: np.ndarray, obs, means: dict[str, np.ndarray], prior_sd: float, *, transform: bool = True
) -> Clustering:
    """The cluster-robust ("Bayesian sandwich") covariance of the skills, clustered by prompt, and the
    design effect with its standard error.

    With Sigma the posterior covariance of the skills and ``g_c = sum_(v in c) d_v x_v`` the sum of the
    scores of prompt c's observations (``d_v``: :func:`vote_scores` at the posterior means,
    ``x_v = e_B - e_A``), the clustered covariance is::

        V = Sigma + Sigma (G_c - (Sigma^-1 - P)) Sigma = Sigma P Sigma + Sigma G_c Sigma,
        G_c = C / (C - 1) sum_c g_c g_c'

    where P = I / prior_sd^2 is the skills' prior precision (on their sum-to-zero or baseline subspace):
    Müller's (2013, eq. 6) sandwich with the likelihood's part of the posterior precision, Sigma^-1 - P,
    replaced by its cluster-robust estimate G_c (Liang & Zeger 1986; Cameron & Miller 2015, eq. 12, with
    the small-sample factor C / (C - 1)). Sigma^-1 - P is the model's own information, the prompt
    discriminations alpha_j already integrated out, so with independent votes E[G_c] is close to it and
    V to Sigma. (The per-vote outer products ``sum_v d_v^2 x_v x_v'`` are not: they ignore that alpha_j
    is learnt from the same prompt's votes, and exceed Sigma^-1 - P by a third; a design effect taken
    against them, with its negative part clipped, was 1.3-1.6 for independent votes and the warning fired
    on 19 of 20 simulated studies.)

    The clustered draws are the model's moved about their mean so that their scale matrix is V, and made
    Student-t with C - 1 degrees of freedom (each draw's deviation times ``sqrt((C - 1) / w)``, w ~
    chi-square(C - 1)): V is estimated from C prompts, and with few of them intervals from its normal
    quantiles are too narrow (Cameron & Miller 2015, sec. VI.C, the t(G - 1) critical values; with C = 30
    a 95% interval is 4% wider).

    The design effect is ``mean_k V_kk / Sigma_kk`` over the systems whose skill varies, unclipped:
    ``(Sigma P Sigma)_kk / Sigma_kk`` plus one term per prompt, ``t_c = C / (C - 1) mean_k (Sigma
    g_c)_k^2 / Sigma_kk``; the prompts are independent, so its standard error is that of a sum of C
    independent terms, ``sqrt(C / (C - 1) sum_c (t_c - mean t)^2)``. It cannot exceed the most
    observations a prompt carries, m: were all m observations of a prompt to agree, its score would be m
    times one observation's and its share of the information m times too (Kish's design effect
    ``1 + (m - 1) rho`` at rho = 1). A larger figure does not measure dependence but a model that does
    not describe the votes (the ROME study's fluency: 60 prompts of up to 9 votes, prompt
    discriminations alpha_j up to 1210 at the posterior median, and a ratio of 495 ± 241): it is withheld
    (``beyond``).

    Parameters
    ----------
    skill : ndarray (S, K)
        Posterior draws of the skills.
    obs : lib.ranking.model.Observations
        Paired observations (votes or cells).
    means : dict
        Posterior point values: ``alpha`` (J,), ``b`` ((C - 1,) shared or (J, C - 1)), optional ``gamma``
        and ``delta`` (pairs,) (:func:`cluster_by_prompt` takes alpha's posterior median).
    prior_sd : float
        The skills' prior SD (logits; :data:`lib.ranking.model.SKILL_PRIOR_SD`).
    transform : bool
        Also move the draws to the clustered covariance (``skill_draws``; else the draws as given).

    Returns
    -------
    Clustering
        Design effect NaN with fewer than :data:`MIN_PROMPTS` prompts or ``beyond`` the most observations
        a prompt carries (the clustered draws are still formed); design effect NaN and ``skill_draws``
        None where the prompts carry fewer than two observations on average (nothing to cluster), with no
        spread in the draws, or where the means put an observation at probability 0.

    Notes
    -----
    Memory: the design effect uses Sigma only through the draws (the (C, K) per-prompt scores, Sigma g_c
    and an (S, S) product of the draws: no (K, K) array); moving the draws (``transform``) needs about eight
    (K, K) arrays. ``lib.ranking.budget`` counts both.
    """
    k = skill.shape[1]
    mean = skill.mean(axis=0)
    counts = np.bincount(obs.prompt)  # observations a prompt
    n_prompts = int(np.count_nonzero(counts))
    several = len(obs.prompt) >= 2 * n_prompts
    most = int(counts.max(initial=0))
    nothing = Clustering(float("nan"), float("nan"), n_prompts, several, False, None, most)
    # one observation a prompt: nothing to cluster; no spread: nothing to widen (a stuck chain is flagged apart)
    if not several or len(skill) < 3 or not np.ptp(skill, axis=0).any():
        return nothing
    d = vote_scores(mean, obs, means)
    if not np.isfinite(d).all():  # means outside the model's range
        return nothing
    if obs.weight is not None:  # a weighted likelihood's score (annotator weights)
        d = d * obs.weight
    g = _cluster_sums(obs.system_b, obs.system_a, d, obs.prompt, k)
    factor = n_prompts / max(n_prompts - 1, 1)
    centred = skill - mean
    # Sigma = X'X / (S - 1), X the centred draws: formed (K, K) where K <= S (an arena of 100 systems and 20,000
    # prompts: 0.03 s, against 3 s and an (S, C) array through X); with more systems than draws only through the
    # draws (no (K, K) array unless the draws are moved: an arena of 10,000 systems)
    gram = centred.T @ centred if k <= len(skill) else None
    sigma_g = gram @ g.T if gram is not None else centred.T @ (centred @ g.T)
    spread = sigma_g * (np.sqrt(factor) / (len(skill) - 1))  # (K, C): Sigma g_c
    var = np.einsum("sk,sk->k", centred, centred) / (len(skill) - 1)  # diag(Sigma)
    draws = skill
    if transform:
        sigma = np.atleast_2d(np.cov(skill, rowvar=False))
        adjusted = sigma @ sigma / prior_sd**2 + spread @ spread.T
        moved = centred @ _transform(sigma, adjusted) * t_mixing(n_prompts, len(skill))[:, None]
        # the sandwich widens the intervals; the estimate stays the model's (the t factors' draws re-centred)
        draws = mean + moved - moved.mean(axis=0)
    if n_prompts < MIN_PROMPTS:
        return Clustering(float("nan"), float("nan"), n_prompts, several, False, draws, most)
    varies = var > 1e-12 * var.max()
    # diag(Sigma Sigma) (S - 1)^2 = diag((X'X)^2), the squares of X'X's rows; = diag(X' (X X') X) (S x S, not K x K)
    if gram is not None:
        square = np.einsum("ij,ij->i", gram, gram) / (len(skill) - 1) ** 2
    else:
        square = np.einsum("sk,sk->k", centred, (centred @ centred.T) @ centred) / (len(skill) - 1) ** 2
    terms = (spread[varies] ** 2 / var[varies, None]).mean(axis=0)  # t_c, (C,)
    design_effect = float((square[varies] / var[varies]).mean() / prior_sd**2 + terms.sum())
    se = float(np.sqrt(factor * ((terms - terms.mean()) ** 2).sum()))
    if design_effect > most:  # more than votes that all agree within a prompt could give: not a design effect
        return Clustering(float("nan"), float("nan"), n_prompts, several, False, draws, most, beyond=True)
    return Clustering(design_effect, se, n_prompts, several, dependent(design_effect, se), draws, most)


def t_mixing(n_prompts: int, n_draws: int) -> np.ndarray:
    """``sqrt((C - 1) / w)``, w ~ chi-square(C - 1), one a draw (seeded, :data:`T_SEED`): the factors that
    make the prompt-clustered draws Student-t with C - 1 degrees of freedom (:func:`prompt_clustering`).
    The sandwich is estimated from C prompts; normal draws at its scale covered 93.3% of 1600 skills with
    independent votes (Cameron & Miller 2015, sec. VI.C: t(G - 1) critical values)."""
    df = max(n_prompts - 1, 1)
    return np.sqrt(df / np.random.default_rng(T_SEED).chisquare(df, n_draws))


def _transform(sigma: np.ndarray, target: np.ndarray) -> np.ndarray:
    """T with ``T' sigma T = target`` for ``target`` in the range of ``sigma`` (both PSD, (K, K)):
    ``sigma^(+1/2) target^(1/2)`` (symmetric roots; the pseudo-inverse on sigma's range, which the
    sum-to-zero or baseline constraint makes singular)."""
    w, v = np.linalg.eigh(sigma)
    keep = w > 1e-12 * w.max()
    inv_root = (v[:, keep] / np.sqrt(w[keep])) @ v[:, keep].T
    wt, vt = np.linalg.eigh(target)
    root = (vt * np.sqrt(np.clip(wt, 0, None))) @ vt.T
    return inv_root @ root


def applies(mode: str, result: Clustering) -> bool:
    """Whether a fit of ``RankSettings.cluster_prompts`` = ``mode`` (:data:`CLUSTER_MODES`) takes the
    prompt-clustered draws: "auto" where the design effect was estimated (:func:`prompt_clustering`: at
    least :data:`MIN_PROMPTS` prompts carrying two or more observations on average, and a sandwich within
    what dependent votes can give), "on" wherever the
    clustered draws could be formed, "off" never."""
    if result.skill_draws is None or mode == "off":
        return False
    return mode == "on" or np.isfinite(result.design_effect)


def cluster_by_prompt(idata: az.InferenceData, obs, mode: str, warnings: list[str]) -> Clustering:
    """Say whether the votes are clustered by prompt; where ``mode`` asks for it (:func:`applies`) replace
    the skill draws by the prompt-clustered ones (:func:`prompt_clustering`).

    ``warnings`` (the fit's) gets :data:`DEPENDENT_NOTE` when the votes are dependent (with
    :data:`CLUSTERED_NOTE` or :data:`CLUSTER_ADVICE`), or a statement why there is no design effect
    (fewer than :data:`MIN_PROMPTS` prompts with several votes each; a sandwich beyond what dependent
    votes could give, :data:`BEYOND_NOTE`). The posterior's attrs keep
    ``design_effect``, ``design_effect_se``, ``design_effect_prompts`` and ``prompt_clustered`` (1 or 0).
    The scores are taken at the posterior median of each alpha_j (exp of the mean of log alpha_j): its
    posterior is skewed, and at its mean the design effect of independent votes came out 3% higher.
    """
    from lib.ranking.model import SKILL_PRIOR_SD

    post = idata["posterior"]
    skill = post["skill"]
    draws = skill.stack(sample=("chain", "draw")).transpose("sample", "system").to_numpy().astype(np.float64)
    means = {n: post[n].mean(("chain", "draw")).to_numpy() for n in ("b", "gamma", "delta", "style") if n in post}
    log_alpha = np.log(post["alpha"].transpose("chain", "draw", ...).to_numpy())
    means["alpha"] = np.exp(log_alpha.mean(axis=(0, 1), dtype=np.float64))  # summed in float64 (float32 draws)
    with one_blas_thread():  # (K, K) and (K, prompts) products: BLAS threads made them 2-7x slower (loaded 2 cores)
        result = prompt_clustering(draws, obs, means, SKILL_PRIOR_SD, transform=mode != "off")
    apply = applies(mode, result)
    if result.dependent:
        note = DEPENDENT_NOTE.format(de=result.design_effect, se=result.se, n=result.n_prompts)
        warnings.append(note + (CLUSTERED_NOTE if apply else CLUSTER_ADVICE))
    elif result.beyond:
        alpha = float(means["alpha"].max())
        warnings.append(BEYOND_NOTE.format(bound=result.most, alpha=alpha, intervals=BEYOND_INTERVALS[apply]))
    elif result.several and result.n_prompts < MIN_PROMPTS:
        template = FEW_PROMPTS_FORCED_NOTE if apply else FEW_PROMPTS_NOTE
        warnings.append(template.format(n=result.n_prompts, min=MIN_PROMPTS))
    if apply:
        assert result.skill_draws is not None  # applies() checked it
        shape = (skill.sizes["chain"], skill.sizes["draw"], skill.sizes["system"])
        # the stacked sample order is chain-major, as the reshape expects
        post["skill"] = skill.copy(data=result.skill_draws.reshape(shape).astype(skill.dtype))
    post.attrs.update(
        design_effect=result.design_effect,
        design_effect_se=result.se,
        design_effect_prompts=result.n_prompts,
        prompt_clustered=int(apply),
    )
    return result


def clustering_note(attrs) -> str | None:
    """:data:`CLUSTERED_INFO` for a fit's posterior attrs (:func:`cluster_by_prompt`) whose intervals are
    prompt-clustered with a design effect that does not call the votes dependent (the warnings say the
    rest); None otherwise, and for a fit stored before the attrs existed."""
    de, se = attrs.get("design_effect", float("nan")), attrs.get("design_effect_se", float("nan"))
    if not attrs.get("prompt_clustered") or not np.isfinite(de) or dependent(de, se):
        return None
    return CLUSTERED_INFO.format(de=de, se=se, n=attrs["design_effect_prompts"])
