"""Writing a file so a reader sees the old content or the new, never half of it: the bytes go
to a temporary file beside the target, which is then renamed over it (a rename within one
folder is atomic on POSIX). The report, the batch's state and the library cache all write
this way."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_atomic(path: Path, data: bytes | str | dict[str, Any] | list[Any], *, durable: bool = True) -> None:
    """Write `data` (bytes, text, or JSON-able: written as indented UTF-8 JSON) to `path`.
    `durable` flushes the bytes to disk before the rename, so a crash of the machine leaves
    the old file rather than an empty one; the library cache's many blobs skip it (they are
    checked against their hashes and fetched again if lost)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, (dict, list)):
        data = json.dumps(data, ensure_ascii=False, indent=2)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
