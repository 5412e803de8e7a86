"""What each likelihood of the ranking model reads, built from an analysis input (light imports).

Three likelihoods (:data:`LIKELIHOODS`) explain the same judgments at three grains: the net rating
of a system pair on a prompt (*cells*, the paper's graded response model), each vote (*votes*), or
each score an annotator gave one system on one prompt (*ratings*, which needs no pairing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from lib.errors import DesignError, SettingsError

if TYPE_CHECKING:
    import pandas as pd

    from lib.ranking.style import StyleFeatures
    from lib.ratings import RatingMatrix

LIKELIHOODS = {
    "cells": "net rating per (system pair, prompt), the graded response model of the Abilities page",
    "votes": "one outcome per vote (A better / tie / B better): sparse designs, arenas (default for votes)",
    "ratings": "each score of a system on a prompt, with a prompt effect (and, as an option, the annotator's "
    "severity): needs no pairing (default for ratings)",
}
"""The ranking model's likelihoods, name -> help text (:mod:`lib.ranking.model`)."""


@dataclass
class RankingData:
    """The judgments one likelihood of the ranking model explains.

    Attributes
    ----------
    systems : list of str
        Every system, sorted; the order of skills everywhere.
    likelihood : str
        A key of :data:`LIKELIHOODS`.
    votes : DataFrame or None
        Canonical votes (``lib.formats.VOTE_COLUMNS``, plus ``first``, the system shown first, when
        the file says) of the chosen criterion; set for ``votes`` and ``cells``.
    matrix : RatingMatrix or None
        Net ratings per (pair, prompt), for ``cells``.
    ratings : DataFrame or None
        ``system, prompt_id, annotator_id, score`` (float) for ``ratings``: one row per score an
        annotator gave (``lib.formats.read_ratings``), not averaged; ``annotator_id`` is "" when
        the file has no annotator column.
    n_votes : Series
        Judgments behind each system's skill (votes it took part in, or scores it received, one
        per annotator), index ``systems``.
    component : Series
        Connected component of each system in the comparison graph (:func:`comparison_components`),
        1 = the largest, index ``systems``; all 1 when every system is linked (always for ratings).
    style : StyleFeatures or None
        The votes' style covariates (style control, :func:`lib.ranking.style.vote_features`; rows as
        ``votes``), None without style control.
    category : ndarray (N,) of str or None
        The category of each vote (rows as ``votes``) when ranked by category (:mod:`lib.ranking.categories`);
        None otherwise.
    rows : ndarray (len(votes),) of int64, or None
        The input file's 1-based data row of each of ``votes`` (``lib.formats.Judgments.rows``): None
        where a vote is not one row of the file (best-worst, ranking), and for ratings.
    """

    systems: list[str]
    likelihood: str
    votes: pd.DataFrame | None
    matrix: RatingMatrix | None
    ratings: pd.DataFrame | None
    n_votes: pd.Series
    component: pd.Series | None = None
    style: StyleFeatures | None = None
    category: np.ndarray | None = None
    rows: np.ndarray | None = None

    def __post_init__(self) -> None:
        """Without ``component``, every system is in component 1."""
        import pandas as pd

        if self.component is None:
            self.component = pd.Series(1, index=self.systems, name="component", dtype="int64")

    @property
    def n_components(self) -> int:
        """The number of components of the comparison graph (1 when every system is linked)."""
        assert self.component is not None  # set by __post_init__
        return int(self.component.max())


def comparison_components(systems: list[str], system_a, system_b) -> pd.Series:
    """Connected components of the comparison graph: systems are nodes, a judged pair an edge.

    Skills of systems in different components are never compared by any judgment, directly or
    through a chain of others: their difference comes from the prior alone, so they are ranked
    within their component only.

    Parameters
    ----------
    systems : list of str
        Every system (the graph's nodes).
    system_a, system_b : array-like of str, same length
        The two systems of each judgment (or of each judged pair).

    Returns
    -------
    Series
        ``component`` (int64) indexed by ``systems``: 1 for the largest component, 2 the next
        (ties broken by the alphabetically first system), ...
    """
    import pandas as pd
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    k = len(systems)
    ia = pd.Categorical(np.asarray(system_a, dtype=str), categories=systems).codes
    ib = pd.Categorical(np.asarray(system_b, dtype=str), categories=systems).codes
    graph = coo_matrix((np.ones(len(ia)), (ia, ib)), shape=(k, k))
    _, labels = connected_components(graph, directed=False)
    sizes = np.bincount(labels)
    first = np.full(len(sizes), k)
    np.minimum.at(first, labels, np.arange(k))  # systems are sorted: the first system names the component
    order = np.lexsort((first, -sizes))  # largest first, then by first system
    rank = np.empty_like(order)
    rank[order] = np.arange(1, len(order) + 1)
    return pd.Series(rank[labels].astype("int64"), index=systems, name="component")


