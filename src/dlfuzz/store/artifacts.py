"""Content-addressed blobs (pickled cases) and atomically written folders."""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np


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


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """Arrays as ``.npz`` bytes that plain numpy reads back: bfloat16, which numpy cannot
    save, is stored as float32 (every bfloat16 value is exact in float32)."""
    safe: dict[str, Any] = {k: (v.astype(np.float32) if v.dtype.name == "bfloat16" else v)
                            for k, v in arrays.items()}
    buf = io.BytesIO()
    np.savez(buf, **safe)
    return buf.getvalue()
