"""The one engine every fit uses (the GRM of :mod:`lib.irt`, the leaderboard of :mod:`lib.ranking`).

- :mod:`~lib.inference.settings`: the NUTS sizes every fit shares and the sampler registry (light:
  no pymc or JAX, so ``--help`` and the pages list the samplers cheaply);
- :mod:`~lib.inference.pipeline`: the steps of every fit (checks, one cache key, the run, diagnostics,
  timings, the cache write, progress) around a model's own part (:class:`~lib.inference.pipeline.FitPlan`);
- :mod:`~lib.inference.samplers`: what a sampler fits (:class:`~lib.inference.samplers.Problem`), what a
  run gives (:class:`~lib.inference.samplers.Draws`) and the NUTS runners (numpyro, pymc, nutpie);
- :mod:`~lib.inference.map`: the MAP point, one compiled solver per data shape;
- :mod:`~lib.inference.laplace`: MAP + Laplace by block Hessian, marginal mode and Schur complement;
- :mod:`~lib.inference.progress`: progress reporting from the sampler's threads;
- :mod:`~lib.inference.timings`: where a fit's time went, seconds per phase (one timer for every fit path);
- :mod:`~lib.inference.store`: the fit cache, one format and one key for every fit;
- :mod:`~lib.inference.diagnostics`: convergence diagnostics of a fit and their JSON.

A model's own package builds the model, reads its results out and chooses its settings' defaults
(:func:`lib.irt.fit.fit_grm`, :func:`lib.ranking.fit.fit_ranking`).
"""
