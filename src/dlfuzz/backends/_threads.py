"""How many threads a worker's library may use (one by default: workers run side by side)."""

import os


def worker_threads() -> int:
    try:
        return max(1, int(os.environ.get("DLFUZZ_WORKER_THREADS", "1")))
    except ValueError:
        return 1
