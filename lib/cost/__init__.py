"""Human cost of using a language model: with/without-model studies (Casares et al. 2022).

Modules: ``schema`` (column roles, validation), ``compare`` (test choice, Holm), ``loss``
(Table 1, Fig. 5), ``effort`` (median efforts, Fig. 4), ``costs`` (Eqs. 2-3, break-even n),
``correlation`` (Spearman, Fig. 3) and ``analysis`` (all of it at once).
"""
