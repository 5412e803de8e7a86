"""Bayesian item response theory: the graded response model, its fit and numpy read-outs."""
