"""LLM-judge votes beside human votes (issues 20 and 34).

``read`` reads a judge file (a pairwise file with a ``judge`` column) and matches its verdicts to the
human votes on (prompt, system pair); ``quality`` measures the judge against the human majority
(agreement, Cohen's kappa, confusion matrix, per-system preference, position bias, tie rate);
``ppi`` fits Bradley–Terry skills from human votes, judge votes and both together by
prediction-powered inference (PPI++; a weight per judge, prompt-clustered) with simultaneous max-t
rank-sets; ``run`` gathers them for the Judges page and ``python -m lib rank --judge``; ``budget`` plans
what to buy next (human-voted and judge-only items for a target width or power) and predicts what a judge
is worth from a pilot; ``ask`` runs a judge through an OpenAI-compatible server (``python -m lib judge``);
``simulate`` holds the coverage study and the arena of tests and benchmarks.
"""