def systems_of(data) -> list[str]:
    """The systems of an analysis input's comparisons (its rating matrix), sorted.

    Parameters
    ----------
    data : lib.inputs.AnalysisInput
        With its rating matrix (``data.matrix`` not None).

    Returns
    -------
    list of str
        Every system named as ``system_a`` or ``system_b`` of a comparison (blank names left out).
    """
    c = data.matrix.comparisons
    return sorted(set(c["system_a"].dropna()) | set(c["system_b"].dropna()))


def shows_position(data) -> bool:
    """Whether the votes say which system was shown first (the pairwise format's ``position`` role),
    so the ranking model can estimate a position bias.

    Parameters
    ----------
    data : lib.inputs.AnalysisInput

    Returns
    -------
    bool
        True when the input has votes with a ``first`` column that is filled in at least one row.
    """
    votes = data.judgments.votes if data.judgments is not None else None
    return votes is not None and "first" in votes and bool((votes["first"] != "").any())


def names_annotators(data) -> bool:
    """Whether the ratings name at least two annotators (the ratings format's ``annotator`` role), so
    the ranking model can estimate each annotator's severity.

    Parameters
    ----------
    data : lib.inputs.AnalysisInput

    Returns
    -------
    bool
        True when the input's ratings have an ``annotator_id`` column with two or more distinct
        non-blank values.
    """
    ids = data.ratings["annotator_id"] if data.ratings is not None and "annotator_id" in data.ratings else None
    return ids is not None and ids[ids != ""].nunique() >= 2


@dataclass(frozen=True)
class AnnotatorDesign:
    """Whether scores identify each annotator's severity beside the systems' skills
    (:func:`annotator_design`), and what the leaderboard says about it.

    Attributes
    ----------
    identified : bool
        The default of the annotator effect (``lib.ranking.fit.RankChoices.annotator_effect`` None):
        on when True.
    note : str
        The choice and why, for the leaderboard's notes ("" for paired judgments, which compare
        systems within an annotator and have no severity to model).
    """

    identified: bool
    note: str


ANNOTATOR_ON_NOTE = (
    "Annotator severity is modelled (the default where it can be identified): the {r} annotators' scores link "
    "all {k} systems (annotator-system graph connected), so each annotator's severity is told apart from the "
    "skills and who rated which system does not bias them. Off: --no-annotator-effect, or the page's "
    "Annotator severity switch."
)
ANNOTATOR_OFF_NOTE = (
    "Annotator severity is not modelled: {why}. The skills assume every annotator is equally severe; where "
    "they differ (simulated raters of severity SD 1) 95% intervals held 83% of the true skills, 53% where "
    "severe raters leaned towards the best systems."
)


