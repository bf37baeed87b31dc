"""The ledger: persisted answers and the log of every request attempt (SQLite, WAL), one writer at a time.

* **One writer per ledger.** :func:`ledger_lock` takes an exclusive OS lock (``fcntl.flock``) on
  ``<ledger>.lock`` for the whole run; a second collector on the same ledger is refused with one line
  naming the holder's pid (exit 2). The kernel releases the lock when its holder dies (even ``kill -9``).
  The lock is re-entrant within one process (the audit holds it across its conditions).
* **Durability.** Each :meth:`Ledger.put` is one transaction (``synchronous=FULL`` for paid subjects);
  the WAL is checkpointed by the ledger itself every :data:`CHECKPOINT_ROWS` answers.
* **Samples.** ``--samples R`` asks every job R times: each answer is its own row, keyed by its
  ``sample`` index (schema 2; a schema-1 ledger is migrated in place on opening, its answers becoming
  sample 0), so a resumed run asks only for the samples still missing and none is paid twice.
  ``--answer-format logprobs`` stores P(patient 1) over the two answer tokens (``p_first``) and the
  probability mass outside them (``p_outside``).
* **Storage faults** (disk full, read-only, a ledger deleted or replaced, a truncated WAL) raise
  :class:`StorageFault` after the answers not yet safe are written to a side file
  (``<ledger>.pending.jsonl``, else the temporary folder); the next run imports it before asking.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import sqlite3
import tempfile
from pathlib import Path

import pandas as pd

from .errors import CollectionError, LedgerLocked, StorageFault
from .subjects import Subject

LEDGER_NAME = "ledger.sqlite"
LEDGER_SCHEMA = 2
#: schemas this collector opens: 1 (before --samples) is migrated to 2 when a writer opens it
READABLE_SCHEMAS = (1, 2)
LOCK_SUFFIX = ".lock"
SIDE_SUFFIX = ".pending.jsonl"
CHECKPOINT_ROWS = 500
#: answer status: valid, invalid from the model (follows --reask), invalid because of the transport (asked again)
VALID, INVALID, INVALID_TRANSPORT = "valid", "invalid", "invalid_transport"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS requests (request_key TEXT PRIMARY KEY, provider TEXT NOT NULL, model TEXT NOT NULL,
    settings_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS answers (
    cell TEXT NOT NULL, display TEXT NOT NULL, arm TEXT NOT NULL, pair_id INTEGER NOT NULL, ord INTEGER NOT NULL,
    request_key TEXT NOT NULL, prompt_sha256 TEXT NOT NULL,
    i INTEGER NOT NULL, j INTEGER NOT NULL, patient INTEGER, status TEXT NOT NULL,
    served_model TEXT, response_id TEXT, input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0, cost_usd REAL, n_requests INTEGER NOT NULL DEFAULT 1,
    reused_from TEXT, raw TEXT, created_utc TEXT NOT NULL, sample INTEGER NOT NULL DEFAULT 0,
    p_first REAL, p_outside REAL,
    PRIMARY KEY (cell, display, arm, pair_id, ord, request_key, prompt_sha256, sample));
CREATE INDEX IF NOT EXISTS answers_by_prompt ON answers (request_key, prompt_sha256);
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT, cell TEXT, display TEXT, arm TEXT, pair_id INTEGER, ord INTEGER,
    request_key TEXT, prompt_sha256 TEXT, attempt INTEGER, kind TEXT, outcome TEXT, http_status INTEGER,
    detail TEXT, latency_s REAL, input_tokens INTEGER, output_tokens INTEGER, cost_usd REAL, created_utc TEXT,
    sample INTEGER NOT NULL DEFAULT 0);
"""
ANSWER_COLUMNS = ["cell", "display", "arm", "pair_id", "ord", "request_key", "prompt_sha256", "i", "j", "patient",
                  "status", "served_model", "response_id", "input_tokens", "output_tokens", "cost_usd", "n_requests",
                  "reused_from", "raw", "created_utc", "sample", "p_first", "p_outside"]
