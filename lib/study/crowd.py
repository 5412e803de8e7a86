"""A study run on a crowd platform: one public link, a place taken on the first visit, resumed by the same id.

The platform sends each participant to the study's link with their id in the query: Prolific appends
``PROLIFIC_PID``, ``STUDY_ID`` and ``SESSION_ID`` (its "URL parameters" option, ``{{%PROLIFIC_PID%}}``
placeholders), other platforms a ``worker_id`` (Amazon Mechanical Turk's ``workerId`` is read as it too). On
the first visit of an id the participant takes the study's first free place (an annotator made at
creation, with their pages already dealt: :mod:`lib.study.assign`); a later visit with the same id resumes
that place; when every place is taken the link says so. The places are the study's annotators, so the study
never has more than it needs, and the adaptive step (:mod:`lib.study.adaptive`) adds places when it needs
more.

The id is stored only as a keyed hash, HMAC-SHA256 (RFC 2104) with the study's own random secret
(``study.crowd_secret``), so the database (or a backup of it) does not give the platform ids away and ids
cannot be tested against it without the secret; the export, the summary and the links never include it.
``STUDY_ID`` and ``SESSION_ID`` are read by the platform, not by the study: they are not stored.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from urllib.parse import urlencode

from sqlalchemy import select

from lib.study.db import transaction
from lib.study.errors import JoinError, TokenError
from lib.study.models import Annotator, Study

CROWD_PARAM = "study_link"
"""The query parameter of a crowd study's link (``/?study_link=KEY&PROLIFIC_PID=...``)."""
ID_PARAMS = ("PROLIFIC_PID", "worker_id", "workerId")
"""The query parameters that name a participant, in the order they are looked for."""
PROLIFIC_QUERY = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
"""What Prolific appends to a study URL (its placeholders, filled in for each participant)."""
ID_FORMAT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}")
"""A platform id (Prolific's are 24 hexadecimal characters); anything else, e.g. a placeholder left
unfilled (``{{%PROLIFIC_PID%}}``), is refused."""
KEY_FORMAT = re.compile(r"[A-Za-z0-9_-]{16,64}")
NOT_VALID = "this link is not valid: ask the researcher for yours"
NO_ID = (
    "this study link does not say who you are (no PROLIFIC_PID or worker_id in it): open it from the crowd "
    "platform's page of the study"
)
FULL = (
    "This study has all the participants it needs, so no place is left for you. Nothing was recorded: please "
    "return the study on the platform."
)


def crowd_links(base_url: str, key: str) -> dict[str, str]:
    """The study's link for Prolific (with its placeholders) and for any other platform (``worker_id=...``)."""
    base = f"{base_url.rstrip('/')}/?{urlencode({CROWD_PARAM: key})}"
    return {"prolific": f"{base}&{PROLIFIC_QUERY}", "other platforms": f"{base}&worker_id=WORKER_ID"}


def platform_id(params: Mapping[str, str]) -> tuple[str, str]:
    """``(parameter, id)`` of the participant named in a link's query.

    Raises
    ------
    JoinError
        No participant id, or one that is not an id (:data:`ID_FORMAT`).
    """
    for name in ID_PARAMS:
        value = params.get(name)
        if value:
            if ID_FORMAT.fullmatch(value) is None:
                raise JoinError(f"{NO_ID} ({name} is not a participant id)")
            return name, value
    raise JoinError(NO_ID)


def participant_hash(secret: str, param: str, value: str) -> str:
    """HMAC-SHA256 of ``param=value`` keyed with the study's secret (hexadecimal, 64 characters).

    Parameters
    ----------
    secret : str
        The study's ``crowd_secret`` (hexadecimal).
    param, value : str
        The query parameter that named the participant and their id (``worker_id`` and ``PROLIFIC_PID`` ids
        are kept apart).
    """
    return hmac.new(bytes.fromhex(secret), f"{param}={value}".encode(), hashlib.sha256).hexdigest()


def join(key: str, params: Mapping[str, str], *, url: str | None = None) -> str:
    """The token of the place a crowd participant holds, taking the first free place on their first visit.

    Parameters
    ----------
    key : str
        The study link's key (``study_link``).
    params : mapping
        The link's query parameters (:func:`platform_id`).
    url : str, optional
        The database.

    Returns
    -------
    str
        The annotator's token (the rest of the view is an annotator's: :mod:`lib.study.annotate`).

    Raises
    ------
    TokenError
        No crowd study with that key, or the participant's place was revoked.
    JoinError
        No participant id in the link, or every place is taken (:data:`FULL`).

    Notes
    -----
    The study's row is locked first (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite's ``BEGIN IMMEDIATE``
    serialises every writer), so two participants arriving at once take two places, and one participant
    opening two tabs at once takes one.
    """
    if KEY_FORMAT.fullmatch(key) is None:
        raise TokenError(NOT_VALID)
    with transaction(url) as session:
        study = session.scalar(select(Study).where(Study.crowd_key == key).with_for_update())
        if study is None or study.crowd_secret is None:
            raise TokenError(NOT_VALID)
        digest = participant_hash(study.crowd_secret, *platform_id(params))
        held = session.scalar(
            select(Annotator).where(Annotator.study_id == study.id, Annotator.platform_hash == digest)
        )
        if held is not None:
            if not held.active:
                raise TokenError(NOT_VALID)
            return held.token
        free = session.scalar(
            select(Annotator)
            .where(Annotator.study_id == study.id, Annotator.platform_hash.is_(None), Annotator.active)
            .order_by(Annotator.id)
            .limit(1)
        )
        if free is None:
            raise JoinError(FULL)
        free.platform_hash = digest
        return free.token
