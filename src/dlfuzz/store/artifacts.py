"""Content-addressed blobs (pickled cases) and atomically written folders."""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import tempfile
from pathlib import Path
from typing import Any


class BlobStore:
    """``blobs/ab/abcdef….pkl``: written once, named by the hash of their bytes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, obj: Any) -> str:
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        key = hashlib.blake2b(data, digest_size=16).hexdigest()
        path = self.root / key[:2] / f"{key}.pkl"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data)
        return key

    def get(self, key: str) -> Any:
        path = self.root / key[:2] / f"{key}.pkl"
        with path.open("rb") as f:
            return pickle.load(f)


def write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def replace_dir(staging: Path, final: Path) -> None:
    """Move a fully written folder into place (the old one, if any, goes first)."""
    if final.exists():
        trash = final.with_name(f".old-{final.name}")
        shutil.rmtree(trash, ignore_errors=True)
        os.replace(final, trash)
        os.replace(staging, final)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.replace(staging, final)
