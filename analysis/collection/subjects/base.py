"""The subject interface: ``ask(job) -> Reply`` or raise :class:`Transient` / :class:`Fatal`."""
from __future__ import annotations

import json

from ..answers import Reply
from ..jobs import Job, sha256_text


class Subject:
    """Base class. ``ask(job)`` returns a :class:`Reply` or raises :class:`Transient` / :class:`Fatal`."""

    provider = ""
    paid = False
    #: settings given by the user on top of the defaults (None: the defaults)
    overrides: dict | None = None

    def __init__(self, model: str):
        self.model = model

    def request_settings(self) -> dict:
        """Everything but the prompt that determines the request (part of the ledger key)."""
        return {}

    def tag(self, key: str) -> str:
        """File-name tag: empty with the default settings, else ``s`` + the request key's first 8 characters,
        so a run with other settings (e.g. temperature 1) never overwrites the default records."""
        return f"s{key[:8]}" if self.overrides else ""

    def preflight(self) -> None:
        """One cheap request checking endpoint, key and model before the first paid request (SDK subjects)."""

    def context_tokens(self) -> int | None:
        """The model's context window where the server reports it, else None."""
        return None

    def ask(self, job: Job) -> Reply:
        raise NotImplementedError

    def close(self) -> None:
        pass


def request_key(subject: Subject) -> tuple[str, str]:
    """``(key, settings JSON)`` of a subject's request: provider, model and settings, hashed."""
    settings = json.dumps(subject.request_settings(), sort_keys=True, default=str)
    key = sha256_text(json.dumps([subject.provider, subject.model, settings]))[:20]
    return key, settings
