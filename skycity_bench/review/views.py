"""What a reviewer sees of one candidate, built from the store's blind run: the recording,
keyframes, and beside each item the bench's evidence (its figures, its plots and frames,
the measurement section it bears on). Nothing here knows the candidate's label."""

from __future__ import annotations

import json
from typing import Any, Optional

from skycity_bench.inputs.rubric import Rubric
from skycity_bench.judging.sheet_totals import Review
from skycity_bench.reporting.html_report import is_keyframe
from skycity_bench.reporting.realtime_view import ITEM as REALTIME_ITEM
from skycity_bench.reporting.realtime_view import realtime_view
from skycity_bench.review.chapters import chapters as chapter_marks
from skycity_bench.review.chapters import item_moments
from skycity_bench.store.artefacts import THUMB_WIDTH

# Which report measurement section sits beside which item family (report.md): timeline
# findings beside camera.*, behaviour figures beside density.*, and so on.
MEASUREMENTS_FOR = {
    "camera": "timeline",
    "density": "density",
    "shops": "shops",
    "smoothness": "smoothness",
    "packaging": "playback",
}
MAX_EVIDENCE_CHARS = 2500
IMAGE = ("image/",)
# the original is wider than a full-width thumbnail (its exact width is not kept): any figure
# above THUMB_WIDTH makes the browser take it for a slot the thumbnail cannot fill
FULL_W = 4 * THUMB_WIDTH


def _strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def _short_json(value: Any) -> str:
    """The value as indented JSON, cut after MAX_EVIDENCE_CHARS characters: encoding stops
    once past the cut (an evidence or measurement section may be far longer than what is
    shown of it), the text the same as json.dumps's cut there."""
    chunks: list[str] = []
    size = 0
    for chunk in json.JSONEncoder(ensure_ascii=False, indent=1, default=str).iterencode(value):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_EVIDENCE_CHARS:
            break
    text = "".join(chunks)
    return text if len(text) <= MAX_EVIDENCE_CHARS else text[:MAX_EVIDENCE_CHARS] + "\n…"


def _summary(ev: dict) -> str:
    for k in ("reason", "summary", "note"):
        if ev.get(k):
            return str(ev[k])
    return ""


def image_urls(f: dict) -> dict:
    """An image's `src` and `srcset`: its thumbnail, made at import, where
    there is one, and the full file offered for a slot wider than the thumbnail (a plot at the
    column's width stays readable); the link around the image opens the full file."""
    full = f"/files/{f['id']}"
    tw = f.get("thumb_width")
    if not tw:
        return {"src": full, "srcset": ""}
    small = f"/thumbs/{f['id']}"
    return {"src": small, "srcset": f"{small} {tw}w, {full} {FULL_W}w" if tw >= THUMB_WIDTH else ""}


def video_time(raw: Any) -> Optional[float]:
    """A video position in seconds from a query or form value ("12.5"), rounded to 0.01 s;
    None for anything else (not a number, negative, beyond a day)."""
    try:
        t = float(str(raw))
    except (TypeError, ValueError):
        return None
    return round(t, 2) if 0 <= t <= 86400 else None


def candidate_view(rubric: Rubric, cid: str, run: Optional[dict], mine: list[Review], wanted: list[str]) -> dict:
    """The template's data. `mine`: this reviewer's standing reviews; `wanted`: items on which
    a third reviewer is asked (told only to reviewers who have not scored them)."""
    report = (run or {}).get("report") or {}
    files = _RunFiles(
        [{**f, **image_urls(f)} if f["mime"].startswith(IMAGE) else f for f in (run or {}).get("files") or []]
    )
    rt = realtime_view(report, files.url)
    # chapter marks on the recording and each item's moments in it (chapters.py): a reviewer
    # jumps to the phases, the dense window, the shop cards, the city name
    chap = chapter_marks(report)
    videos = _videos(files.all, chap["recording"], rt)
    moments = item_moments(report, chap["marks"]) if videos else {}
    own = {(r.item_id, r.kind): r for r in mine}
    # each measurement section once per page (several items of a family show the same one)
    measurements = report.get("measurements") or {}
    shown = {s: _short_json(measurements[s]) for s in set(MEASUREMENTS_FOR.values()) if s in measurements}
    rows = [
        {
            "row": row,
            "lines": [_line(rubric, iid, report, files, own, wanted, rt, moments, shown) for iid in row.items],
        }
        for row in rubric.row_groups()
    ]
    others = [f for f in files.all if f not in videos and f not in files.keyframes and f["name"] not in files.used]
    return {
        "cid": cid,
        "rows": rows,
        "videos": videos,
        "keyframes": files.keyframes,
        "other_files": others,
        "chapters": chap if videos else {**chap, "marks": []},
        "run_id": (run or {}).get("run_id"),
        "environment": report.get("environment") or {},
        "warnings": report.get("warnings") or [],
    }


