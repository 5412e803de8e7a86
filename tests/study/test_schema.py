"""The Alembic migrations build exactly the models' schema, on SQLite and PostgreSQL, and rerun as no-ops."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text

from lib.study import db as study_db
from lib.study.models import Base


def test_migrated_schema_matches_the_models(db):
    engine = study_db.engine(db)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
    assert diff == []
    assert version == "0004"
    assert {"study", "item", "annotator", "assignment", "answer"} <= set(inspect(engine).get_table_names())


def test_a_version_0001_database_is_upgraded_in_place(db):
    """A study stored before Likert scales existed keeps its rows; its scale is empty."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine

    engine = create_engine(db)
    config = Config()
    config.set_main_option("script_location", str(study_db.MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0001")
        conn.execute(
            text(
                "INSERT INTO study (name, task, criteria, per_item, gold_rate, instructions, example, seed, "
                "created_at) VALUES ('old', 'bestworst', '[\"fluency\"]', 3, 0, '', '', 0, '2026-11-26')"
            )
        )
    engine.dispose()
    with study_db.engine(db).connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one() == "0004"
        assert conn.execute(text("SELECT name, scale FROM study")).one() == ("old", None)


def test_a_version_0002_pairwise_tie_is_stored_apart_from_system_names(db):
    """Revision 0003: ``{"winner": "tie"}`` (which a system called "tie" shared) becomes ``{"tie": true}`` in
    pairwise answers and gold answers; a win and a best-worst answer are left alone."""
    import json

    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine

    engine = create_engine(db)
    config = Config()
    config.set_main_option("script_location", str(study_db.MIGRATIONS))
    tie, win = {"fluency": {"winner": "tie"}}, {"fluency": {"winner": "x"}}
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0002")
        for sid, task in ((1, "pairwise"), (2, "bestworst")):
            conn.execute(
                text(
                    "INSERT INTO study (id, name, task, criteria, per_item, gold_rate, instructions, example, seed, "
                    f"created_at) VALUES ({sid}, 's', '{task}', '[\"fluency\"]', 1, 0, '', '', 0, '2026-11-26')"
                )
            )
            conn.execute(
                text(
                    f"INSERT INTO annotator (id, study_id, label, token, active) VALUES ({sid}, {sid}, 'a', "
                    f"'t{sid}', true)"
                )
            )
        rows = [(1, 1, tie, tie), (2, 1, None, win), (3, 2, None, tie)]  # item, study, gold, answer
        for item, sid, gold, choices in rows:
            conn.execute(
                text(
                    "INSERT INTO item (id, study_id, prompt_id, systems_key, prompt_text, responses, gold) "
                    "VALUES (:i, :s, 'p', :k, '', '[]', :g)"
                ),
                {"i": item, "s": sid, "k": str(item), "g": json.dumps(gold) if gold else None},
            )
            conn.execute(
                text(
                    "INSERT INTO assignment (id, annotator_id, item_id, page, shown_order) "
                    "VALUES (:i, :s, :i, :i, '[]')"
                ),
                {"i": item, "s": sid},
            )
            conn.execute(
                text(
                    "INSERT INTO answer (assignment_id, choices, seconds, submitted_at) "
                    "VALUES (:i, :c, 1, '2026-11-26')"
                ),
                {"i": item, "c": json.dumps(choices)},
            )
    engine.dispose()
    with study_db.engine(db).connect() as conn:
        answers = [
            json.loads(c) if isinstance(c, str) else c
            for c in conn.execute(text("SELECT choices FROM answer ORDER BY assignment_id")).scalars()
        ]
        gold = conn.execute(text("SELECT gold FROM item WHERE id = 1")).scalar_one()
    assert answers == [{"fluency": {"tie": True}}, win, tie]
    assert (json.loads(gold) if isinstance(gold, str) else gold) == {"fluency": {"tie": True}}


def test_a_version_0003_study_keeps_its_rows_without_labels_checks_or_crowd_link(db):
    """Revision 0004 (issue 33): a study stored before has no criterion labels, no attention checks, no crowd
    link; its items are no checks; its annotators took no platform place."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine

    engine = create_engine(db)
    config = Config()
    config.set_main_option("script_location", str(study_db.MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0003")
        conn.execute(
            text(
                "INSERT INTO study (id, name, task, criteria, per_item, gold_rate, instructions, example, seed, "
                "created_at) VALUES (1, 'old', 'pairwise', '[\"fluency\"]', 1, 0, '', '', 0, '2026-12-01')"
            )
        )
        conn.execute(text("INSERT INTO annotator (id, study_id, label, token, active) VALUES (1, 1, 'a', 't', true)"))
        conn.execute(
            text(
                "INSERT INTO item (id, study_id, prompt_id, systems_key, prompt_text, responses) "
                "VALUES (1, 1, 'p', 'k', '', '[]')"
            )
        )
    engine.dispose()
    with study_db.engine(db).connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one() == "0004"
        study = conn.execute(text("SELECT name, labels, check_rate, crowd_key, completion_code FROM study")).one()
        assert tuple(study) == ("old", None, 0, None, None)
        assert conn.execute(text('SELECT "check" FROM item')).scalar_one() in (False, 0)
        assert conn.execute(text("SELECT platform_hash FROM annotator")).scalar_one() is None


def test_migrating_again_changes_nothing(db):
    engine = study_db.engine(db)
    study_db.migrate(engine)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM alembic_version")).scalar_one() == 1


def test_an_in_memory_database_is_refused():
    import pytest

    from lib.study.errors import StudyError

    with pytest.raises(StudyError, match="in-memory"):
        study_db.engine("sqlite://")
