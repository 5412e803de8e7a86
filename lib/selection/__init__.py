"""Prompt-subset selection with the GRM (Sedoc & Ungar 2020, sec. 6.2 "Evaluation Set Selection").

Modules: :mod:`.settings` (calibration modes, default target SE: no heavy imports),
:mod:`.strategies` (one class per strategy, the registry), :mod:`.bank` (calibrated item
parameters), :mod:`.calibration` (leave-one-comparison-out calibration, fast MAP or full posterior),
:mod:`.curve` (the SE-vs-k curve of Fig. 2 and prompts needed for a target SE), :mod:`.adaptive`
(computerized adaptive testing and the what-if walk-through), :mod:`.subset` (the exported subset),
:mod:`.analysis` (:func:`~lib.selection.analysis.run`: all of it, for the page and the command).
Nothing is imported here, so that the command line can read the light modules alone.
"""
