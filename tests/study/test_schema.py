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
    assert version == "0002"
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
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one() == "0002"
        assert conn.execute(text("SELECT name, scale FROM study")).one() == ("old", None)


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