#: the answer columns of a schema-1 ledger (copied as sample 0 by the migration)
V1_ANSWER_COLUMNS = ANSWER_COLUMNS[:-3]
ATTEMPT_COLUMNS = ["cell", "display", "arm", "pair_id", "ord", "request_key", "prompt_sha256", "attempt", "kind",
                   "outcome", "http_status", "detail", "latency_s", "input_tokens", "output_tokens", "cost_usd",
                   "created_utc", "sample"]
#: defaults of the columns a side file of an older collector lacks
_ROW_DEFAULTS = {"sample": 0}
# an existing valid answer is kept; an invalid one is replaced by a newer answer (re-ask on resume)
_PUT_ANSWER = (f"INSERT INTO answers ({', '.join(ANSWER_COLUMNS)}) VALUES ({', '.join(':' + c for c in ANSWER_COLUMNS)}) "
               "ON CONFLICT (cell, display, arm, pair_id, ord, request_key, prompt_sha256, sample) DO UPDATE SET "
               + ", ".join(f"{c} = excluded.{c}" for c in ANSWER_COLUMNS[7:] if c not in ("n_requests", "sample"))
               + ", n_requests = answers.n_requests + excluded.n_requests WHERE answers.status != 'valid'")
_PUT_ATTEMPT = (f"INSERT INTO attempts ({', '.join(ATTEMPT_COLUMNS)}) "
                f"VALUES ({', '.join(':' + c for c in ATTEMPT_COLUMNS)})")

_HELD: dict[str, list] = {}  # realpath -> [file object, depth]: the locks this process holds
_HEALTHY: dict[str, tuple] = {}  # realpath -> signature of a ledger as this process checked or left it


def lock_path(path: Path) -> Path:
    return Path(path).with_name(Path(path).name + LOCK_SUFFIX)


def side_paths(path: Path) -> list[Path]:
    """Where answers not yet written are kept: beside the ledger, else in the temporary folder."""
    path = Path(path)
    tag = hashlib.sha256(str(path.absolute()).encode()).hexdigest()[:12]
    return [path.with_name(path.name + SIDE_SUFFIX), Path(tempfile.gettempdir()) / f"proxy-audit-{tag}{SIDE_SUFFIX}"]


@contextlib.contextmanager
def ledger_lock(path: str | os.PathLike):
    """Hold the ledger's exclusive lock (re-entrant in this process); :class:`LedgerLocked` if another holds it."""
    path = Path(path)
    lp = lock_path(path)
    real = os.path.realpath(lp)
    held = _HELD.get(real)
    if held is not None:
        held[1] += 1
        try:
            yield
        finally:
            held[1] -= 1
        return
    lp.parent.mkdir(parents=True, exist_ok=True)
    fh = open(lp, "a+")
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.seek(0)
        holder = fh.read().strip() or "unknown"
        fh.close()
        raise LedgerLocked(f"ledger {path} is in use by another collector (pid {holder}); one writer per ledger: "
                           f"wait for it to finish, or give another --out/--ledger") from None
    fh.seek(0)
    fh.truncate()
    fh.write(f"{os.getpid()}\n")
    fh.flush()
    _HELD[real] = [fh, 1]
    try:
        yield
    finally:
        _HELD.pop(real, None)
        with contextlib.suppress(OSError):
            fh.seek(0)
            fh.truncate()
        fh.close()  # closing releases the lock; the (empty) lock file stays: removing it would race


def _signature(path: Path) -> tuple:
    """Size and modification time of a ledger and its WAL (what changes when anyone writes it)."""
    out = []
    for p in (path, path.with_name(path.name + "-wal")):
        try:
            st = p.stat()
            out.append((st.st_ino, st.st_size, st.st_mtime_ns))
        except FileNotFoundError:
            out.append(None)
    return tuple(out)


def _known_healthy(path: Path) -> None:
    """Remember a ledger as healthy as this process left it (checked or closed by us)."""
    _HEALTHY[os.path.realpath(path)] = _signature(path)


