"""Structured ranking of many systems (issue 11): one skill per system, theta_pair = s_B - s_A.

``likelihoods`` is the registry of likelihoods (cells, votes, ratings: one spec each), ``data`` turns an
analysis input into what a likelihood needs,
``model`` builds the PyMC model, ``fit`` samples it (NUTS) or fits MAP + Laplace, ``simulate``
generates arena-like votes for tests and benchmarks, ``clusters`` prompt-clustered (cluster-robust)
variances and the design effect that says when votes on one prompt are dependent.
"""
