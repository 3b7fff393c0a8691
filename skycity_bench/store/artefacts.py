"""What the store makes once, when a run is imported, so that serving
reviewers never parses, masks or resizes anything per request:

- the reviewer-facing report (`masked_json`): common/blinding.py's rules (the candidate's own
  label(s) as whole words, in values not keys, its full file hash, the candidate block cut to
  the anonymous id), compact JSON;
- the run's small facts (`items_collected`, `sheet_json`): how many items the run collected
  (status other than untested: the run choice prefers the complete run) and what the sheet
  needs of it (items and environment of the masked report, tens of kB, not megabytes);
- thumbnails of its images (THUMB_WIDTH wide WebP): a candidate page shows these and opens the
  full image on click (a page of full 1920x1080 PNGs would weigh ~25 MB).

These are pure functions of a report / an image: the store calls them outside its write
transaction (hashing and resizing must not hold the writers' lock), and again to fill in runs
stored before they existed (ReviewStore._backfill).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from skycity_bench.common import blinding

# 480 px: the candidate page shows keyframes and plots at most ~480 CSS px wide (beside an
# item); a 1920x1080 PNG keyframe (~1-2 MB) becomes a ~15-40 kB WebP.
THUMB_WIDTH = 480
THUMB_QUALITY = 80  # WebP quality: plots' lines and text stay legible at 480 px
THUMB_MIME = "image/webp"
THUMB_MAX_SOURCE_BYTES = 64 << 20  # a larger "image" is not decoded (a hostile run folder)
THUMB_SOURCES = ("image/png", "image/jpeg", "image/webp", "image/bmp")  # what OpenCV decodes
THUMB_MAX_PIXELS = 50_000_000  # a PNG claiming more (a few kB can) is not decoded: memory


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


@dataclass(frozen=True)
class BlindRun:
    masked_json: str  # the report as reviewers see it
    items_collected: int  # items whose status is not untested
    sheet_json: str  # {"items": ..., "environment": ...} of the masked report


def items_collected(report: dict[str, Any]) -> int:
    """Items the run collected: every item the report holds whose status is not `untested`
    (a probe not run, failed or unreadable leaves its items untested; manual items say
    `review` in every run, so runs differ by what their probes gathered)."""
    items = report.get("items") or {}
    return sum(1 for it in items.values() if isinstance(it, dict) and it.get("status") != "untested")


def blind_run(
    report: dict[str, Any],
    labels: blinding.Labels = None,
    sha256: Optional[str] = None,
    public_id: Optional[str] = None,
) -> BlindRun:
    """The import-time artefacts of one report: masked with its own label (report's
    candidate.label) plus `labels` (other names the store knows the candidate by) and the
    candidate's hash; `public_id`: the store's random id, in place of the bench's."""
    masked = blinding.blind_report(report, labels, sha256, public_id)
    sheet = {"items": masked.get("items") or {}, "environment": masked.get("environment") or {}}
    return BlindRun(_compact(masked), items_collected(report), _compact(sheet))


@dataclass(frozen=True)
class Thumb:
    width: int
    height: int
    mime: str
    data: bytes


def thumbnail(data: bytes, width: int = THUMB_WIDTH) -> Optional[Thumb]:
    """A WebP at most `width` px wide (never enlarged) of an image's bytes, transparency
    kept; None when the bytes are not an image OpenCV decodes (the original is served)."""
    import cv2
    import numpy as np

    if not data or len(data) > THUMB_MAX_SOURCE_BYTES or _png_pixels(data) > THUMB_MAX_PIXELS:
        return None
    try:
        img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    except cv2.error:
        return None
    if img is None or img.ndim not in (2, 3) or img.shape[0] == 0 or img.shape[1] == 0:
        return None
    if img.dtype != np.uint8:  # 16-bit PNG: to 8 bits
        img = cv2.convertScaleAbs(img, alpha=255.0 / max(1, int(img.max())))
    if img.ndim == 3 and img.shape[2] not in (3, 4):
        img = img[:, :, :3]
    h, w = img.shape[:2]
    if w > width:
        h, w = max(1, round(h * width / w)), width
        img = cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".webp", img, [cv2.IMWRITE_WEBP_QUALITY, THUMB_QUALITY])
    return Thumb(w, h, THUMB_MIME, buf.tobytes()) if ok else None


def _png_pixels(data: bytes) -> int:
    """Width x height a PNG's header claims (0 for anything else): checked before decoding."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24:
        return 0
    return int.from_bytes(data[16:20], "big") * int.from_bytes(data[20:24], "big")


def thumbnail_file(path: Path, mime: str) -> Optional[Thumb]:
    if mime not in THUMB_SOURCES:
        return None
    try:
        if path.stat().st_size > THUMB_MAX_SOURCE_BYTES:
            return None
        return thumbnail(path.read_bytes())
    except OSError:
        return None
