"""Redaction of secrets (API keys, header values) from every message and file the collection writes."""
from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

_SECRET_PATTERNS = re.compile(r"(?i)(bearer\s+|basic\s+|x-api-key\W+|sk-[a-z]*-?)[A-Za-z0-9_\-\.=+/]{4,}")


class Redactor:
    """Removes API keys from text: the exact keys registered plus anything that looks like one."""

    def __init__(self):
        self._secrets: set[str] = set()

    def add(self, secret: str | None) -> None:
        if secret and len(secret) >= 4:
            self._secrets.add(secret)

    def __call__(self, text: object) -> str:
        s = str(text)
        for secret in sorted(self._secrets, key=len, reverse=True):
            s = s.replace(secret, "[redacted]")
        return _SECRET_PATTERNS.sub(lambda m: m.group(1) + "[redacted]", s)


REDACT = Redactor()


def clean_url(url: str | None) -> str | None:
    """A base URL without user info, query or fragment (they can carry credentials).

    >>> clean_url("https://user:pw@example.org/v1?key=abc")
    'https://example.org/v1'
    """
    if not url:
        return None
    u = urlsplit(url)
    host = u.hostname or ""
    netloc = host + (f":{u.port}" if u.port else "")
    return urlunsplit((u.scheme, netloc, u.path, "", ""))
