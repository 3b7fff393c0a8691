"""What a batch found: repeat statistics over a candidate's runs (summary.json) and the
table printed at the end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skycity_bench.analysis.statistics import spread
from skycity_bench.judging.start_diagnosis import CLASSES
from skycity_bench.reporting.run_report import Report


def _figures(doc: Any, prefix: str = "") -> dict[str, float]:
    """Numeric leaves of a nested dict as dotted paths (lists are per-sample data: skipped)."""
    out = {}
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.update(_figures(v, f"{prefix}{k}."))
    elif isinstance(doc, (int, float)) and not isinstance(doc, bool):
        out[prefix[:-1]] = float(doc)
    return out


def repeat_stats(reports: list[Report]) -> dict:
    """Each figure's spread over the runs, and whether automated item points stayed identical
    (review-principles.md: repeated runs give the same automated points)."""
    figs: dict[str, list[float]] = {}
    for rep in reports:
        for k, v in _figures(rep.measurements, "measurements.").items():
            figs.setdefault(k, []).append(v)
    figures = {k: spread(v) for k, v in sorted(figs.items())}
    items = {}
    for iid, it in reports[0].items.items():
        if it.how != "auto":
            continue
        pts = [rep.items[iid].points if iid in rep.items else None for rep in reports]
        items[iid] = {"points": pts, "identical": len(set(pts)) == 1}
    return {
        "n": len(reports),
        "auto_points_identical": all(v["identical"] for v in items.values()),
        "items": items,
        "figures": figures,
        "unstable": [k for k, s in figures.items() if s.get("unstable")],
    }


def candidate_start(reports: list[Report]) -> dict | None:
    """A candidate's start diagnosis over its runs: the class most of them had (ties: the
    first run's), how many runs had each, and that class's first reason; None without runs.
    A report scored before the diagnosis counts as not_observed."""
    if not reports:
        return None
    starts = [rep.start or {"class": "not_observed", "reason": "no start diagnosis in this report"} for rep in reports]
    classes: dict[str, int] = {}
    for st in starts:
        classes[st["class"]] = classes.get(st["class"], 0) + 1
    main = max(classes, key=lambda k: (classes[k], -next(i for i, st in enumerate(starts) if st["class"] == k)))
    first = next(st for st in starts if st["class"] == main)
    out = {"class": main, "runs": classes, "reason": first.get("reason")}
    if first.get("cause"):
        out["cause"] = first["cause"]
    return out


def machine_flag(rep: Report) -> dict:
    """{"machine_bound": why} when the run's frame-pacing tier was flagged as possibly the
    machine's (the scorer's flag, measurements.smoothness.machine_bound): the machine could
    not render the standard scene at the run's viewport at 60 Hz ("lacks headroom at
    1920x1080"), or was too noisy to trust while the page's own frame work fit ("was too
    noisy"). A batch summary says so beside the points. Empty otherwise."""
    sm = rep.measurements.get("smoothness") or {}
    if not sm.get("machine_bound"):
        return {}
    room = sm.get("machine_headroom") or {}
    if room.get("holds_60hz") is False:
        return {"machine_bound": f"lacks headroom at {room.get('viewport', '?')}"}
    return {"machine_bound": "was too noisy"}


def start_counts(candidates: list[dict]) -> dict[str, int]:
    """Candidates per start class (summary.json `start_classes`), in the diagnosis's order."""
    counts = dict.fromkeys(CLASSES, 0)
    for c in candidates:
        if c.get("start"):
            counts[c["start"]["class"]] = counts.get(c["start"]["class"], 0) + 1
    return counts


def _start_cell(c: dict) -> str:
    st = c.get("start")
    if not st:
        return "—"
    return st["class"] + (f" ({st['cause']})" if st.get("cause") else "")


def print_summary(summary: dict, runs: list[dict], console, out: Path) -> None:
    from rich.table import Table

    t = Table(title=f"skycity-bench batch — {len(summary['candidates'])} candidates, {len(runs)} runs")
    for col in ("candidate", "label", "start", "runs", "auto points", "repeat", "problems"):
        t.add_column(col, overflow="fold")
    for c in summary["candidates"]:
        pts = [r.get("auto_points") for r in c["runs"]]
        mx = c["runs"][0].get("auto_max") if c["runs"] else None
        rep = c.get("repeat")
        rep_s = (
            "—"
            if not rep
            else ("identical" if rep["auto_points_identical"] else "[red]points differ[/]")
            + (f", {len(rep['unstable'])} unstable figures" if rep["unstable"] else "")
        )
        probs = sorted(
            (
                {
                    (r.get("exit_reason") or "")
                    or "; ".join(f"{k}: {v}" for k, v in (r.get("probe_errors") or {}).items())
                    for r in c["runs"]
                }
                | {
                    f"frame pacing flagged: the machine {r['machine_bound']}"
                    for r in c["runs"]
                    if r.get("machine_bound")
                }
            )
            - {""}
        )
        t.add_row(
            c["id"],
            ", ".join(c["labels"])[:60],
            _start_cell(c),
            str(len(c["runs"])),
            " / ".join(f"{p:g}" for p in pts) + (f" of {mx:g}" if mx is not None else ""),
            rep_s,
            "; ".join(p[:160] for p in probs),
        )
    console.print(t)
    counts = summary.get("start_classes") or start_counts(summary["candidates"])
    console.print("start: " + ", ".join(f"{k} {n}" for k, n in counts.items()), highlight=False)
    flagged = sum(1 for c in summary["candidates"] for r in c["runs"] if r.get("machine_bound"))
    if flagged:
        console.print(
            f"[yellow]{flagged} run(s) lost frame-pacing points on a machine without rendering headroom at "
            "their viewport or too noisy to trust: those tiers may be the machine's (`skycity-bench doctor`)[/]"
        )
    console.print(f"batch: {out}/summary.json (manifest {out}/batch.json)")