def check_ledger(path: Path) -> None:
    """Raise :class:`CollectionError` unless ``path`` is absent or a healthy ledger (opened read-only).

    ``PRAGMA quick_check`` reads the whole file, so a ledger this process checked or closed and that
    nobody wrote since is not checked again (the replay of 145 cells into one ledger)."""
    path = Path(path)
    if not path.exists():
        return
    if not path.is_file():
        raise CollectionError(f"ledger {path} is not a file")
    if _HEALTHY.get(os.path.realpath(path)) == _signature(path):
        return
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            ok = con.execute("PRAGMA quick_check").fetchone()[0]
            version = con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        finally:
            con.close()
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise LedgerLocked(f"ledger {path} is in use by another collector ({exc}); one writer per ledger") from None
        raise CollectionError(f"ledger {path} is corrupted or not a collection ledger ({exc}); "
                              f"move it aside to start a new one") from None
    except sqlite3.Error as exc:
        raise CollectionError(f"ledger {path} is corrupted or not a collection ledger ({exc}); "
                              f"move it aside to start a new one") from None
    if ok != "ok" or version is None or int(version[0]) not in READABLE_SCHEMAS:
        raise CollectionError(f"ledger {path} is corrupted or not a collection ledger "
                              f"(check: {ok}, schema: {version}); move it aside to start a new one")
    _known_healthy(path)


def migrate(con: sqlite3.Connection) -> bool:
    """Migrate a schema-1 ledger to schema 2 in one transaction: answers gain ``sample`` (0 for every
    existing answer, now part of the key), ``p_first`` and ``p_outside``; attempts gain ``sample``.
    Returns whether it migrated (a new or current ledger is left alone)."""
    has_meta = con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
    version = con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() if has_meta else None
    if version is None or int(version[0]) != 1:
        return False
    cols = ", ".join(V1_ANSWER_COLUMNS)
    con.execute("BEGIN IMMEDIATE")
    try:
        con.execute("ALTER TABLE answers RENAME TO answers_v1")
        con.execute("DROP INDEX IF EXISTS answers_by_prompt")
        for stmt in _SCHEMA.split(";"):
            if "TABLE IF NOT EXISTS answers" in stmt or "INDEX IF NOT EXISTS answers_by_prompt" in stmt:
                con.execute(stmt)
        con.execute(f"INSERT INTO answers ({cols}) SELECT {cols} FROM answers_v1")
        con.execute("DROP TABLE answers_v1")
        con.execute("ALTER TABLE attempts ADD COLUMN sample INTEGER NOT NULL DEFAULT 0")
        con.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(LEDGER_SCHEMA),))
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
    return True


def answer_keys(con: sqlite3.Connection, key: str) -> set[tuple]:
    """The :attr:`analysis.collection.jobs.Job.ledger_key` of every answer stored under a request key
    (a schema-1 ledger, read before its migration, holds sample 0 only)."""
    cols = {r[1] for r in con.execute("PRAGMA table_info(answers)")}
    sample = "sample" if "sample" in cols else "0"
    return set(con.execute(f"SELECT cell, display, arm, pair_id, ord, prompt_sha256, {sample} FROM answers "
                           "WHERE request_key = ?", (key,)).fetchall())


def _storage_words(exc: BaseException) -> str:
    s = str(exc).lower()
    if "full" in s or "no space" in s or "too large" in s:
        return "the disk is full"
    if "readonly" in s or "read-only" in s or "permission" in s:
        return "it is read-only"
    return f"a storage error ({exc})"


