"""The study tables (SQLAlchemy declarative models; the schema itself is Alembic's, ``migrations/``).

A study has items (a prompt and the systems' responses, optionally a gold answer), annotators (each
with a random token: the secret of their link), assignments (an item given to an annotator, with the
page number and the order its systems are shown in) and answers (one per assignment at most: a unique
constraint, so a repeated or concurrent submission can never count twice).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

NAME_CHARS = 1_000
"""Longest prompt id or system name stored (as :data:`lib.io.tables.MAX_NAME_CHARS`)."""


class Base(DeclarativeBase):
    """The declarative base of the study tables (its metadata is the migrations' target)."""


class Study(Base):
    """A study: the task, its criteria, how many annotators judge each item, and the researcher's texts.

    ``instructions`` and ``example`` are Markdown written by the researcher, rendered escaped or
    sanitised (never as raw HTML). ``gold_rate`` is the share of each annotator's pages that are gold
    items (attention checks). ``scale`` is a Likert study's :class:`lib.study.tasks.Scale`
    (``{"points", "low", "high"}``; None for the other tasks).
    """

    __tablename__ = "study"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    task: Mapped[str] = mapped_column(String(20))
    criteria: Mapped[list[str]] = mapped_column(JSON)
    per_item: Mapped[int] = mapped_column(Integer)
    gold_rate: Mapped[float] = mapped_column(Float, default=0.0)
    instructions: Mapped[str] = mapped_column(Text, default="")
    example: Mapped[str] = mapped_column(Text, default="")
    seed: Mapped[int] = mapped_column(Integer, default=0)
    scale: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    labels: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    check_rate: Mapped[float] = mapped_column(Float, default=0.0)
    crowd_key: Mapped[str | None] = mapped_column(String(64), unique=True, index=True, nullable=True)
    crowd_secret: Mapped[str | None] = mapped_column(String(64), nullable=True)
    completion_code: Mapped[str | None] = mapped_column(String(100), nullable=True)
    redirect_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    items: Mapped[list[Item]] = relationship(back_populates="study", order_by="Item.id")
    annotators: Mapped[list[Annotator]] = relationship(back_populates="study", order_by="Annotator.id")


class Item(Base):
    """One page's content: a prompt (its text, e.g. the counterfactual fact) and the systems' responses.

    ``responses``: ``[[system, text], ...]``; ``gold``: None, or the known answer as the task's
    choices (``{criterion: {...}}``, :mod:`lib.study.tasks`). ``check``: an instructed attention check
    (:mod:`lib.study.checks`): its gold answer is what the page tells the annotator to choose.
    """

    __tablename__ = "item"
    __table_args__ = (UniqueConstraint("study_id", "prompt_id", "systems_key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("study.id", ondelete="CASCADE"), index=True)
    prompt_id: Mapped[str] = mapped_column(String(NAME_CHARS))
    systems_key: Mapped[str] = mapped_column(Text)
    prompt_text: Mapped[str] = mapped_column(Text, default="")
    responses: Mapped[list[list[str]]] = mapped_column(JSON)
    gold: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    check: Mapped[bool] = mapped_column(Boolean, default=False)
    study: Mapped[Study] = relationship(back_populates="items")

    def texts(self) -> dict[str, str]:
        """``{system: response}`` of the item."""
        return {system: text for system, text in self.responses}


class Annotator(Base):
    """An annotator of a study: a label for the researcher and the token of their link.

    The token (``secrets.token_urlsafe``, 192 bits) is the only credential of an annotator; a revoked
    annotator (``active`` False) is refused as an unknown token would be. ``platform_hash``: for an
    annotator who came through a crowd platform's link, the keyed hash (HMAC-SHA256 with the study's
    ``crowd_secret``) of their platform id, never the id itself; None for a place not taken yet.
    """

    __tablename__ = "annotator"
    __table_args__ = (
        UniqueConstraint("study_id", "label"),
        Index("ix_annotator_platform", "study_id", "platform_hash", unique=True),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("study.id", ondelete="CASCADE"), index=True)
    label: Mapped[str] = mapped_column(String(100))
    token: Mapped[str] = mapped_column(String(64), unique=True)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    platform_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    study: Mapped[Study] = relationship(back_populates="annotators")
    assignments: Mapped[list[Assignment]] = relationship(back_populates="annotator", order_by="Assignment.page")


class Assignment(Base):
    """An item given to an annotator: their ``page`` (1-based), the systems in the order shown, and when
    the page was first shown (the start of its time on page)."""

    __tablename__ = "assignment"
    __table_args__ = (
        UniqueConstraint("annotator_id", "item_id"),
        UniqueConstraint("annotator_id", "page"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotator.id", ondelete="CASCADE"), index=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("item.id", ondelete="CASCADE"), index=True)
    page: Mapped[int] = mapped_column(Integer)
    shown_order: Mapped[list[str]] = mapped_column(JSON)
    shown_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    annotator: Mapped[Annotator] = relationship(back_populates="assignments")
    item: Mapped[Item] = relationship()
    answer: Mapped[Answer | None] = relationship(back_populates="assignment")


class Answer(Base):
    """The answer to one assignment (at most one: ``assignment_id`` is unique), with the seconds from
    the page first shown to the answer committed."""

    __tablename__ = "answer"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    assignment_id: Mapped[int] = mapped_column(ForeignKey("assignment.id", ondelete="CASCADE"), unique=True, index=True)
    choices: Mapped[dict] = mapped_column(JSON)
    seconds: Mapped[float] = mapped_column(Float)
    submitted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    assignment: Mapped[Assignment] = relationship(back_populates="answer")