def annotator_design(ratings: pd.DataFrame | None) -> AnnotatorDesign:
    """Whether these scores identify each annotator's severity zeta_r beside the skills s_k.

    A score's location is ``s_k - zeta_r`` (:mod:`lib.ranking.model`): an annotator who scored system k
    ties zeta_r to s_k, so the differences are identified exactly when the bipartite graph of annotators
    and systems (an edge where an annotator scored a system) is connected: then every annotator is
    linked to every system through annotators who scored several systems, and the skills' sum-to-zero
    fixes the rest. An annotator who scored one system is placed against the others who scored it.
    Where the graph falls into groups that share no system (for example, each annotator scored one
    system), a group's mean severity is the same unknown as its systems' skills: only the prior would
    tell them apart, so the effect is off. The rule needs at least two named annotators.

    Parameters
    ----------
    ratings : DataFrame or None
        ``system, annotator_id`` (and more) per score, ``annotator_id`` "" when the file has no
        annotator column (:class:`RankingData`'s ``ratings``); None for paired judgments.

    Returns
    -------
    AnnotatorDesign
        ``identified`` and the note saying why.
    """
    import pandas as pd

    if ratings is None:
        return AnnotatorDesign(False, "")
    named = ratings[ratings["annotator_id"] != ""]
    annotators = sorted(set(named["annotator_id"]))
    if len(annotators) < 2:
        why = (
            f"the scores name one annotator ({annotators[0]})"
            if annotators
            else "the scores name no annotator (map the file's annotator column)"
        )
        return AnnotatorDesign(False, ANNOTATOR_OFF_NOTE.format(why=why))
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    systems = sorted(set(ratings["system"]))
    # one graph, systems 0..K-1 and annotators K..K+R-1, an edge per score
    k, n = len(systems), len(systems) + len(annotators)
    system = pd.Categorical(named["system"], categories=systems).codes
    annotator = k + pd.Categorical(named["annotator_id"], categories=annotators).codes
    groups, _ = connected_components(
        coo_matrix((np.ones(len(named)), (system, annotator)), shape=(n, n)), directed=False
    )
    if groups == 1:
        return AnnotatorDesign(True, ANNOTATOR_ON_NOTE.format(r=len(annotators), k=len(systems)))
    per_annotator = named.groupby("annotator_id")["system"].nunique()
    why = (
        f"the annotators and the systems they scored fall into {groups} groups that share no system "
        f"({int((per_annotator == 1).sum())} of the {len(annotators)} annotators scored one system each), so a "
        "group's severity cannot be told from its systems' skills"
    )
    return AnnotatorDesign(False, ANNOTATOR_OFF_NOTE.format(why=why))


def annotator_design_of(data, likelihood: str | None = None) -> AnnotatorDesign:
    """:func:`annotator_design` of an analysis input's scores (of its criterion) for the likelihood it
    is ranked with, before a fit: what the Leaderboard page's switch and ``rank`` show.

    Parameters
    ----------
    data : lib.inputs.AnalysisInput
    likelihood : str, optional
        A key of :data:`LIKELIHOODS` (None: the data's own); only ``ratings`` has severities.

    Returns
    -------
    AnnotatorDesign
        Not identified, with no note, for paired judgments, another likelihood or item-response data
        (which has no systems: :func:`ranking_data` says so).
    """
    paired_or_none = data.judgments is not None or data.ratings is None or data.fmt == "responses"
    if paired_or_none or likelihood not in (None, "ratings"):
        return annotator_design(None)
    return annotator_design(_score_table(data))


def ranking_data(data, likelihood: str | None = None, *, style: bool = False, by_category: bool = False) -> RankingData:
    """The data of one likelihood of the ranking model from an analysis input.

    Parameters
    ----------
    data : lib.inputs.AnalysisInput
    likelihood : str, optional
        A key of :data:`LIKELIHOODS`; default ``votes`` for formats with votes (pairwise,
        best-worst, ranking) and ``ratings`` for the ratings format.
    style : bool
        Style control: the votes' style covariates (:func:`lib.ranking.style.vote_features`) in ``style``.
    by_category : bool
        A skill per system and category: the votes' categories (:func:`lib.ranking.categories.vote_categories`) in
        ``category``.

    Returns
    -------
    RankingData

    Raises
    ------
    SettingsError
        An unknown likelihood, or one the format cannot give (ratings from votes, votes from
        ratings, anything from item-response data); style control for another likelihood than votes, or for
        votes without the answers' texts or feature columns; categories for another likelihood than votes, or
        for votes without a category column.
    DesignError
        Fewer than two systems, or nothing that tells systems apart (all votes ties, all scores
        equal, no pair judged on a prompt for ``cells``).
    """
    likelihood = _likelihood(data, likelihood)
    votes = ratings = matrix = rows = None
    if data.judgments is not None:
        votes, rows, systems, counts = _votes(data, likelihood)
    else:
        ratings, systems, counts = _ratings(data, likelihood)
    if len(systems) < 2:
        raise DesignError(f"only one system ({', '.join(systems) or 'none'}): a leaderboard needs at least two")
    if likelihood == "cells":
        matrix = data.matrix
        if not (matrix.n_votes > 0).any():
            raise DesignError(
                "no pair of systems was judged on the same prompt: the cells likelihood has "
                "nothing to model; use the ratings or votes likelihood"
            )
    n_votes = counts.reindex(systems, fill_value=0).astype("int64").rename("n_votes")
    # Ratings link every system through the prompt effects' shared distribution: one component.
    component = None
    if likelihood == "votes":
        assert votes is not None  # the votes likelihood has votes
        component = comparison_components(systems, votes["system_a"], votes["system_b"])
    elif likelihood == "cells":
        assert matrix is not None  # set above for the cells likelihood
        judged = matrix.comparisons[(matrix.n_votes > 0).any(axis=1)]
        component = comparison_components(systems, judged["system_a"], judged["system_b"])
    features = None
    if style:
        from lib.ranking.style import vote_features

        if likelihood != "votes":
            raise SettingsError(
                f"style control is a covariate of each vote: it needs the votes likelihood, not {likelihood}"
            )
        assert votes is not None  # the votes likelihood has votes
        features = vote_features(votes, data.judgments.responses)
    category = None
    if by_category:
        from lib.ranking.categories import vote_categories

        if likelihood != "votes":
            raise SettingsError(f"ranking by category needs the votes likelihood, not {likelihood}")
        assert votes is not None  # the votes likelihood has votes
        category = vote_categories(votes)
    return RankingData(
        systems, likelihood, votes, matrix, ratings, n_votes, component, features, category=category, rows=rows
    )


