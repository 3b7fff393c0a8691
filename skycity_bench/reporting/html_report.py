"""A static HTML report per run (DIR/report.html) that opens from disk: the items with
their evidence, plots and frames beside them, the keyframes, the recording, the
measurements and the environment. Links are relative, the CSS is inlined, nothing is
fetched, so the folder can be zipped and mailed.

Blind by the review app's rule (common/blinding.py): the candidate's own label(s) and full
file hash are masked wherever a value quotes them, and the page shows only its anonymous id.
"""

from __future__ import annotations

import json
import mimetypes
from pathlib import Path
from typing import Any

import jinja2

from skycity_bench.common import blinding
from skycity_bench.common.atomic_write import write_atomic
from skycity_bench.inputs.rubric import Rubric, find_rubric, load_rubric
from skycity_bench.reporting.run_report import Report, load

HERE = Path(__file__).resolve().parent.parent / "review"
NAME = "report.html"


def _strings(v: Any):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from _strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from _strings(x)


def is_keyframe(name: str) -> bool:
    """The recording probe's keyframes and contact sheet (recordings/keyframes/…, …contact_sheet.png)."""
    return "keyframe" in name or "frames/" in name or "contact_sheet" in name


def _kind(path: str) -> str:
    mime = mimetypes.guess_type(path)[0] or ""
    return mime.split("/")[0]


def _files(run_dir: Path) -> list[str]:
    out = []
    for p in sorted(run_dir.rglob("*")):
        rel = p.relative_to(run_dir).as_posix()
        if p.is_file() and rel not in ("report.json", NAME) and not any(s.startswith(".") for s in rel.split("/")):
            out.append(rel)
    return out


# The start class as the page's status colours (style.css .status.*).
_START_STATUS = {"started": "pass", "throws": "partial", "never_drew": "fail", "blank": "fail"}


def start_view(report: Report) -> dict[str, Any]:
    """What the page opens with: the start diagnosis's class (and cause), its colour and reason."""
    st = report.start or {"class": "—", "reason": "no start diagnosis in this report (scored before it)"}
    label = st["class"] + (f" ({st['cause']})" if st.get("cause") else "")
    return {"label": label, "status": _START_STATUS.get(st["class"], "untested"), "reason": st.get("reason") or ""}


def render(report: Report, rubric: Rubric, run_dir: Path) -> str:
    files = _files(run_dir)
    known = set(files)
    used: set[str] = set()
    from skycity_bench.reporting.realtime_view import (
        ITEM as REALTIME_ITEM,
    )  # (review/ imports this module)
    from skycity_bench.reporting.realtime_view import (
        realtime_view,
    )

    # the real-time video sits beside its item (录屏复核), not with the recordings
    rt = realtime_view(report.to_json(), lambda n: n if n in known else None)
    rows = []
    for row in rubric.row_groups():
        lines: list[dict[str, Any]] = []
        for iid in row.items:
            it = rubric.item(iid)
            res = report.items.get(iid)
            ev = res.evidence if res else {}
            refs = [s for s in dict.fromkeys(_strings(ev)) if s in known]
            used.update(refs)
            lines.append(
                {
                    "item": it,
                    "res": res,
                    "images": [r for r in refs if _kind(r) == "image"],
                    "links": [r for r in refs if _kind(r) != "image"],
                    "evidence": json.dumps(ev, ensure_ascii=False, indent=1, default=str)[:4000] if ev else "",
                    "realtime": rt if iid == REALTIME_ITEM else None,
                }
            )
        got = [x["res"].points for x in lines if x["res"] is not None]
        sub = round(sum(got), 2) if len(got) == len(lines) and all(p is not None for p in got) else None
        rows.append({"row": row, "lines": lines, "subtotal": sub})
    videos = [f for f in files if _kind(f) == "video" and not (rt and f == rt["name"])]
    keyframes = sorted(
        (f for f in files if _kind(f) == "image" and is_keyframe(f)), key=lambda f: ("contact_sheet" not in f, f)
    )
    plots = [f for f in files if _kind(f) == "image" and f not in keyframes and f not in used]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True)
    css = (HERE / "static" / "style.css").read_text(encoding="utf-8")
    cand = blinding.candidate_block(report.candidate.model_dump(mode="json"))
    return env.get_template("run_report.html").render(
        r=report,
        start=start_view(report),
        cand=cand,
        rubric=rubric,
        rows=rows,
        videos=videos,
        keyframes=keyframes,
        plots=plots,
        total=report.total(),
        auto=report.auto_points(),
        css=css,
        measurements=json.dumps(report.measurements, ensure_ascii=False, indent=1, default=str)[:20000],
        environment=report.environment,
    )


def write(run_dir: Path | str, report: Report | None = None) -> Path:
    """Write DIR/report.html from DIR/report.json (or the report given); returns its path."""
    run_dir = Path(run_dir)
    report = report or load(run_dir)
    # blind: the label and the full hash (and anything quoting them) stay out of the page
    masker = blinding.masker(report.candidate.label, report.candidate.sha256)
    report = Report.model_validate(masker.value(report.to_json()))
    path = find_rubric(report.rubric_id)
    rubric = load_rubric(path) if path else load_rubric()
    out = run_dir / NAME
    write_atomic(out, render(report, rubric, run_dir))
    return out
