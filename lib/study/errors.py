"""Typed refusals of the annotator's requests (subclasses of :class:`lib.errors.InputError`).

Messages never say whether a token or a task exists for someone else: a forged token and another
annotator's task are refused in the same words as a missing one.
"""

from __future__ import annotations

from lib.errors import InputError


class StudyError(InputError):
    """A study request cannot be served (unknown study, bad settings for a study)."""


class StorageError(StudyError):
    """The study database cannot be reached, answers too slowly, or cannot be written (deleted, replaced,
    read-only, stopped).

    The message is for the operator (the command line, the Studies page): it names the database (never
    its password) and the driver's reason; the exception's ``__cause__`` keeps the driver's own error.
    An annotator is shown a plain message instead (:mod:`ui.annotate`).
    """


class TokenError(StudyError):
    """The annotator's link is not valid: an unknown, malformed or revoked token."""


class JoinError(StudyError):
    """A crowd platform's participant cannot take a place in the study: their link names no participant id,
    or every place is taken (:mod:`lib.study.crowd`)."""


class TaskError(StudyError):
    """The task named in a request is not one of this annotator's tasks."""


class AnswerError(StudyError):
    """An answer does not fit its task (a choice missing, MOST = LEAST, a system not shown)."""


class AnswerConflict(AnswerError):
    """The task was already answered, with other choices: the first answer stands."""
