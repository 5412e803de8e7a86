"""Run a study: serve the judgment form to annotators and keep every answer in a database (issue 21).

- :mod:`lib.study.models`: the tables (study, item, annotator, assignment, answer), versioned by the
  Alembic migrations in ``lib/study/migrations``;
- :mod:`lib.study.db`: the engine (``EVAL_DATABASE_URL``, else a SQLite file in the per-user data
  folder), migrated to the newest schema when it is first opened, its waits bounded, a deleted or
  replaced file refused; ``study backup``;
- :mod:`lib.study.tasks`: the task types (best-worst, pairwise, Likert rating), one module and one
  ``TaskSpec`` entry each: how an answer is checked, what the export holds, how agreement is measured;
- :mod:`lib.study.items`: the researcher's items CSV; :mod:`lib.study.assign`: who judges what;
- :mod:`lib.study.create`: a study from items; :mod:`lib.study.demo`: seed 001's own study on the
  bundled ROME passages;
- :mod:`lib.study.annotate`: the annotator's side (a token in, the next page out, an answer committed);
- :mod:`lib.study.export` and :mod:`lib.study.summary`: the researcher's side (the Data page's CSV,
  progress, agreement, gold accuracy, seconds, speeders); :mod:`lib.study.agreement`: Krippendorff's
  alpha of ratings;
- :mod:`lib.study.adaptive`: new pages from the leaderboard's "annotate next" batch;
- :mod:`lib.study.access`: when the researcher's pages need the operator's secret.

Nothing here imports Streamlit; the Studies page, the annotator's view and ``python -m lib study``
call these functions.
"""
