"""What every fit shares: the NUTS sizes and the sampler registry (no heavy imports).

Adding a sampler is one :class:`Sampler` entry in :data:`SAMPLERS`; each kind of fit (:data:`FITS`)
offers the registered samplers made for it (:func:`samplers_for`), on the command line and the pages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from lib.errors import SettingsError

FITS = ("grm", "ranking")
"""The kinds of fit: the graded response model (:mod:`lib.irt`) and the leaderboard (:mod:`lib.ranking`)."""


@dataclass(frozen=True)
class Sampler:
    """One way of fitting a model.

    Attributes
    ----------
    name : str
        What ``--sampler`` and the pages call it.
    help : str
        One line for ``--help`` and the pages.
    posterior : bool
        Whether it gives posterior draws (False: a point, with no intervals, R-hat or contraction).
    run : str
        ``"module:function"`` of the runner, imported only when the sampler is used. It is called as
        ``run(problem, settings, tracker)`` in a worker thread (``problem``:
        :class:`lib.inference.samplers.Problem`; ``settings``: a :class:`NutsSettings`; ``tracker``:
        :class:`lib.inference.progress.Tracker`, which takes its progress) and returns an
        ``arviz.InferenceData`` whose posterior holds the problem's variables, dims (chain, draw, ...), or a
        :class:`lib.inference.samplers.Draws` of it and the posterior mode.
    fits : tuple of str
        The kinds of fit (:data:`FITS`) that offer it.
    mcmc : bool
        Whether its draws are Markov chains, whose convergence is checked (R-hat, ESS, divergences).
    note : str, optional
        A warning every fit by it carries (what its results cannot tell).
    to_target : bool
        Whether it samples to a target ESS (``NutsSettings.target_ess``; :func:`sampling_sizes`).
    """

    name: str
    help: str
    posterior: bool
    run: str
    fits: tuple[str, ...] = FITS
    mcmc: bool = True
    note: str | None = None
    to_target: bool = False


SAMPLERS: dict[str, Sampler] = {
    s.name: s
    for s in (
        Sampler(
            "numpyro",
            "NUTS in JAX (fastest full posterior; the GRM's default)",
            True,
            "lib.inference.samplers:sample_numpyro",
            to_target=True,
        ),
        Sampler("pymc", "PyMC's own NUTS", True, "lib.inference.samplers:sample_pymc"),
        Sampler(
            "nutpie", "nutpie's NUTS (Rust; reports elapsed time only)", True, "lib.inference.samplers:sample_nutpie"
        ),
        Sampler(
            "map",
            "MAP point: about a second once compiled (the first MAP fit for data of a given "
            "size compiles for several seconds); a preview, shrunk towards 0, no intervals",
            False,
            "lib.inference.map:sample_map",
            fits=("grm",),
            mcmc=False,
            note="MAP point: no intervals, abilities are shrunk towards 0, and whether the data inform each "
            "estimate (contraction) cannot be told without a posterior: run a sampler.",
        ),
        Sampler(
            "laplace",
            "MAP + Laplace: a Gaussian approximation of the posterior at its mode (fast on large data)",
            True,
            "lib.inference.laplace:sample_laplace",
            fits=("ranking",),
            mcmc=False,
            note="MAP + Laplace: a Gaussian approximation at the posterior mode (independent draws, no R-hat); "
            "skewed posteriors (systems with few votes) are only roughly described: use a NUTS sampler to "
            "confirm.",
        ),
    )
}
"""The sampler registry, name -> :class:`Sampler` (each fit's default is its settings' ``sampler``)."""


class SamplerChoice(Mapping[str, Sampler]):
    """The registered samplers one kind of fit offers: a live view of :data:`SAMPLERS`, in its order
    (a sampler registered later is offered too).

    Parameters
    ----------
    fit : str
        One of :data:`FITS`.
    """

    def __init__(self, fit: str) -> None:
        self.fit = fit

    def __getitem__(self, name: str) -> Sampler:
        """The registered sampler ``name``; KeyError when it is unknown or does not offer this fit."""
        sampler = SAMPLERS[name]
        if self.fit not in sampler.fits:
            raise KeyError(name)
        return sampler

    def __iter__(self) -> Iterator[str]:
        """The names of the samplers offered, in the registry's order."""
        return iter([name for name, s in SAMPLERS.items() if self.fit in s.fits])

    def __len__(self) -> int:
        """How many registered samplers offer this fit."""
        return sum(self.fit in s.fits for s in SAMPLERS.values())

    def __repr__(self) -> str:
        """``SamplerChoice('fit': name, name, ...)``."""
        return f"SamplerChoice({self.fit!r}: {', '.join(self)})"


