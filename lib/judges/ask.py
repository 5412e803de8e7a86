"""Judge runs: ask an OpenAI-compatible model for a verdict on each pair, in both orders.

Each (prompt, response A, response B) is asked twice, the responses swapped the second time, so the
judge's position bias is measured (``lib.judges.quality.position_bias``) and averages out of its
prediction. The answer must be one word, A, B or tie, and nothing else (any case; blanks, punctuation
and markup around it ignored: ``**A**``, ``"tie".``); any other answer ("a tie", "A or B", "Response
B is better") is an unusable verdict: its ``choice`` is left blank and the answer kept in
``raw_verdict``, never guessed (:func:`parse_verdict`). Requests go through the openai SDK with the
revision client's settings (:class:`lib.revision.client.LLMSettings`: retries with backoff on 429, 5xx
and timeouts, each attempt bounded by ``timeout``) and its check of the answer
(:func:`lib.revision.client.chat_completion`: an HTML page is named as one, with the server and the
HTTP status); answers are cached on disk by server, model, prompt version, temperature and the texts
(:func:`lib.io.cache.load` / :func:`lib.io.cache.store`), so a rerun never bills twice; a request that fails
is reported with its reason and the others are kept. Tokens used are summed from the answers'
``usage``. The API key is only passed to the SDK: never stored or logged, and redacted from every
error and answer text (:func:`lib.revision.client.describe_failure`; a server answering 401 may quote
the Authorization header).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from lib.io.cache import load, store
from lib.io.columns import resolve_roles
from lib.io.paths import cache_dir
from lib.io.tables import guess_roles, text
from lib.judgments.formats import FORMATS
from lib.revision.client import TEMPERATURE, LLMSettings, chat_completion, describe_failure, openai_client
from lib.revision.credentials import redact

PROMPT_VERSION = "judge-v1"
SYSTEM_PROMPT = (
    "You are an impartial judge. You compare two responses to the same instruction and decide which one "
    "is better: more helpful, correct and complete. Answer with exactly one word: A if Response A is "
    "better, B if Response B is better, tie if they are equally good."
)
USER_PROMPT = (
    "Instruction:\n{prompt}\n\nResponse A:\n{first}\n\nResponse B:\n{second}\n\n"
    "Which response is better? Answer A, B or tie."
)

PAIR_ROLES = ("prompt", "system_a", "system_b", "prompt_text", "response_a", "response_b")
"""Roles of a PAIRS file (the pairwise format's names and synonyms): one row per pair to judge."""

VERDICT_COLUMNS = ["prompt", "system_a", "system_b", "judge", "choice", "raw_verdict", "error"]
"""Columns of ``judge_votes.csv``: a judge file (``system_a`` shown first), one row per order asked."""

_AROUND = re.compile(r"^(?:[^\w?]|_)+|(?:[^\w?]|_)+$")
"""Blanks, punctuation and markup at either end of an answer (``**A**``, ``"tie".``); not a question mark."""


@dataclass(frozen=True)
class PairTask:
    """One request: the prompt and the two responses in the order shown."""

    prompt: str
    first: str
    second: str
    prompt_text: str
    first_text: str
    second_text: str


@dataclass
class Verdict:
    """Outcome of one request: ``choice`` A / B / tie for the first / second shown, "" when unusable."""

    choice: str
    raw: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    error: str = ""


def parse_verdict(answer: str) -> str:
    """A, B or tie when the whole answer is that one word (any case, with blanks, punctuation or markup
    around it); "" for anything else, which is an unusable verdict, never guessed: "a tie" (whose first
    word is "a"), "A or B", "Response A", "B is better", "tie?" are all unusable."""
    return {"a": "A", "b": "B", "tie": "tie"}.get(_AROUND.sub("", answer).lower(), "")


def read_pairs(df: pd.DataFrame, columns: dict[str, str] | None = None, *, file: str) -> list[PairTask]:
    """The pairs of a PAIRS file, each in both orders (A then B, B then A).

    Raises
    ------
    FormatError
        A role without column (:func:`lib.io.columns.resolve_roles`), or a blank cell (rows named).
    """
    from lib.errors import FormatError
    from lib.io.tables import row_numbers

    guesses = guess_roles(list(df.columns), FORMATS["pairwise"].column_roles, df)
    mapping = resolve_roles(
        list(df.columns), PAIR_ROLES, (), guesses, columns, file=file, what="a file of pairs to judge"
    )
    cells = {role: text(df[col]) for role, col in mapping.items()}
    for role, values in cells.items():
        if (values == "").any():
            raise FormatError(
                f"missing value for role '{role}'", file=file, rows=row_numbers(df)[values == ""], column=mapping[role]
            )
    tasks = []
    for p, sa, sb, t, ra, rb in zip(*(cells[r] for r in PAIR_ROLES), strict=True):
        tasks += [PairTask(p, sa, sb, t, ra, rb), PairTask(p, sb, sa, t, rb, ra)]
    return tasks


class VerdictAsker:
    """Ask a model for verdicts, cached.

    Parameters
    ----------
    settings : LLMSettings
        Model, Base URL, key (chosen by :func:`lib.revision.credentials.choose_key`), concurrency,
        retries and timeout.
    cache : Path, optional
        Folder of cached answers (default :func:`lib.io.paths.cache_dir` ``("judges")``).
    use_cache : bool
        False neither reads nor writes the cache.
    http_client : httpx.Client, optional
        Passed to the SDK.

    Raises
    ------
    SettingsError
        A Base URL that cannot be used (:func:`lib.revision.credentials.check_base_url`).
    """

    def __init__(
        self, settings: LLMSettings, *, cache: Path | None = None, use_cache: bool = True, http_client: Any = None
    ) -> None:
        self.settings, self._client = openai_client(settings, http_client)
        self.cache = (cache or cache_dir("judges")) if use_cache else None

    def cache_key(self, task: PairTask) -> str:
        """SHA-256 of the server (the SDK's resolved Base URL), model, prompt version and texts,
        temperature and the texts in the order shown (never the API key)."""
        raw = json.dumps(
            [
                str(self._client.base_url),
                self.settings.model,
                PROMPT_VERSION,
                SYSTEM_PROMPT,
                USER_PROMPT,
                TEMPERATURE,
                task.prompt_text,
                task.first_text,
                task.second_text,
            ]
        )
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()

    def _request(self, task: PairTask) -> Verdict:
        completion = chat_completion(
            self._client,
            model=self.settings.model,
            temperature=TEMPERATURE,
            messages=[
                {"role": "system", "content": SYSTEM_PROMPT},
                {
                    "role": "user",
                    "content": USER_PROMPT.format(
                        prompt=task.prompt_text, first=task.first_text, second=task.second_text
                    ),
                },
            ],
        )
        answer = redact(completion.choices[0].message.content or "", self.settings.api_key)
        usage = completion.usage
        return Verdict(
            parse_verdict(answer),
            answer,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
        )

    def ask(self, task: PairTask) -> Verdict:
        """The verdict on one ordered pair, from the cache when present; a failure is returned, not raised."""
        key = self.cache_key(task)
        path = self.cache / f"{key}.json" if self.cache else None

        def parse(raw: bytes) -> Verdict:
            stored = json.loads(raw.decode("utf-8"))
            if stored["key"] != key:
                raise LookupError("the entry answers another request")
            return Verdict(parse_verdict(stored["answer"]), stored["answer"], cached=True)

        hit = load(path, parse) if path is not None else None
        if hit is not None:
            return hit
        try:
            verdict = self._request(task)
        except Exception as err:  # every failure is reported per request
            return Verdict("", "", error=describe_failure(err, self._client.base_url, self.settings))
        if path is not None:
            payload = {
                "key": key,
                "model": self.settings.model,
                "prompt_version": PROMPT_VERSION,
                "answer": verdict.raw,
            }
            store(path, json.dumps(payload).encode("utf-8"), "judge")
        return verdict

    def run(self, tasks: Sequence[PairTask], progress: Callable[[int, int], None] | None = None) -> list[Verdict]:
        """Verdicts of every task, in order, on at most ``settings.concurrency`` threads."""
        with ThreadPoolExecutor(max_workers=max(1, self.settings.concurrency)) as pool:
            verdicts = []
            for done, verdict in enumerate(pool.map(self.ask, tasks), start=1):
                verdicts.append(verdict)
                if progress is not None:
                    progress(done, len(tasks))
        return verdicts


def verdict_table(tasks: Sequence[PairTask], verdicts: Sequence[Verdict], judge: str) -> pd.DataFrame:
    """The judge file of a run (:data:`VERDICT_COLUMNS`): ``system_a`` is the response shown first."""
    return pd.DataFrame(
        [(t.prompt, t.first, t.second, judge, v.choice, v.raw, v.error) for t, v in zip(tasks, verdicts, strict=True)],
        columns=VERDICT_COLUMNS,
    )


def usage(verdicts: Sequence[Verdict]) -> dict[str, int]:
    """Requests, cached answers, failures, unusable answers and the tokens billed (answers not cached)."""
    return {
        "requests": len(verdicts),
        "cached": sum(v.cached for v in verdicts),
        "failed": sum(bool(v.error) for v in verdicts),
        "unusable": sum(not v.error and not v.choice for v in verdicts),
        "prompt_tokens": sum(v.prompt_tokens for v in verdicts),
        "completion_tokens": sum(v.completion_tokens for v in verdicts),
    }
