"""What each likelihood of the ranking model reads, built from an analysis input (light imports).

The likelihoods (:data:`lib.ranking.likelihoods.LIKELIHOODS`) explain the same judgments at different grains;
each one's spec says what its data must hold, and :func:`ranking_data` asks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from lib.errors import DesignError, SettingsError
from lib.ranking.likelihoods import LIKELIHOODS, Likelihood, default_likelihood, likelihood_spec

if TYPE_CHECKING:
    import pandas as pd

    from lib.judgments.ratings import RatingMatrix
    from lib.ranking.style import StyleFeatures


@dataclass
class RankingData:
    """The judgments one likelihood of the ranking model explains.

    Attributes
    ----------
    systems : list of str
        Every system, sorted; the order of skills everywhere.
    likelihood : str
        A key of :data:`lib.ranking.likelihoods.LIKELIHOODS`.
    votes : DataFrame or None
        Canonical votes (``lib.judgments.formats.VOTE_COLUMNS``, plus ``first``, the system shown first, when
        the file says) of the chosen criterion; set for ``votes`` and ``cells``.
    matrix : RatingMatrix or None
        Net ratings per (pair, prompt), for ``cells``.
    ratings : DataFrame or None
        ``system, prompt_id, annotator_id, score`` (float) for ``ratings``: one row per score an
        annotator gave (``lib.judgments.formats.read_ratings``), not averaged; ``annotator_id`` is "" when
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
        The input file's 1-based data row of each of ``votes`` (``lib.judgments.formats.Judgments.rows``): None
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

    @property
    def spec(self) -> Likelihood:
        """The likelihood's spec (:data:`lib.ranking.likelihoods.LIKELIHOODS`)."""
        return likelihood_spec(self.likelihood)


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
    ia, ib = system_codes(system_a, systems), system_codes(system_b, systems)
    graph = coo_matrix((np.ones(len(ia)), (ia, ib)), shape=(k, k))
    _, labels = connected_components(graph, directed=False)
    sizes = np.bincount(labels)
    first = np.full(len(sizes), k)
    np.minimum.at(first, labels, np.arange(k))  # systems are sorted: the first system names the component
    order = np.lexsort((first, -sizes))  # largest first, then by first system
    rank = np.empty_like(order)
    rank[order] = np.arange(1, len(order) + 1)
    return pd.Series(rank[labels].astype("int64"), index=systems, name="component")


def system_codes(names, systems: list[str]) -> np.ndarray:
    """(N,) int64: each of ``names`` (array-like, as text) as its index into ``systems``, -1 where it is not one.

    Each distinct name is looked up once in a hash table of the systems, the names as they are where they are text
    (an arena's 500,000 votes of 100 systems: 0.005 s; looking up every name took 0.04 s, and turning them into a
    numpy string array for ``pd.Categorical`` 0.4 s)."""
    import pandas as pd

    names = pd.Series(names, copy=False)
    if not pd.api.types.is_string_dtype(names) or names.dtype == object:
        names = names.astype(str)
    seen, distinct = pd.factorize(names, use_na_sentinel=False)
    return pd.Index(systems).get_indexer(distinct).astype(np.int64)[seen]


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
        A key of :data:`lib.ranking.likelihoods.LIKELIHOODS` (None: the data's own); only one whose
        ``severity`` is set (ratings) has severities.

    Returns
    -------
    AnnotatorDesign
        Not identified, with no note, for paired judgments, another likelihood or item-response data
        (which has no systems: :func:`ranking_data` says so).
    """
    paired_or_none = data.judgments is not None or data.ratings is None or data.fmt == "responses"
    chosen = None if likelihood is None else LIKELIHOODS.get(likelihood)
    if paired_or_none or (likelihood is not None and (chosen is None or not chosen.severity)):
        return annotator_design(None)
    return annotator_design(_score_table(data))


def ranking_data(data, likelihood: str | None = None, *, style: bool = False, by_category: bool = False) -> RankingData:
    """The data of one likelihood of the ranking model from an analysis input.

    Parameters
    ----------
    data : lib.inputs.AnalysisInput
    likelihood : str, optional
        A key of :data:`lib.ranking.likelihoods.LIKELIHOODS`; default ``votes`` for formats with votes
        (pairwise, best-worst, ranking) and ``ratings`` for the ratings format
        (:func:`lib.ranking.likelihoods.default_likelihood`).
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
    spec = _likelihood(data, likelihood)
    likelihood = spec.name
    votes = ratings = rows = None
    if data.judgments is not None:
        votes, rows, systems, counts = _votes(data)
        spec.check(votes)
    else:
        ratings, systems, counts = _ratings(data)
        spec.check(ratings)
    if len(systems) < 2:
        raise DesignError(f"only one system ({', '.join(systems) or 'none'}): a leaderboard needs at least two")
    matrix, component = spec.design(data, systems, votes)
    n_votes = counts.reindex(systems, fill_value=0).astype("int64").rename("n_votes")
    features = None
    if style:
        from lib.ranking.style import vote_features

        if not spec.per_vote:
            raise SettingsError(
                f"style control is a covariate of each vote: it needs the votes likelihood, not {likelihood}"
            )
        assert votes is not None  # a likelihood of votes has votes
        features = vote_features(votes, data.judgments.responses)
    category = None
    if by_category:
        from lib.ranking.categories import vote_categories

        if not spec.per_vote:
            raise SettingsError(f"ranking by category needs the votes likelihood, not {likelihood}")
        assert votes is not None  # a likelihood of votes has votes
        category = vote_categories(votes)
    return RankingData(
        systems, likelihood, votes, matrix, ratings, n_votes, component, features, category=category, rows=rows
    )


def _likelihood(data, likelihood: str | None) -> Likelihood:
    """The likelihood asked for (default: :func:`lib.ranking.likelihoods.default_likelihood`), checked
    against the data (see :func:`ranking_data`'s SettingsError)."""
    if data.fmt == "responses":
        raise SettingsError("item-response data (persons x items) has no systems to rank")
    has_votes = data.judgments is not None
    spec = likelihood_spec(likelihood) if likelihood else default_likelihood(has_votes)
    if ("votes" if has_votes else "scores") not in spec.reads:
        raise SettingsError(spec.refusal)
    return spec


def _votes(data) -> tuple[pd.DataFrame, np.ndarray | None, list[str], pd.Series]:
    """The votes of the chosen criterion, their file rows (``Judgments.rows``: None where votes are not
    rows), their systems (sorted) and votes per system."""
    import pandas as pd

    votes, rows = data.judgments.votes, data.judgments.rows
    if data.criterion is not None:
        chosen = (votes["criterion"] == data.criterion).to_numpy()
        votes, rows = votes[chosen], None if rows is None else rows[chosen]
    votes = votes.reset_index(drop=True)
    counts = pd.concat([votes["system_a"], votes["system_b"]]).value_counts()
    systems = sorted(counts.index.tolist())  # every system once (not a Python set of every vote's)
    return votes, rows, systems, counts


def _ratings(data) -> tuple[pd.DataFrame, list[str], pd.Series]:
    """The scores of the chosen criterion (``system, prompt_id, annotator_id, score``), their systems
    (sorted) and scores per system."""
    ratings = _score_table(data)
    systems = sorted(set(ratings["system"]))
    counts = ratings["system"].value_counts()
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