def _likelihood(data, likelihood: str | None) -> str:
    """The likelihood asked for (default: ``votes`` for formats with votes, else ``ratings``), checked
    against the data (see :func:`ranking_data`'s SettingsError)."""
    if data.fmt == "responses":
        raise SettingsError("item-response data (persons x items) has no systems to rank")
    has_votes = data.judgments is not None
    likelihood = likelihood or ("votes" if has_votes else "ratings")
    if likelihood not in LIKELIHOODS:
        raise SettingsError(f"unknown likelihood '{likelihood}'; choose one of {', '.join(LIKELIHOODS)}")
    if likelihood == "votes" and not has_votes:
        raise SettingsError("the votes likelihood needs pairwise votes; these are ratings: use ratings or cells")
    if likelihood == "ratings" and has_votes:
        raise SettingsError(
            "the ratings likelihood needs one score per system and prompt; these are votes: use votes or cells"
        )
    return likelihood


def _votes(data, likelihood: str) -> tuple[pd.DataFrame, np.ndarray | None, list[str], pd.Series]:
    """The votes of the chosen criterion, their file rows (``Judgments.rows``: None where votes are not
    rows), their systems (sorted) and votes per system.

    Raises
    ------
    DesignError
        Every vote is a tie (for the votes likelihood).
    """
    import pandas as pd

    votes, rows = data.judgments.votes, data.judgments.rows
    if data.criterion is not None:
        chosen = (votes["criterion"] == data.criterion).to_numpy()
        votes, rows = votes[chosen], None if rows is None else rows[chosen]
    votes = votes.reset_index(drop=True)
    counts = pd.concat([votes["system_a"], votes["system_b"]]).value_counts()
    systems = sorted(counts.index.tolist())  # every system once (not a Python set of every vote's)
    if likelihood == "votes" and (votes["winner"] == "tie").all():
        raise DesignError("every vote is a tie: the votes cannot tell any system apart")
    return votes, rows, systems, counts


def _ratings(data, likelihood: str) -> tuple[pd.DataFrame, list[str], pd.Series]:
    """The scores of the chosen criterion (``system, prompt_id, annotator_id, score``), their systems
    (sorted) and scores per system.

    Raises
    ------
    DesignError
        Every score is the same (for the ratings likelihood).
    """
    ratings = _score_table(data)
    systems = sorted(set(ratings["system"]))
    counts = ratings["system"].value_counts()
    if likelihood == "ratings" and ratings["score"].nunique() < 2:
        raise DesignError("every score is the same: the ratings cannot tell any system apart")
    return ratings, systems, counts


def _score_table(data) -> pd.DataFrame:
    """The scores of the chosen criterion: ``system, prompt_id, annotator_id, score`` (float)."""
    import pandas as pd

    table = data.ratings
    if data.criterion is not None and "criterion" in table:
        table = table[table["criterion"] == data.criterion]
    return pd.DataFrame(
        {
            "system": table["system"].astype(str),
            "prompt_id": table["prompt_id"].astype(str),
            "annotator_id": table["annotator_id"].astype(str),
            "score": table["score"].astype("float64"),
        }
    ).reset_index(drop=True)
