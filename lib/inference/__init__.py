"""The one engine every fit uses (the GRM of :mod:`lib.irt`, the leaderboard of :mod:`lib.ranking`).

- :mod:`~lib.inference.settings`: the NUTS sizes every fit shares and the sampler registry (light:
  no pymc or JAX, so ``--help`` and the pages list the samplers cheaply);
- :mod:`~lib.inference.samplers`: what a sampler fits (:class:`~lib.inference.samplers.Problem`) and
  one runner per sampler (numpyro, pymc, nutpie, map);
- :mod:`~lib.inference.laplace`: MAP + Laplace by block Hessian, marginal mode and Schur complement;
- :mod:`~lib.inference.progress`: progress reporting from the sampler's threads;
- :mod:`~lib.inference.timings`: where a fit's time went, seconds per phase (one timer for every fit path);
- :mod:`~lib.inference.store`: the fit cache, one format and one key for every fit;
- :mod:`~lib.inference.diagnostics`: convergence diagnostics of a fit and their JSON.

A model's own package builds the model, reads its results out and chooses its settings' defaults.
"""
