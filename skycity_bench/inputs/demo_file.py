"""Reading a candidate demo file, with one clear line for each way it can be wrong."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from skycity_bench.common.errors import UserError

MAX_BYTES = 64 * 1024 * 1024
_HTMLISH = re.compile(rb"<\s*(!doctype\s+html|html|head|body|script|canvas|div|svg|style|meta|title)\b", re.I)


@dataclass
class Demo:
    """One candidate demo file: where it is, its bytes and their hash, and the URL the bench
    serves it at (set once the demo server runs)."""

    path: Path
    html: bytes
    sha256: str
    url: str = ""

    @property
    def text(self) -> str:
        return self.html.decode("utf-8", errors="replace")


def load_demo(path: Path | str) -> Demo:
    """The demo file at `path`, or a UserError in one line saying what is wrong with it."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"{p}: no such file")
    if p.is_dir():
        raise UserError(f"{p}: is a directory, expected one HTML file")
    if not p.is_file():
        raise UserError(f"{p}: not a regular file")
    size = p.stat().st_size
    if size == 0:
        raise UserError(f"{p}: the file is empty")
    if size > MAX_BYTES:
        raise UserError(f"{p}: {size / 1e6:.0f} MB is too large for one demo file (limit {MAX_BYTES // 2**20} MiB)")
    try:
        html = p.read_bytes()
    except OSError as e:
        raise UserError(f"{p}: cannot read: {e.strerror}") from None
    head = html[:65536]
    if b"\x00" in head[:4096] or not _HTMLISH.search(head):
        raise UserError(f"{p}: not an HTML file (no HTML markup found)")
    return Demo(path=p.resolve(), html=html, sha256=hashlib.sha256(html).hexdigest())


def candidate_id(sha256: str) -> str:
    """Anonymous and stable: the same file always gets the same id, and it says nothing of
    where the file came from."""
    return "c-" + sha256[:12]
