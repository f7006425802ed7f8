"""One confirmed bug's folder, as the verbs that run its reproducers need it
(``dlfuzz reproduce``, ``dlfuzz bisect``): the stored row, the campaign's settings and the
folder's ``meta.json``, with one clear error for each way it can be missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dlfuzz.errors import UsageError
from dlfuzz.settings import CampaignSettings
from dlfuzz.store.db import BugRow, Store


def open_bug_folder(directory: Path, bug_id: str
                    ) -> tuple[BugRow, CampaignSettings, Path, dict[str, Any]]:
    """(bug, campaign settings, resolved bug folder, its meta.json)."""
    root = Path(directory).expanduser().resolve()  # scripts run with cwd = their folder
    store = Store.open(root)
    try:
        bug = store.bug(bug_id)
        if bug is None:
            known = ", ".join(b.id for b in store.bugs()) or "none"
            raise UsageError(f"bug {bug_id!r} is not in {directory}; known ids: {known}")
        if not bug.dir:
            raise UsageError(f"bug {bug.id} has no folder ({bug.status}): only confirmed bugs "
                             "get reproducers")
        settings = CampaignSettings.from_json(store.meta()["settings"])
        folder = (store.root / bug.dir).resolve()
    finally:
        store.close()
    meta_path = folder / "meta.json"
    if not meta_path.is_file():
        raise UsageError(f"bug {bug.id}: {meta_path} is missing; the bug folder is incomplete "
                         "(re-run the campaign's triage or restore the folder)")
    return bug, settings, folder, json.loads(meta_path.read_text())
