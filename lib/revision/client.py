"""Revision edits from an LLM through the openai SDK (any OpenAI-compatible server).

Per draft: structured output with the :class:`~lib.revision.schema.RevisionEdits` JSON schema;
a server that rejects JSON-schema output (e.g. llama-cpp-python answers 500) is asked again in
JSON mode with the schema in the prompt, and the answer validated; invalid JSON gets one re-ask.
The path used is recorded per draft (``json_schema``, ``json_object``, ``+reask``); once JSON mode
has answered where the schema was rejected, the rest of the run asks in JSON mode directly.
The SDK retries 429, 5xx and timed-out requests with backoff; each attempt waits at most
``timeout`` seconds. Temperature is 0. Drafts run on a bounded thread pool; finished drafts are
cached on disk by (server, model, prompt, temperature, schema, draft, reference) so a rerun never
bills twice and one server's answers are never served for another (:meth:`EditProposer.cache_key`;
an unreadable or mismatched cache entry is a miss, a cache that cannot be written only warns), and a
failing draft is reported with its reason while the others are kept. A server that answers
something other than a chat completion (an HTML page, a proxy's error) is named with its HTTP
status and the start of its answer (:func:`chat_completion`, also the judge's). The API key is only
passed to the SDK: it is never stored, cached or logged, and every failure's text is redacted
(:func:`describe_failure`: a server may quote the Authorization header back).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError

from lib.io.cache import load, store
from lib.io.paths import cache_dir
from lib.revision.credentials import check_base_url, redact
from lib.revision.prompts import PromptTemplate, build_messages
from lib.revision.schema import RevisionEdit, RevisionEdits

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
    from openai.types.chat.completion_create_params import ResponseFormat
    from openai.types.shared_params import ResponseFormatJSONSchema

TEMPERATURE = 0
"""Sampling temperature of every request (the most reproducible answer)."""

SCHEMA_REJECTED = frozenset({400, 415, 422, 500, 501})
"""HTTP statuses after which JSON-schema output is taken as unsupported (after the SDK's retries)."""


@dataclass(frozen=True)
class LLMSettings:
    """Connection to an OpenAI-compatible server. ``api_key`` is excluded from ``repr``."""

    model: str
    base_url: str | None = None
    api_key: str = field(default="", repr=False)
    concurrency: int = 4
    max_retries: int = 3
    timeout: float = 60.0
    """Seconds one request may wait for the answer; with retries a draft waits at most
    ``(1 + max_retries) * timeout`` plus the SDK's backoff."""


@dataclass(frozen=True)
class DraftTask:
    """One draft to revise; ``reference`` is None in the reference-free setting."""

    text_id: str
    system: str
    draft: str
    reference: str | None = None


@dataclass
class DraftResult:
    """Outcome for one draft: ``edits`` (None on failure), the ``path`` used, ``cached``, ``error``."""

    text_id: str
    system: str
    edits: list[RevisionEdit] | None
    path: str = ""
    cached: bool = False
    error: str | None = None


class AnswerFailed(Exception):
    """A request got no usable answer; the message says why."""


def _response_format() -> ResponseFormatJSONSchema:
    return {
        "type": "json_schema",
        "json_schema": {"name": "revision_edits", "strict": True, "schema": RevisionEdits.model_json_schema()},
    }


def openai_client(settings: LLMSettings, http_client: Any = None) -> tuple[LLMSettings, Any]:
    """The openai SDK client of ``settings`` (the one place it is built), and the settings with their
    Base URL checked.

    Raises
    ------
    SettingsError
        A Base URL that cannot be used (:func:`lib.revision.credentials.check_base_url`), checked
        before the SDK, whose HTTP client fails with InvalidURL.
    """
    import openai

    if settings.base_url is not None:
        settings = replace(settings, base_url=check_base_url(settings.base_url))
    client = openai.OpenAI(
        api_key=settings.api_key or "not-needed",
        base_url=settings.base_url,
        max_retries=settings.max_retries,
        timeout=settings.timeout,
        http_client=http_client,
    )
    return settings, client


def not_json(base_url: object, status: int, text: str) -> str:
    """Why an answer that is not JSON cannot be used: the server, the HTTP status, what it sent (an HTML
    page is said to be one: a Base URL that names a web site or a proxy's login page, not an API)."""
    page = text.lstrip()[:200].lower()
    html = page.startswith(("<!doctype html", "<html")) or "<body" in page or "<head" in page
    start = f"the server at {base_url} did not answer with JSON (HTTP {status}"
    if html:
        return (
            f"{start}): it sent an HTML page, not an OpenAI-compatible JSON answer; check the Base URL "
            f"(first 200 characters: {text[:200]!r})"
        )
    return f"{start}, first 200 characters: {text[:200]!r})"


def chat_completion(client: Any, **request: Any) -> ChatCompletion:
    """``client.chat.completions.create(**request)``, checked to be a chat completion with a choice.

    Raises
    ------
    AnswerFailed
        The server answered something else: not JSON (an HTML page: :func:`not_json`), or JSON
        without ``choices``. Errors of the SDK (HTTP status, timeout, connection) propagate.
    """
    raw = client.chat.completions.with_raw_response.create(**request)
    completion: ChatCompletion | str | None
    try:  # the SDK's type says a completion: it is the text itself when the body is not declared JSON
        completion = cast("ChatCompletion | str", raw.parse())
    except ValueError:  # declared JSON but is not
        completion = None
    if completion is None or isinstance(completion, str):
        raise AnswerFailed(not_json(client.base_url, raw.status_code, raw.text))
    if not getattr(completion, "choices", None):
        raise AnswerFailed(
            f"the server at {client.base_url} answered JSON that is not a chat "
            f"completion (HTTP {raw.status_code}, first 200 characters: {raw.text[:200]!r})"
        )
    return completion


def describe_failure(err: Exception, base_url: object, settings: LLMSettings) -> str:
    """The reason a request failed, in words, with the API key and any bearer token redacted
    (:func:`lib.revision.credentials.redact`): the text stored in an output's ``error`` column and printed.

    :class:`AnswerFailed` says its own; a timeout or unreachable server :func:`unreached`; an HTTP
    error with a body that is not JSON :func:`not_json`; any other error the SDK's message (which quotes
    the server's answer: a 401 may quote the Authorization header).
    """
    import openai

    if isinstance(err, AnswerFailed):
        said = str(err)
    elif (reached := unreached(err, base_url, settings)) is not None:
        said = reached
    elif isinstance(err, openai.APIStatusError) and err.response.text.strip() and not _is_json(err.response.text):
        said = not_json(base_url, err.status_code, err.response.text)
    else:
        said = f"{type(err).__name__}: {err}"
    return redact(said, settings.api_key)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def unreached(err: Exception, base_url: object, settings: LLMSettings) -> str | None:
    """The reason, in words, of a request that timed out or could not reach the server at
    ``base_url``; None for any other error (the caller words those)."""
    import openai

    if isinstance(err, openai.APITimeoutError):
        return (
            f"no answer from the server at {base_url} within {settings.timeout:g} s "
            f"({1 + settings.max_retries} attempts)"
        )
    if isinstance(err, openai.APIConnectionError):
        return f"cannot reach the server at {base_url} ({err.__cause__ or err})"
    return None


class EditProposer:
    """Ask an LLM for revision edits of many drafts.

    Parameters
    ----------
    settings : LLMSettings
    template : PromptTemplate
        :data:`lib.revision.prompts.REFERENCE_BASED` or ``REFERENCE_FREE``.
    cache : Path, optional
        Directory of cached answers (default :func:`lib.io.paths.cache_dir` ``("revision")``).
    use_cache : bool
        False neither reads nor writes the cache.

    Raises
    ------
    SettingsError
        A Base URL that cannot be used (:func:`lib.revision.credentials.check_base_url`).
    http_client : httpx2.Client, optional
        Passed to the SDK.
    """

    def __init__(
        self,
        settings: LLMSettings,
        template: PromptTemplate,
        *,
        cache: Path | None = None,
        use_cache: bool = True,
        http_client: Any = None,
    ) -> None:
        self.settings, self._client = openai_client(settings, http_client)
        self.template = template
        self.cache = (cache or cache_dir("revision")) if use_cache else None
        self._schema_ok = True  # off for the rest of the run once JSON mode worked where a schema failed

    def cache_key(self, task: DraftTask) -> str:
        """SHA-256 of everything that shapes the answer: the server the requests go to (the SDK's
        resolved Base URL), the model, the prompt template (name, version and text), the temperature,
        the answer schema, the draft and the reference. The API key is not part of it (the same server
        and model answer the same), and is never stored."""
        t = self.template
        raw = json.dumps(
            [
                str(self._client.base_url),
                self.settings.model,
                t.name,
                t.version,
                t.system,
                t.user,
                TEMPERATURE,
                RevisionEdits.model_json_schema(),
                task.draft,
                task.reference,
            ]
        )
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()

    def _ask(self, messages: list[ChatCompletionMessageParam], mode: str) -> str:
        fmt: ResponseFormat = _response_format() if mode == "json_schema" else {"type": "json_object"}
        completion = chat_completion(
            self._client, model=self.settings.model, messages=messages, temperature=TEMPERATURE, response_format=fmt
        )
        choice = completion.choices[0]
        if choice.finish_reason == "length":
            raise AnswerFailed("answer truncated at the token limit (finish_reason=length)")
        if not choice.message.content:
            refusal = getattr(choice.message, "refusal", None)
            raise AnswerFailed(f"empty answer{f' (refusal: {refusal})' if refusal else ''}")
        return choice.message.content

    def _edits(self, task: DraftTask) -> tuple[list[RevisionEdit], str]:
        import openai

        mode = "json_schema" if self._schema_ok else "json_object"
        messages = build_messages(self.template, task.draft, task.reference, json_mode=mode == "json_object")
        try:
            content = self._ask(messages, mode)
        except openai.APIStatusError as err:
            if mode != "json_schema" or err.status_code not in SCHEMA_REJECTED:
                raise
            mode = "json_object"
            messages = build_messages(self.template, task.draft, task.reference, json_mode=True)
            content = self._ask(messages, mode)
            # only now is the schema to blame: a draft that fails both ways (e.g. too long) changes nothing
            self._schema_ok = False
        try:
            return RevisionEdits.model_validate_json(content).edits, mode
        except ValidationError as err:
            problem = err.errors()[0]
            detail = f"{problem['msg']} at {'/'.join(str(p) for p in problem['loc']) or 'top level'}"
        reask: list[ChatCompletionMessageParam] = [
            *messages,
            {"role": "assistant", "content": content},
            {
                "role": "user",
                "content": f"That answer is not valid ({detail}). Reply again with only the "
                "JSON object, following the schema exactly.",
            },
        ]
        content = self._ask(reask, mode)
        try:
            return RevisionEdits.model_validate_json(content).edits, mode + "+reask"
        except ValidationError as err:
            raise AnswerFailed(f"invalid JSON after one re-ask: {err.errors()[0]['msg']}") from err

    def _load(self, path: Path, key: str) -> tuple[list[RevisionEdit], str] | None:
        """A cached answer, or None: an unreadable entry, or one stored for another request (key), is a
        miss and is removed (:func:`lib.io.cache.load`)."""

        def parse(raw: bytes) -> tuple[list[RevisionEdit], str]:
            stored = json.loads(raw.decode("utf-8"))
            if stored["key"] != key:
                raise LookupError("the entry answers another request")
            return [RevisionEdit.model_validate(e) for e in stored["edits"]], str(stored["path"])

        return load(path, parse)

    def _store(self, path: Path, key: str, edits: list[RevisionEdit], used: str) -> None:
        """Write atomically; a cache that cannot be written only warns (:func:`lib.io.cache.store`)."""
        text = json.dumps(
            {
                "key": key,
                "model": self.settings.model,
                "prompt_version": self.template.version,
                "path": used,
                "edits": [e.model_dump() for e in edits],
            }
        )
        store(path, text.encode("utf-8"), "revision")

    def propose(self, task: DraftTask) -> DraftResult:
        """Edits for one draft, from the cache when present; failures are returned, not raised."""
        key = self.cache_key(task)
        path = self.cache / f"{key}.json" if self.cache else None
        hit = self._load(path, key) if path is not None else None
        if hit is not None:
            return DraftResult(task.text_id, task.system, hit[0], hit[1], cached=True)
        try:
            edits, used = self._edits(task)
        except Exception as err:  # every failure is reported per draft
            return DraftResult(
                task.text_id, task.system, None, error=describe_failure(err, self._client.base_url, self.settings)
            )
        if path is not None:
            self._store(path, key, edits, used)
        return DraftResult(task.text_id, task.system, edits, used)

    def run(self, tasks: Sequence[DraftTask], progress: Callable[[int, int], None] | None = None) -> list[DraftResult]:
        """Edits for all drafts on at most ``settings.concurrency`` threads, in input order.

        ``progress(done, total)`` is called from the calling thread after each draft.
        """
        results: list[DraftResult | None] = [None] * len(tasks)
        with ThreadPoolExecutor(max_workers=max(1, self.settings.concurrency)) as pool:
            futures = {pool.submit(self.propose, t): k for k, t in enumerate(tasks)}
            for done, fut in enumerate(as_completed(futures), start=1):
                results[futures[fut]] = fut.result()
                if progress is not None:
                    progress(done, len(tasks))
        return [r for r in results if r is not None]


def results_to_tables(results: Sequence[DraftResult], editor: str) -> tuple[Any, Any]:
    """Tidy edits (:data:`~lib.revision.schema.EDIT_COLUMNS` plus ``path``) and failures.

    Returns
    -------
    (DataFrame, DataFrame)
        Edits of the drafts that succeeded; ``text_id, system, error`` of those that failed.
    """
    import pandas as pd

    from lib.revision.schema import EDIT_COLUMNS

    rows = [
        {
            "text_id": r.text_id,
            "system": r.system,
            "editor": editor,
            "edit_index": k,
            **e.model_dump(),
            "path": r.path + (" (cached)" if r.cached else ""),
        }
        for r in results
        if r.edits is not None
        for k, e in enumerate(r.edits)
    ]
    edits = pd.DataFrame(rows, columns=[*EDIT_COLUMNS, "path"])
    failures = pd.DataFrame(
        [(r.text_id, r.system, r.error) for r in results if r.edits is None], columns=["text_id", "system", "error"]
    )
    return edits, failures
