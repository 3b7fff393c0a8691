"""Terminal rendering of a report (rich tables)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from skycity_bench.reporting.run_report import Report

STATUS_STYLE = {"pass": "green", "partial": "yellow", "fail": "red", "untested": "dim", "review": "cyan"}
START_STYLE = {"started": "green", "throws": "yellow", "never_drew": "red", "blank": "red", "not_observed": "dim"}


def start_row(report: Report) -> tuple[str, str, str, str, str]:
    """The table's first row: did it start? (the start diagnosis, judging/start_diagnosis.py)."""
    st = report.start
    if not st:
        return ("start", "—", "[dim]—[/]", "", "no start diagnosis in this report (scored before it)")
    cls = st["class"] + (f" ({st['cause']})" if st.get("cause") else "")
    return ("start", "auto", f"[{START_STYLE.get(st['class'], '')}]{cls}[/]", "", str(st.get("reason") or ""))


def _fmt(v, nd=1):
    return "—" if v is None else (f"{v:.{nd}f}" if isinstance(v, float) else str(v))


def summary_line(ev: dict) -> str:
    for k in ("reason", "summary", "note"):
        if ev.get(k):
            return str(ev[k])
    return ""


def print_report(report: Report, console: Console | None = None, out_dir=None) -> None:
    c = console or Console()
    t = Table(title=f"skycity-bench — {report.candidate.id} ({report.rubric_id})", show_lines=False)
    t.add_column("item")
    t.add_column("how")
    t.add_column("status")
    t.add_column("points", justify="right")
    t.add_column("evidence", overflow="fold", max_width=70)
    t.add_row(*start_row(report), end_section=True)
    for iid, it in report.items.items():
        style = STATUS_STYLE.get(it.status, "")
        pts = f"{_fmt(it.points)} / {it.max:g}"
        t.add_row(iid, it.how, f"[{style}]{it.status}[/]", pts, summary_line(it.evidence))
    got, mx = report.auto_points()
    total = report.total()
    c.print(t)
    c.print(
        f"scored by the bench: [bold]{got:.1f}[/] of {mx:g} points; "
        + (
            f"total [bold]{total:.1f}[/]"
            if total is not None
            else "[dim]no total while items are untested or waiting for reviewers[/]"
        )
    )
    s = report.measurements.get("smoothness")
    if s:
        st = Table(title="frame pacing")
        for col in ("window", "P95 (ms)", "> 50 ms share", "tier"):
            st.add_column(col, justify="right")
        for w in ("full", "dense"):
            if w in s:
                x = s[w]
                st.add_row(
                    f"{w} {x.get('window_s')}",
                    _fmt(x.get("p95_ms"), 2),
                    "—" if x.get("long_frame_ratio") is None else f"{x['long_frame_ratio']:.2%}",
                    _fmt(x.get("tier")),
                )
        c.print(st)
        c.print(
            f"tier {s.get('tier')}; scene updated in "
            f"{'—' if s.get('scene_update_ratio') is None else format(s['scene_update_ratio'], '.1%')} of frames; "
            f"longest scene freeze {s.get('longest_scene_freeze_s')} s"
        )
        if s.get("late_side"):
            c.print(s["late_side"]["sentence"])
    env = report.environment
    if env:
        c.print(
            f"[dim]{env.get('browser')} {env.get('browser_version')} · {env.get('webgl_renderer')} · "
            f"{env.get('viewport')} · refresh {env.get('refresh_interval_ms')} ms · {env.get('cpu_cores')} cores[/]"
        )
    for w in report.warnings:
        c.print(f"[yellow]warning:[/] {w}")
    if out_dir is not None:
        c.print(f"report: {out_dir}/report.json")