class Ledger:
    """Persisted answers and the log of every request attempt (SQLite in WAL mode).

    Only the thread that opened the ledger writes to it; each :meth:`put` is one transaction,
    committed before it returns (``synchronous=FULL`` when ``durable``). Public API for other
    collectors (batch, audit): :meth:`put` (answers and attempt logs), :meth:`mark_attempts`,
    :meth:`answers`, :meth:`attempts`, :meth:`todo_keys`, :meth:`transaction`.
    """

    def __init__(self, path: str | os.PathLike, durable: bool = True):
        self.path = Path(path)
        check_ledger(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.con = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        self.con.execute("PRAGMA journal_mode=WAL")
        self.con.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
        self.con.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints are the ledger's own (see put)
        self.migrated = migrate(self.con)
        self.con.executescript(_SCHEMA)  # idempotent (CREATE ... IF NOT EXISTS)
        with self.transaction():
            self.con.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(LEDGER_SCHEMA),))
        self.fault: StorageFault | None = None
        self._since_checkpoint: list[tuple[list[dict], list[dict]]] = []
        self._rows_since = 0
        self.checkpoint()
        st = os.stat(self.path)
        self._identity = (st.st_dev, st.st_ino)
        self.imported = self.import_side_files()

    @property
    def wal(self) -> Path:
        return self.path.with_name(self.path.name + "-wal")

    @contextlib.contextmanager
    def transaction(self):
        self.con.execute("BEGIN IMMEDIATE")
        try:
            yield self.con
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    def close(self) -> None:
        if self.fault is None:
            with contextlib.suppress(sqlite3.Error, OSError):
                self.checkpoint()
        self.con.close()
        if self.fault is None:
            _known_healthy(self.path)

    def checkpoint(self) -> None:
        """Move the WAL into the database (TRUNCATE) and forget the rows kept for a WAL fault."""
        self.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._wal_size = self._size(self.wal)
        self._since_checkpoint = []
        self._rows_since = 0

    @staticmethod
    def _size(p: Path) -> int:
        try:
            return p.stat().st_size
        except FileNotFoundError:
            return -1

    def register_request(self, key: str, subject: Subject, settings_json: str) -> None:
        with self.transaction():
            self.con.execute("INSERT OR IGNORE INTO requests VALUES (?, ?, ?, ?)",
                             (key, subject.provider, subject.model, settings_json))

    def answers(self, cell: str, display: str, key: str) -> pd.DataFrame:
        """Persisted answers of one cell and request key (every prompt SHA)."""
        return pd.read_sql_query(
            "SELECT * FROM answers WHERE cell = ? AND display = ? AND request_key = ?", self.con,
            params=(cell, display, key))

    def answer_attempts(self, cell: str, display: str, key: str) -> dict[tuple, int]:
        """Answers received (attempts of kind ``answer``) per job ``(arm, pair_id, ord, prompt_sha256, sample)``."""
        rows = self.con.execute(
            "SELECT arm, pair_id, ord, prompt_sha256, sample, COUNT(*) FROM attempts WHERE cell = ? AND display = ? "
            "AND request_key = ? AND kind = 'answer' GROUP BY arm, pair_id, ord, prompt_sha256, sample",
            (cell, display, key)).fetchall()
        return {r[:5]: int(r[5]) for r in rows}

    def answer_for_prompt(self, key: str, sha: str, sample: int = 0) -> dict | None:
        """Any persisted valid-or-model answer to this exact prompt and sample index under this request key
        (for reuse: sample s of one job is copied only into sample s of another)."""
        cur = self.con.execute("SELECT * FROM answers WHERE request_key = ? AND prompt_sha256 = ? AND sample = ? "
                               "AND reused_from IS NULL AND status != ? ORDER BY created_utc LIMIT 1",
                               (key, sha, int(sample), INVALID_TRANSPORT))
        row = cur.fetchone()
        return None if row is None else dict(zip([d[0] for d in cur.description], row))

    # -- writing -------------------------------------------------------------------------------
    def _check_identity(self) -> None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            raise StorageFault(f"ledger {self.path} was deleted during the run") from None
        if (st.st_dev, st.st_ino) != self._identity:
            raise StorageFault(f"ledger {self.path} was replaced during the run")
        wal = self._size(self.wal)
        if wal < self._wal_size:
            raise StorageFault(f"the ledger's WAL {self.wal} was truncated or deleted during the run")

    def put(self, answers: list[dict], attempts: list[dict]) -> int:
        """Persist answers (one per job: a valid answer is kept, an invalid one replaced) and attempt logs.

        Returns the answer rows added or replaced. On a storage fault the rows not yet safe go to the
        side file and :class:`StorageFault` is raised (one line; the next run imports them)."""
        if not answers and not attempts:
            return 0
        if self.fault is not None:  # after a fault nothing more goes to the database: to the side file
            self._rescue(answers, attempts, self.fault, keep=False)
        try:
            self._check_identity()
            with self.transaction():
                before = self.con.total_changes
                if answers:
                    self.con.executemany(_PUT_ANSWER, answers)
                added = self.con.total_changes - before
                if attempts:
                    self.con.executemany(_PUT_ATTEMPT, attempts)
            self._wal_size = self._size(self.wal)
        except StorageFault as exc:
            self._rescue(answers, attempts, exc)
        except (sqlite3.Error, OSError) as exc:
            self._rescue(answers, attempts, StorageFault(f"ledger {self.path} cannot be written: "
                                                         f"{_storage_words(exc)}"))
        self._since_checkpoint.append((answers, attempts))
        self._rows_since += len(answers)
        if self._rows_since >= CHECKPOINT_ROWS:
            try:
                self.checkpoint()
            except (sqlite3.Error, OSError) as exc:
                self._rescue([], [], StorageFault(f"ledger {self.path} cannot be written: {_storage_words(exc)}"))
        return added

    def mark_attempts(self, attempts: list[dict]) -> None:
        """Log attempts without an answer (e.g. a batch submitted, a request that failed)."""
        self.put([], attempts)

    def _rescue(self, answers: list[dict], attempts: list[dict], fault: StorageFault, keep: bool = True) -> None:
        """Write what is not safe in the database to a side file, then raise ``fault`` with where it went."""
        batches = (list(self._since_checkpoint) if keep else []) + [(answers, attempts)]
        if keep and ("deleted" in str(fault) or "replaced" in str(fault)):
            with contextlib.suppress(sqlite3.Error):  # the open connection still reads the lost file
                rows = pd.read_sql_query("SELECT * FROM answers", self.con).to_dict("records")
                logs = pd.read_sql_query("SELECT * FROM attempts", self.con).drop(columns="id").to_dict("records")
                batches = [(rows, logs), (answers, attempts)]
        where = None
        for side in side_paths(self.path):
            try:
                with open(side, "a", encoding="utf-8") as fh:
                    for a, t in batches:
                        if a or t:
                            fh.write(json.dumps({"answers": a, "attempts": t}, default=str) + "\n")
                    fh.flush()
                    os.fsync(fh.fileno())
                where = side
                break
            except OSError:
                continue
        n = sum(len(a) for a, _ in batches)
        kept = f"{n} answers kept in {where}; the next run imports them" if where else \
            f"{n} answers could not be saved anywhere"
        self._since_checkpoint = []
        self.fault = self.fault or fault
        raise StorageFault(f"{fault}; {kept}") from None

    def import_side_files(self) -> int:
        """Import the side files of an earlier run's storage fault (then remove them); returns answers imported."""
        n = 0
        for side in side_paths(self.path):
            if not side.is_file():
                continue
            answers, attempts = [], []
            with open(side, encoding="utf-8") as fh:
                for line in fh:
                    with contextlib.suppress(ValueError):
                        obj = json.loads(line)
                        answers += [{c: a.get(c, _ROW_DEFAULTS.get(c)) for c in ANSWER_COLUMNS}
                                    for a in obj.get("answers", [])]
                        attempts += [{c: t.get(c, _ROW_DEFAULTS.get(c)) for c in ATTEMPT_COLUMNS}
                                     for t in obj.get("attempts", [])]
            with self.transaction():
                if answers:
                    self.con.executemany(_PUT_ANSWER, answers)
                if attempts:
                    self.con.executemany(_PUT_ATTEMPT, attempts)
            self.checkpoint()
            side.unlink()
            n += len(answers)
        return n

    def attempts(self, cell: str | None = None) -> pd.DataFrame:
        q, params = "SELECT * FROM attempts", ()
        if cell is not None:
            q, params = q + " WHERE cell = ?", (cell,)
        return pd.read_sql_query(q, self.con, params=params)