def samplers_for(fit: str) -> SamplerChoice:
    """The samplers a kind of fit (:data:`FITS`) offers, name -> :class:`Sampler` (a live view)."""
    return SamplerChoice(fit)


def gives_posterior(sampler: str) -> bool:
    """Whether a fit by this sampler has posterior draws (False for a point such as MAP, and for
    a sampler no longer registered)."""
    return sampler in SAMPLERS and SAMPLERS[sampler].posterior


def is_mcmc(sampler: str) -> bool:
    """Whether this sampler's draws are Markov chains (False for a point, Laplace's independent draws,
    and a sampler no longer registered)."""
    return sampler in SAMPLERS and SAMPLERS[sampler].mcmc


def posterior_samplers(fit: str = "grm") -> str:
    """The registered MCMC samplers of a kind of fit, for messages: "numpyro, pymc or nutpie"."""
    return one_of([name for name, s in samplers_for(fit).items() if s.posterior and s.mcmc])


def one_of(names: list[str]) -> str:
    """Names for a message: "a", "a or b", "a, b or c"."""
    return " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


def check_known(kind: str, value: str, known: Mapping) -> None:
    """Raise ``SettingsError`` ("unknown {kind} '{value}'; choose one of ...") unless ``value`` is in ``known``."""
    if value not in known:
        raise SettingsError(f"unknown {kind} '{value}'; choose one of {', '.join(known)}")


TARGET_ESS = 400
"""The effective sample size a NUTS fit samples to when asked to (``--target-ess``, the Abilities page):
bulk and tail ESS of every reported parameter; also the convergence check's threshold
(:data:`lib.inference.convergence.ESS_MIN`, Vehtari et al. 2021: 100 per chain for 4 chains)."""
TARGET_TUNE: dict[str, int] = {"grm": 150, "ranking": 300}
"""Warm-up iterations per chain of a fit sampled to a target ESS when none are chosen, by kind of fit
(:data:`FITS`), from PyMC's jittered initial point. The GRM's 150 (300 until 2026-11-28): on the paper's
design (3 seeds) and mirt's Science data (2 seeds), R-hat at most 1.01, no divergences, bulk ESS at least 400
and the Science slopes inside mirt's 95% intervals, as at 300, with 600-700 iterations per chain in all on the
paper's design where 300 took 800-1,000 (``bench/bench_target_ess.py``). The leaderboard's NUTS keeps 300
(a shorter warm-up is not checked on it)."""
TARGET_CEILING = 3000
"""Draws per chain at most of a fit sampled to a target ESS when ``--draws`` is not given. The draws a
target needs follow the slowest parameter: mirt's Science data (alpha of 'Future', about 0.1 effective
draws per draw) needed 800 to 1,700 per chain for 400, the paper's design 500 to 700."""
TARGET_CHUNK = 100
"""Draws per chain between two checks of the ESS of a fit sampled to a target."""


@dataclass
class NutsSettings:
    """The sizes every sampler of every fit reads (Laplace: ``draws`` independent draws as one chain).

    A fit's settings class derives from it and from a dataclass of the model's own choices
    (``class FitSettings(NutsSettings, GRMChoices)``), so its fields list the model's choices first,
    then these.

    Attributes
    ----------
    chains : int
        NUTS chains (at least 1).
    draws : int
        Draws per chain (at least 1); with ``target_ess``, the ceiling.
    tune : int
        Tuning iterations per chain (0 or more).
    seed : int
        Random seed.
    target_ess : int, optional
        None: ``draws`` draws per chain. Else (the numpyro sampler; the others ignore it) draws come in
        chunks of :data:`TARGET_CHUNK` per chain after the warm-up until the bulk and tail ESS of every
        reported parameter reach ``target_ess`` and their R-hat is at most 1.01, or ``draws`` per chain
        are drawn (the ceiling); ``Diagnostics.stopped`` says which.
    """

    chains: int = 4
    draws: int = 1000
    tune: int = 500
    seed: int = 0
    target_ess: int | None = None

    def check_sizes(self) -> None:
        """Raise ``SettingsError`` for chains, draws or a target ESS below 1, or tune below 0."""
        for name in ("chains", "draws"):
            if getattr(self, name) < 1:
                raise SettingsError(f"{name} must be at least 1")
        if self.target_ess is not None and self.target_ess < 1:
            raise SettingsError("the target ESS must be at least 1")
        if self.tune < 0:
            raise SettingsError("tune must be 0 or more")


