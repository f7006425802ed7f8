-- dlfuzz campaign store. One file per campaign directory: campaign.db (WAL mode).
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
-- One row per finished batch: what resume skips, what the report counts.
CREATE TABLE IF NOT EXISTS batches (
    idx         INTEGER PRIMARY KEY,
    cases       INTEGER NOT NULL,
    findings    INTEGER NOT NULL,
    seconds     REAL NOT NULL,
    finished_at REAL NOT NULL
);
-- One row per bug (first signature of its root cause). status: pending | confirmed | flaky.
-- severity: crash | wrong-result | special-value | inconsistency | validation | performance;
-- root_cause: the key findings of other signatures merge into (triage.root_cause);
-- places: JSON list of {backend, api, dtypes, symptom, count} where it showed.
-- A campaign stored before these three columns existed gets them on open (db.migrate).
CREATE TABLE IF NOT EXISTS bugs (
    id             TEXT PRIMARY KEY,
    signature      TEXT UNIQUE NOT NULL,
    symptom        TEXT NOT NULL,
    guilty_backend TEXT NOT NULL,
    api            TEXT NOT NULL,
    stage          TEXT NOT NULL,
    message        TEXT NOT NULL,
    status         TEXT NOT NULL,
    occurrences    INTEGER NOT NULL DEFAULT 1,
    case_blob      TEXT NOT NULL,
    reduced_blob   TEXT,
    confirm_runs   INTEGER NOT NULL DEFAULT 0,
    confirm_hits   INTEGER NOT NULL DEFAULT 0,
    dir            TEXT,
    details        TEXT NOT NULL DEFAULT '{}',
    created_at     REAL NOT NULL,
    updated_at     REAL NOT NULL,
    severity       TEXT NOT NULL DEFAULT '',
    root_cause     TEXT NOT NULL DEFAULT '',
    places         TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS bugs_root_cause ON bugs(root_cause);
CREATE TABLE IF NOT EXISTS backends (
    name     TEXT PRIMARY KEY,
    version  TEXT NOT NULL,
    cases    INTEGER NOT NULL DEFAULT 0,
    crashes  INTEGER NOT NULL DEFAULT 0,
    timeouts INTEGER NOT NULL DEFAULT 0,
    restarts INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
