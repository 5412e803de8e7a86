"""How reliable each annotator is, from the answers alone: Dawid-Skene, agreement, and weights for the votes.

Dawid & Skene (1979), "Maximum likelihood estimation of observer error-rates using the EM algorithm", JRSS C
28(1): every task has a true label k (prior pi_k) and each annotator answers l with probability
``e_a(l | k)`` (their confusion matrix); EM estimates the priors, the matrices and each task's truth
together (crowd-kit's ``DawidSkene``, Ustalov et al. 2024, "Learning from crowds with Crowd-Kit", JOSS).

An annotator's **reliability** is Cohen's (1960) kappa of their answers against the Dawid-Skene truth under
the model: accuracy ``p_o = sum_k pi_k e_a(k | k)``, chance ``p_e = sum_l pi_l q_a(l)`` with the annotator's own
answer rates ``q_a(l) = sum_k pi_k e_a(l | k)``, ``kappa = (p_o - p_e) / (1 - p_e)``. It is 1 for an
annotator who always gives the truth and 0 for a spammer whatever their strategy (random answers, or the same
answer on every task: their accuracy is then the truth's share of that answer, which is their chance too),
so it is usable as a weight: :func:`vote_weights` gives each vote its annotator's reliability, clipped to
[0, 1] (the leaderboard's option, :mod:`lib.ranking`). **Agreement** is the share of the other annotators'
answers to the same tasks that equal the annotator's (simple pairwise agreement).
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from lib.errors import SettingsError

QUALITY_COLUMNS = ["annotator", "tasks", "shared_tasks", "agreement", "ds_accuracy", "reliability"]
"""Columns of :func:`annotator_quality`."""
DS_ITERATIONS = 100
"""Most EM iterations of the Dawid-Skene fit (it stops earlier when the log-likelihood changes less than
:data:`DS_TOLERANCE`)."""
DS_TOLERANCE = 1e-5
CACHED = 32
"""Answer sets whose quality is kept in memory: the Studies page asks again on every rerun, and the EM takes
about a second per few thousand answers (crowd-kit's pandas implementation)."""


def annotator_quality(labels: pd.DataFrame) -> pd.DataFrame:
    """Per annotator: tasks answered, agreement with the others and Dawid-Skene reliability.

    Parameters
    ----------
    labels : pandas.DataFrame
        One answer per row: ``task`` (hashable: an item and criterion, or a vote's pair, prompt and
        criterion), ``worker`` (the annotator) and ``label`` (the answer: a system, a / b / tie, a rating).
        An annotator answers a task at most once.

    Returns
    -------
    pandas.DataFrame
        :data:`QUALITY_COLUMNS`, one row per annotator (sorted): ``tasks`` answered, ``shared_tasks`` also
        answered by someone else, ``agreement`` (share of the others' answers to the same tasks equal to
        theirs; NaN without a shared task), ``ds_accuracy`` (P(answer = truth) under the Dawid-Skene fit) and
        ``reliability`` (kappa against the truth, module docstring; NaN without a shared task: alone on
        their tasks, an annotator is the truth).
    """
    rows = tuple(labels[["task", "worker", "label"]].astype(str).itertuples(index=False, name=None))
    return _quality_of(rows).copy()


@functools.lru_cache(maxsize=CACHED)
def _quality_of(rows: tuple[tuple[str, str, str], ...]) -> pd.DataFrame:
    """:func:`annotator_quality` of ``(task, worker, label)`` rows (memoised)."""
    from crowdkit.aggregation import DawidSkene  # imported on use: crowd-kit loads nltk (about a second)

    data = pd.DataFrame(list(rows), columns=["task", "worker", "label"])
    workers = sorted(data["worker"].unique())
    tasks = data.groupby("worker")["task"].nunique().reindex(workers, fill_value=0)
    agreement, shared = _agreement(data)
    accuracy = pd.Series(np.nan, index=workers)
    kappa = pd.Series(np.nan, index=workers)
    if data["label"].nunique() >= 2 and len(data):
        ds = DawidSkene(n_iter=DS_ITERATIONS, tol=DS_TOLERANCE).fit(data)
        assert ds.priors_ is not None and ds.errors_ is not None  # set by fit
        prior = ds.priors_.astype(float)
        errors = ds.errors_.astype(float)
        for worker in workers:
            matrix = errors.loc[worker].reindex(index=prior.index, columns=prior.index, fill_value=0.0)
            e = matrix.to_numpy()  # e[l, k] = P(answer l | truth k)
            pi = prior.to_numpy()
            p_o = float(pi @ np.diag(e))
            p_e = float(pi @ (e @ pi))
            accuracy[worker] = p_o
            kappa[worker] = (p_o - p_e) / (1 - p_e) if p_e < 1 else np.nan
    alone = shared.reindex(workers, fill_value=0) == 0
    kappa[alone] = np.nan
    return pd.DataFrame(
        {
            "annotator": workers,
            "tasks": tasks.to_numpy(),
            "shared_tasks": shared.reindex(workers, fill_value=0).to_numpy(),
            "agreement": agreement.reindex(workers).to_numpy(),
            "ds_accuracy": accuracy.to_numpy(),
            "reliability": kappa.to_numpy(),
        },
        columns=QUALITY_COLUMNS,
    )


def _agreement(data: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Per worker: the share of the other workers' answers to their tasks that equal theirs, and their tasks
    answered by someone else."""
    counts = data.groupby(["task", "label"]).size().rename("same")
    per_task = data.groupby("task").size().rename("n")
    rows = data.join(counts, on=["task", "label"]).join(per_task, on="task")
    rows = rows[rows["n"] >= 2]
    same, others = (rows["same"] - 1).groupby(rows["worker"]).sum(), (rows["n"] - 1).groupby(rows["worker"]).sum()
    return same / others, rows.groupby("worker")["task"].nunique()


def vote_labels(votes: pd.DataFrame) -> pd.DataFrame:
    """Canonical votes (``lib.judgments.formats.VOTE_COLUMNS``) as Dawid-Skene answers: a task per (prompt, system pair,
    criterion), the label a / b / tie of the alphabetically first system (``lib.judgments.ratings.orient_votes``), the
    worker the annotator."""
    from lib.judgments.ratings import orient_votes

    v = orient_votes(votes)
    task = v["prompt_id"].astype(str) + "\x1f" + v["system_a"] + "\x1f" + v["system_b"] + "\x1f" + v["criterion"]
    return pd.DataFrame({"task": task, "worker": v["annotator_id"].astype(str), "label": v["winner"].astype(str)})


def names_vote_annotators(data) -> bool:
    """Whether an analysis input's votes name at least two annotators on every vote (the leaderboard's
    annotator weights need that).

    Parameters
    ----------
    data : lib.inputs.AnalysisInput
    """
    votes = data.judgments.votes if data.judgments is not None else None
    return votes is not None and not _anonymous(votes["annotator_id"]).any() and votes["annotator_id"].nunique() >= 2


def _anonymous(ids: pd.Series) -> pd.Series:
    """Votes without an annotator: blank, or a row of a file without an annotator column."""
    from lib.judgments.formats import ANONYMOUS_ANNOTATOR

    ids = ids.astype(str)
    return (ids == "") | ids.str.startswith(ANONYMOUS_ANNOTATOR.split("{")[0])


def vote_weights(votes: pd.DataFrame) -> tuple[np.ndarray, pd.DataFrame]:
    """Each vote's weight: its annotator's Dawid-Skene reliability clipped to [0, 1].

    Parameters
    ----------
    votes : pandas.DataFrame
        Canonical votes with ``annotator_id`` filled in on every row.

    Returns
    -------
    weights : ndarray (N,) float
        In the votes' order; an annotator who shares no task with another gets 1 (nothing to weigh them by).
    quality : pandas.DataFrame
        :func:`annotator_quality` of the votes.

    Raises
    ------
    SettingsError
        A vote without an annotator (an anonymous row of a file without an annotator column), or fewer than
        two annotators: there is nobody to compare.
    """
    ids = votes["annotator_id"].astype(str)
    anonymous = _anonymous(ids)
    if anonymous.any() or ids.nunique() < 2:
        raise SettingsError(
            "weighting annotators by reliability needs votes that name their annotator (map the annotator "
            f"column on the Data page), and at least two annotators ({int(anonymous.sum())} anonymous votes, "
            f"{ids[~anonymous].nunique()} annotators)"
        )
    quality = annotator_quality(vote_labels(votes))
    weight = quality.set_index("annotator")["reliability"].clip(0.0, 1.0).fillna(1.0)
    return ids.map(weight).to_numpy(dtype=float), quality
