"""The collection's exception types (each maps to one exit code in :data:`analysis.cli.ERROR_EXIT`)."""
from __future__ import annotations


class CollectionError(RuntimeError):
    """A problem the user must fix (bad argument, unwritable folder, corrupted ledger): one line, exit 2."""


class LedgerLocked(CollectionError):
    """Another collector holds the ledger (one writer per ledger): one line naming its pid, exit 2."""


class StorageFault(CollectionError):
    """The ledger cannot be written (disk full, read-only, deleted, truncated WAL): one line, exit 2.

    Answers received but not committed are kept in the side file beside the ledger
    (:data:`analysis.collection.ledger.SIDE_SUFFIX`) and imported by the next run."""


class ContextTooLong(CollectionError):
    """The prompt is longer than the model's context window: one line, exit 2."""


class Unreachable(CollectionError):
    """The endpoint failed on every one of the last attempts (connection errors): one line, exit 3, resumable."""


class Transient(Exception):
    """A transport failure worth retrying (429, 5xx/529, timeout, connection reset, malformed 200 reply)."""

    def __init__(self, kind: str, status: int | None = None, retry_after: float | None = None, detail: str = ""):
        super().__init__(f"{kind} {status or ''} {detail}".strip())
        self.kind, self.status, self.retry_after, self.detail = kind, status, retry_after, detail


class Fatal(Exception):
    """A failure no retry can fix (authentication, unknown model, rejected request)."""


class SamplingRejected(Fatal):
    """A 400 that names a sampling parameter (temperature, top_p, top_k): never retried, never stored (issue 20)."""


class ToolChoiceRejected(Fatal):
    """A 400 that refuses the forced tool choice: never retried, never stored (issue 20)."""


class ModelNotServed(Fatal):
    """A 404 ``not_found_error`` (or ``model_not_found``) for the model: retired or misspelled (issue 20)."""


class Abort(KeyboardInterrupt):
    """A second interrupt (Ctrl-C, SIGTERM, SIGHUP): stop at once, keeping what was saved."""

    def __init__(self, signum: int = 2):
        super().__init__(f"aborted by signal {signum}")
        self.signum = signum
