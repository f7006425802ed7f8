"""The campaign store: clear errors for foreign directories, transactional rows."""

import sqlite3
import time

import pytest

from dlfuzz.errors import UsageError
from dlfuzz.store.db import BugRow, Store


def _row(sig: str) -> BugRow:
    now = time.time()
    return BugRow(id="b1", signature=sig, symptom="crash", guilty_backend="torch", api="x",
                  stage="call", message="m", status="confirmed", occurrences=1, case_blob="k",
                  reduced_blob=None, confirm_runs=2, confirm_hits=2, dir=None,
                  details={"a": 1}, created_at=now, updated_at=now)


def test_create_refuses_existing_or_foreign_directories(tmp_path):
    Store.create(tmp_path / "c", {"settings": {}}).close()
    with pytest.raises(UsageError, match="--resume"):
        Store.create(tmp_path / "c", {})
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "file").write_text("x")
    with pytest.raises(UsageError, match="not empty"):
        Store.create(tmp_path / "junk", {})
    with pytest.raises(UsageError, match="not a dlfuzz campaign"):
        Store.open(tmp_path / "junk")
    with pytest.raises(UsageError, match="no such directory"):
        Store.open(tmp_path / "missing")


def test_a_database_without_its_schema_yet_is_explained(tmp_path):
    """Between a starting run's creating campaign.db and writing its tables, a reader
    (``findings``, ``status``) is told so, not "no such table: meta"."""
    (tmp_path / "c").mkdir()
    sqlite3.connect(tmp_path / "c" / "campaign.db").execute("PRAGMA user_version=0").close()
    with pytest.raises(UsageError, match=r"campaign\.db holds no campaign yet.*try again"):
        Store.open(tmp_path / "c")


def test_bugs_batches_counters_round_trip(tmp_path):
    store = Store.create(tmp_path / "c", {"settings": {"seed": 3}})
    store.add_bug(_row("sig"))
    store.count_occurrence("b1")
    store.finish_batch(0, 10, 1, 0.5, {"suspicious": 2},
                       {"torch": {"version": "v", "cases": 10, "crashes": 1, "timeouts": 0,
                                  "restarts": 1}})
    store.finish_batch(1, 5, 0, 0.5, {"suspicious": 1},
                       {"torch": {"version": "v", "cases": 5, "crashes": 0, "timeouts": 0,
                                  "restarts": 0}})
    store.close()
    again = Store.open(tmp_path / "c")
    assert again.bug_by_signature("sig").occurrences == 2
    assert again.bug("b1").details == {"a": 1}
    assert again.last_batch() == 1 and again.totals()["cases"] == 15
    assert again.counters()["suspicious"] == 3
    assert again.backend_rows()[0]["cases"] == 15
    assert again.meta()["settings"] == {"seed": 3}


def test_blob_store_is_content_addressed(tmp_path):
    store = Store.create(tmp_path / "c", {})
    k1 = store.blobs.put({"a": 1})
    assert store.blobs.put({"a": 1}) == k1 and store.blobs.get(k1) == {"a": 1}
