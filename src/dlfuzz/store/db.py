"""Transactional campaign store.

Every write is one SQLite transaction in WAL mode, so a campaign killed with SIGKILL at any
instant leaves the database consistent; a bug's folder is written to a temporary name and
renamed into place before its row says it exists, so a row never points to half a folder.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from dlfuzz.errors import UsageError
from dlfuzz.store.artifacts import BlobStore
from dlfuzz.store.lock import CampaignLock

DB_NAME = "campaign.db"
FORMAT = "dlfuzz-campaign/1"
# Counters named ``outcome:BACKEND:STATUS`` count each backend's outcomes by status (the
# campaign adds them per batch; the report stacks them). Campaigns stored before have none.
OUTCOME_COUNTER = "outcome:"
# Counters named ``phase:<part>_ms`` hold the milliseconds the batches spent in each part
# of their work: ``generate``, ``run`` and ``oracle:<name>`` (``findings --stats``).
PHASE_COUNTER = "phase:"
# Columns added to ``bugs`` since format 1 was first written (``Store.migrate``).
_ADDED_COLUMNS = (("severity", "TEXT NOT NULL DEFAULT ''"),
                  ("root_cause", "TEXT NOT NULL DEFAULT ''"),
                  ("places", "TEXT NOT NULL DEFAULT '[]'"))


@dataclass(frozen=True)
class BugRow:
    id: str
    signature: str
    symptom: str
    guilty_backend: str
    api: str
    stage: str
    message: str
    status: str
    occurrences: int
    case_blob: str
    reduced_blob: str | None
    confirm_runs: int
    confirm_hits: int
    dir: str | None
    details: dict[str, Any]
    created_at: float
    updated_at: float
    # Set by triage (``triage.severity``, ``triage.root_cause``); "" in a campaign stored
    # before they existed (readers compute them from the other fields then).
    severity: str = ""
    root_cause: str = ""
    # Where the root cause showed: {backend, api, dtypes, symptom, count} per place.
    places: list[dict[str, Any]] = field(default_factory=list)

    @property
    def confirmed(self) -> bool:
        return self.status == "confirmed"


class Store:
    """The campaign directory: ``campaign.db``, ``blobs/``, ``bugs/``."""

    def __init__(self, root: Path, conn: sqlite3.Connection) -> None:
        self.root = root
        self.conn = conn
        self.blobs = BlobStore(root / "blobs")
        self.bugs_dir = root / "bugs"
        self.lock: CampaignLock | None = None  # held by the one writer (dlfuzz run)
        self.made: Path | None = None  # the folder create() made (None: it existed)

    # ---- opening --------------------------------------------------------------------
    @classmethod
    def create(cls, root: Path, meta: dict[str, Any]) -> Store:
        """A new campaign in ``root`` (new, or an existing empty folder), locked for this
        process. Filesystem trouble is a one-line ``UsageError`` naming the path and the
        OS reason; whatever was made before it is removed again (``discard``)."""
        root = Path(root)
        try:
            if (root / DB_NAME).exists():
                raise UsageError(f"--out {root}: a campaign already exists there; "
                                 f"continue it with --resume {root} or choose another --out")
            if root.exists() and not root.is_dir():
                raise UsageError(f"--out {root}: exists and is not a directory; "
                                 "choose a new or empty directory")
            if root.exists() and any(root.iterdir()):
                raise UsageError(f"--out {root}: directory is not empty and holds no "
                                 f"campaign; choose an empty or new directory")
        except OSError as exc:
            raise _fs_error("--out", root, exc) from None
        made = _first_missing(root)
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            _remove_made(root, made)
            raise _fs_error("--out", root, exc) from None
        # Held: another run is creating this very campaign; its folder is left alone.
        lock = CampaignLock(root, "--out")
        store: Store | None = None
        try:
            store = cls._connect(root)
            store.lock, store.made = lock, made
            with store.conn:
                store.conn.executescript(resources.files("dlfuzz.store").joinpath(
                    "schema.sql").read_text())
                store._put_meta({"format": FORMAT, "created_at": time.time(), **meta})
        except (OSError, sqlite3.Error) as exc:
            if store is not None:
                store.discard()
            else:
                lock.release()
                _remove_made(root, made)
            raise _fs_error("--out", root, exc) from None
        return store

    @classmethod
    def open(cls, root: Path, purpose: str = "DIR", lock: bool = False) -> Store:
        """An existing campaign; ``lock``: as its one writer (``dlfuzz run --resume``)."""
        root = Path(root)
        try:
            if not root.is_dir():
                raise UsageError(f"{purpose} {root}: no such directory")
            if not (root / DB_NAME).is_file():
                raise UsageError(f"{purpose} {root}: not a dlfuzz campaign directory "
                                 f"(no {DB_NAME}); give the --out directory of a `dlfuzz run`")
        except OSError as exc:
            raise _fs_error(purpose, root, exc) from None
        held = CampaignLock(root, purpose) if lock else None
        try:
            store = cls._connect(root)
            fmt = store.meta().get("format")
        except sqlite3.DatabaseError as exc:
            if held is not None:
                held.release()
            if "no such table" in str(exc):  # made, its schema not written yet
                raise UsageError(f"{purpose} {root}: {DB_NAME} holds no campaign yet: a "
                                 f"`dlfuzz run` starting there has not written it (try "
                                 f"again in a moment), or it is not a dlfuzz campaign"
                                 ) from exc
            raise UsageError(f"{purpose} {root}: {DB_NAME} is unreadable ({exc})") from exc
        except OSError as exc:
            if held is not None:
                held.release()
            raise _fs_error(purpose, root, exc) from None
        store.lock = held
        if fmt != FORMAT:
            store.close()
            raise UsageError(f"{purpose} {root}: campaign format {fmt!r} is not {FORMAT!r}")
        try:
            store.migrate()
        except sqlite3.Error as exc:
            store.close()
            raise UsageError(f"{purpose} {root}: cannot add the severity/root-cause columns "
                             f"to {DB_NAME} ({exc}); open it once where it is writable"
                             ) from exc
        return store

    def migrate(self) -> None:
        """Add the columns a campaign of an earlier dlfuzz lacks (severity, root_cause,
        places), empty: readers fill them from the stored fields. Idempotent."""
        have = {r["name"] for r in self.conn.execute("PRAGMA table_info(bugs)")}
        missing = [(c, d) for c, d in _ADDED_COLUMNS if c not in have]
        if not missing:
            return
        with self._tx():
            for column, decl in missing:
                self.conn.execute(f"ALTER TABLE bugs ADD COLUMN {column} {decl}")
            self.conn.execute("CREATE INDEX IF NOT EXISTS bugs_root_cause ON bugs(root_cause)")

    @classmethod
    def _connect(cls, root: Path) -> Store:
        conn = sqlite3.connect(root / DB_NAME, timeout=30, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.row_factory = sqlite3.Row
        return cls(root, conn)

    def close(self) -> None:
        self.conn.close()
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def is_empty(self) -> bool:
        """No batch and no bug recorded yet: nothing a user could want to keep."""
        return (self.last_batch() < 0
                and self.conn.execute("SELECT COUNT(*) FROM bugs").fetchone()[0] == 0)

    def discard(self) -> None:
        """Close and remove what ``create`` made: the folder it created (and parents it
        created), or the contents of the empty folder it was given."""
        self.close()
        _remove_made(self.root, self.made)

    # ---- meta and counters ------------------------------------------------------------
    def _put_meta(self, values: dict[str, Any]) -> None:
        self.conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                              [(k, json.dumps(v)) for k, v in values.items()])

    def set_meta(self, **values: Any) -> None:
        with self._tx():
            self._put_meta(values)

    def meta(self) -> dict[str, Any]:
        return {r["key"]: json.loads(r["value"])
                for r in self.conn.execute("SELECT key, value FROM meta")}

    def counters(self) -> dict[str, int]:
        return {r["name"]: r["value"] for r in self.conn.execute("SELECT * FROM counters")}

    # ---- batches ------------------------------------------------------------------------
    def finish_batch(self, idx: int, cases: int, findings: int, seconds: float,
                     counters: dict[str, int], backends: dict[str, dict[str, Any]]) -> None:
        """Record a finished batch, its counters and backend health in one transaction."""
        with self._tx():
            self.conn.execute("INSERT OR REPLACE INTO batches VALUES (?, ?, ?, ?, ?)",
                              (idx, cases, findings, seconds, time.time()))
            for name, value in counters.items():
                self.conn.execute(
                    "INSERT INTO counters(name, value) VALUES (?, ?) ON CONFLICT(name) "
                    "DO UPDATE SET value = value + excluded.value", (name, int(value)))
            for name, row in backends.items():
                self.conn.execute(
                    "INSERT INTO backends(name, version, cases, crashes, timeouts, restarts) "
                    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET "
                    "version = excluded.version, cases = cases + excluded.cases, "
                    "crashes = crashes + excluded.crashes, "
                    "timeouts = timeouts + excluded.timeouts, "
                    "restarts = restarts + excluded.restarts",
                    (name, row["version"], row["cases"], row["crashes"], row["timeouts"],
                     row["restarts"]))

    def last_batch(self) -> int:
        row = self.conn.execute("SELECT MAX(idx) AS m FROM batches").fetchone()
        return -1 if row["m"] is None else int(row["m"])

    def totals(self) -> dict[str, float]:
        row = self.conn.execute("SELECT COUNT(*) AS n, COALESCE(SUM(cases), 0) AS cases, "
                                "COALESCE(SUM(seconds), 0) AS seconds FROM batches").fetchone()
        return {"batches": row["n"], "cases": row["cases"], "seconds": row["seconds"]}

    def backend_rows(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.conn.execute("SELECT * FROM backends ORDER BY name")]

    # ---- bugs -------------------------------------------------------------------------
    def bug_by_signature(self, signature: str) -> BugRow | None:
        row = self.conn.execute("SELECT * FROM bugs WHERE signature = ?", (signature,)
                                ).fetchone()
        return _bug(row) if row else None

    def bug(self, bug_id: str) -> BugRow | None:
        row = self.conn.execute("SELECT * FROM bugs WHERE id = ?", (bug_id,)).fetchone()
        return _bug(row) if row else None

    def bugs(self, status: str | None = None) -> list[BugRow]:
        if status is None:
            rows = self.conn.execute("SELECT * FROM bugs ORDER BY created_at")
        else:
            rows = self.conn.execute("SELECT * FROM bugs WHERE status = ? ORDER BY created_at",
                                     (status,))
        return [_bug(r) for r in rows]

    def add_bug(self, row: BugRow) -> None:
        with self._tx():
            self.conn.execute(
                "INSERT INTO bugs(id, signature, symptom, guilty_backend, api, stage, message, "
                "status, occurrences, case_blob, reduced_blob, confirm_runs, confirm_hits, dir, "
                "details, created_at, updated_at, severity, root_cause, places) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (row.id, row.signature, row.symptom, row.guilty_backend, row.api, row.stage,
                 row.message, row.status, row.occurrences, row.case_blob, row.reduced_blob,
                 row.confirm_runs, row.confirm_hits, row.dir, json.dumps(row.details),
                 row.created_at, row.updated_at, row.severity, row.root_cause,
                 json.dumps(row.places)))

    def confirmed_bug_by_root_cause(self, root_cause: str) -> BugRow | None:
        """The first confirmed bug of ``root_cause`` (None for "" or none yet)."""
        if not root_cause:
            return None
        row = self.conn.execute(
            "SELECT * FROM bugs WHERE root_cause = ? AND status = 'confirmed' "
            "ORDER BY created_at LIMIT 1", (root_cause,)).fetchone()
        return _bug(row) if row else None

    def add_place(self, bug_id: str, place: dict[str, Any], severity: str = "",
                  rank: dict[str, int] | None = None, count: int = 1) -> None:
        """``count`` more occurrences of bug ``bug_id`` at ``place`` (backend, api,
        dtypes, symptom): its count grows, or it is appended. ``severity`` replaces the
        bug's when ``rank`` ranks it more severe (lower), so a crash place makes the bug
        a crash."""
        key = ("backend", "api", "dtypes", "symptom")
        with self._tx():
            row = self.conn.execute("SELECT places, severity FROM bugs WHERE id = ?",
                                    (bug_id,)).fetchone()
            if row is None:
                return
            places = json.loads(row["places"] or "[]")
            for p in places:
                if all(p.get(k) == place.get(k) for k in key):
                    p["count"] = int(p.get("count", 1)) + count
                    break
            else:
                places.append({**{k: place.get(k, "") for k in key}, "count": count})
            new = row["severity"]
            if severity and rank is not None and rank.get(severity, 99) < rank.get(new, 99):
                new = severity
            self.conn.execute("UPDATE bugs SET places = ?, severity = ?, "
                              "occurrences = occurrences + ?, updated_at = ? WHERE id = ?",
                              (json.dumps(places), new, count, time.time(), bug_id))

    def update_bug(self, bug_id: str, **fields: Any) -> None:
        if "details" in fields:
            fields["details"] = json.dumps(fields["details"])
        if "places" in fields:
            fields["places"] = json.dumps(fields["places"])
        fields["updated_at"] = time.time()
        cols = ", ".join(f"{k} = ?" for k in fields)
        with self._tx():
            self.conn.execute(f"UPDATE bugs SET {cols} WHERE id = ?", (*fields.values(), bug_id))

    def count_occurrence(self, bug_id: str) -> None:
        with self._tx():
            self.conn.execute("UPDATE bugs SET occurrences = occurrences + 1 WHERE id = ?",
                              (bug_id,))

    # ---- helpers ----------------------------------------------------------------------
    def _tx(self) -> _Transaction:
        return _Transaction(self.conn)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")


def _bug(row: sqlite3.Row) -> BugRow:
    data = dict(row)
    data["details"] = json.loads(data["details"] or "{}")
    data["places"] = json.loads(data.get("places") or "[]")
    return BugRow(**data)


def _fs_error(purpose: str, root: Path, exc: OSError | sqlite3.Error) -> UsageError:
    """One line for a filesystem failure: the path, the OS reason and the fix."""
    if isinstance(exc, OSError):
        path = exc.filename or root
        reason = exc.strerror or str(exc)
    else:
        path, reason = root / DB_NAME, str(exc)
    return UsageError(f"{purpose} {root}: cannot write the campaign there ({path}: {reason}); "
                      "choose a directory you can create and write")


def _first_missing(root: Path) -> Path | None:
    """The outermost folder of ``root`` (itself included) that does not exist yet."""
    missing = None
    for folder in (root, *root.parents):
        if folder.exists():
            break
        missing = folder
    return missing


def _remove_made(root: Path, made: Path | None) -> None:
    """Undo a failed or abandoned create: remove the folders it made, or empty the folder
    that was empty before. Best effort: an error here must not hide the first one."""
    try:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        elif root.is_dir():
            for child in root.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
    except OSError:
        pass