def sampling_sizes(
    fit: str, sampler: str, *, draws: int | None, tune: int | None, target_ess: int | None
) -> dict[str, Any]:
    """The sizes a command or a page asks of a sampler of a kind of fit (:data:`FITS`), from what the user gave
    (None: not given).

    The rule of ``--draws`` and ``--target-ess`` (the same on the Abilities page): for a sampler that
    samples to a target (:attr:`Sampler.to_target`), a target ESS given is sampled to, with ``draws``
    (given, or :data:`TARGET_CEILING`) as the ceiling per chain; draws given without a target are drawn
    as asked (a fixed count, as before targets existed); neither given: :data:`TARGET_ESS`. Sampled to a
    target, warm-up is the fit's :data:`TARGET_TUNE` iterations unless ``tune`` is given. Other samplers draw
    ``draws``.

    Returns
    -------
    dict
        Keyword arguments of a :class:`NutsSettings` subclass: ``target_ess`` always, ``draws`` and
        ``tune`` when they are given or follow from the rule (always, sampled to a target).

    Raises
    ------
    SettingsError
        A target ESS for a sampler that does not sample to one.
    """
    sizes: dict[str, Any] = {k: v for k, v in (("draws", draws), ("tune", tune)) if v is not None}
    if sampler not in SAMPLERS or not SAMPLERS[sampler].to_target:
        if target_ess is not None:
            targets = one_of([name for name, s in SAMPLERS.items() if s.to_target])
            raise SettingsError(f"the {sampler} sampler does not sample to a target ESS: use {targets}")
        return sizes | {"target_ess": None}
    if target_ess is None and draws is not None:
        return sizes | {"target_ess": None}
    sizes.setdefault("tune", TARGET_TUNE[fit])
    sizes.setdefault("draws", TARGET_CEILING)
    return sizes | {"target_ess": TARGET_ESS if target_ess is None else target_ess}


@dataclass(frozen=True)
class LaplaceSettings:
    """How the ``laplace`` sampler (:mod:`lib.inference.laplace`) treats a model: set by the model for its data,
    not chosen by the user (a :class:`lib.inference.samplers.Problem` carries them).

    Attributes
    ----------
    local : tuple of str
        Free variables with one row per unit of the ``unit`` dim, coupled only through the other (global)
        variables: integrated out at the globals' marginal mode.
    unit : str
        The dim whose units own the ``local`` rows (e.g. ``"prompt"``).
    marginal_curvature : bool
        The globals' precision is the curvature of their marginal (True) or the Schur complement of the joint
        Hessian at the marginal mode (False; cheaper on large data).
    scales : tuple of str
        Global variables that scale the ``local`` variables' prior (e.g. ``sigma_alpha``): their rows of the
        precision are the marginal's curvature even with the Schur complement (which leaves out the local
        variables' log-determinant, most of a scale's curvature).
    exact_fit : callable, optional
        The model's own Laplace fit with its local variables integrated out exactly (e.g. the votes' quadrature
        over each prompt's alpha_j, :mod:`lib.ranking.marginal`), called as ``exact_fit(settings, tracker)``
        instead of fitting the PyMC model, which is then never built; it returns a
        :class:`lib.inference.samplers.Draws`. None: the PyMC model's (:func:`lib.inference.laplace.laplace`).
    """

    local: tuple[str, ...] = ()
    unit: str = "prompt"
    marginal_curvature: bool = True
    scales: tuple[str, ...] = ()
    exact_fit: Callable[..., Any] | None = None
