"""Severity, root cause and places of a bug stored before triage recorded them.

A campaign written by an earlier dlfuzz has bug rows without these fields. Readers
(``findings``, the report) and a resumed campaign fill them from what the row keeps: the
symptom, API, backend, message and details, and the case as detected (its blob), whose
inputs tell whether special values were involved. Without sibling findings a key names
the backend's library, so the execution modes of one library share it.
"""

from __future__ import annotations

import pickle
from typing import Any

from dlfuzz.store.db import BugRow, Store
from dlfuzz.triage.root_cause import stored_root_cause
from dlfuzz.triage.severity import severity_of


def detected_case(store: Store, bug: BugRow) -> Any:
    """The case as detected (None when its blob is missing or unreadable)."""
    try:
        return store.blobs.get(bug.case_blob)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return None


def filled(store: Store, bug: BugRow) -> tuple[str, str, list[dict[str, Any]]]:
    """(severity, root cause, places) of ``bug``: its own, or computed from the row."""
    if bug.severity and bug.root_cause and bug.places:
        return bug.severity, bug.root_cause, bug.places
    case = None if bug.severity and bug.root_cause else detected_case(store, bug)
    severity = bug.severity or severity_of(bug.symptom, bug.details, case)
    key = bug.root_cause or stored_root_cause(bug.guilty_backend, bug.api, bug.symptom,
                                              bug.message, bug.details, severity)
    places = bug.places or [{"backend": bug.guilty_backend, "api": bug.api,
                             "dtypes": "?", "symptom": bug.symptom,
                             "count": bug.occurrences}]
    return severity, key, places
