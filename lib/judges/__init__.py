"""LLM-judge votes beside human votes (issue 20).

``read`` reads a judge file (a pairwise file with a ``judge`` column) and matches its verdicts to the
human votes on (prompt, system pair); ``quality`` measures the judge against the human majority
(agreement, Cohen's kappa, confusion matrix, per-system preference, position bias, tie rate);
``ppi`` fits Bradley–Terry skills from human votes, judge votes and both together by
prediction-powered inference (PPI++) with simultaneous rank-sets; ``run`` gathers them for the
Judges page and ``python -m lib rank --judge``; ``budget`` plans what to buy next (human-voted and
judge-only items for a target width); ``ask`` runs a judge through an OpenAI-compatible server
(``python -m lib judge``); ``simulate`` is the coverage study of tests and benchmarks.
"""