class _RunFiles:
    """The run's files by name, and where each image is shown: each image once (a page that
    repeated keyframes and plots for every item citing them would weigh tens of MB):
    keyframes in their strip, a plot beside the first item that cites it; a later item citing
    it links back there."""

    def __init__(self, files: list[dict]):
        self.all = files
        self.by_name = {f["name"]: f for f in files}
        self.keyframes = sorted(
            (f for f in files if f["mime"].startswith(IMAGE) and is_keyframe(f["name"])),
            key=lambda f: ("contact_sheet" not in f["name"], f["name"]),
        )
        self.shown: dict[str, str] = {f["name"]: "keyframes" for f in self.keyframes}
        self.used: set[str] = set()  # files some item's evidence names

    def url(self, name: str) -> Optional[str]:
        return f"/files/{self.by_name[name]['id']}" if name in self.by_name else None

    def cited(self, iid: str, ev: dict) -> dict:
        """The files an item's evidence names: images new on the page (shown beside the
        item), images shown before (`at`: where), and the other files."""
        ev_files = [self.by_name[s] for s in dict.fromkeys(_strings(ev)) if s in self.by_name]
        self.used.update(f["name"] for f in ev_files)
        images = [f for f in ev_files if f["mime"].startswith(IMAGE)]
        fresh = [f for f in images if f["name"] not in self.shown]
        seen = [{**f, "at": self.shown[f["name"]]} for f in images if f["name"] in self.shown]
        self.shown.update((f["name"], f"item-{iid}") for f in fresh)
        return {
            "images": fresh,
            "images_seen": seen,
            "other_files": [f for f in ev_files if not f["mime"].startswith(IMAGE)],
        }


def _videos(files: list[dict], recording_name: Optional[str], rt: Optional[dict]) -> list[dict]:
    """The videos beside the page (the real-time capture sits beside its item), the recording
    the chapter marks belong to first: the recording probe's file, else the first video."""
    videos = [f for f in files if f["mime"].startswith("video/") and not (rt and f["name"] == rt["name"])]
    recording = next((f for f in videos if f["name"] == recording_name), videos[0] if videos else None)
    return ([recording] if recording else []) + [f for f in videos if f is not recording]


def _line(
    rubric: Rubric,
    iid: str,
    report: dict,
    files: _RunFiles,
    own: dict[tuple[str, str], Review],
    wanted: list[str],
    rt: Optional[dict],
    moments: dict[str, list],
    measurements: dict[str, str],
) -> dict:
    """One item's line: the bench's result and evidence beside the reviewer's own score
    (`measurements`: the report's measurement sections, as shown)."""
    it = rubric.item(iid)
    bench = (report.get("items") or {}).get(iid) or {}
    ev = bench.get("evidence") or {}
    section = MEASUREMENTS_FOR.get(iid.split(".")[0])
    g = own.get((iid, "grade"))
    return {
        "item": it,
        "bench": bench,
        "summary": _summary(ev),
        "evidence_json": _short_json(ev) if ev else "",
        # the scorer's hint on what to look at (also inside the collapsed JSON)
        "for_reviewers": str(ev["for_reviewers"]) if ev.get("for_reviewers") else "",
        **files.cited(iid, ev),
        "measurement_name": section if section in measurements else None,
        "measurement_json": measurements[section] if section in measurements else "",
        "levels": [{"level": lv, "points": lv.share * it.points} for lv in rubric.sorted_levels()],
        "mine": g,
        "my_level": rubric.level_for_points(it, g.points).key if g else None,
        "override": own.get((iid, "override")),
        "third_wanted": iid in wanted,
        "realtime": rt if iid == REALTIME_ITEM else None,  # the real-time video beside its item
        "moments": moments.get(iid, []),
    }
