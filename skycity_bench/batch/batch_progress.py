"""A batch's progress on the terminal (and in CI logs): one line per run start/end with the
batch position and ETA, a heartbeat with the running worker's own progress (its JSON lines,
run_progress.JsonLinesProgress), the ETA kept in batch.json."""

from __future__ import annotations

import json
import time
from typing import Optional


def _fmt_s(s: Optional[float]) -> str:
    if s is None:
        return "—"
    s = int(round(s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class BatchProgress:
    """Whole-batch progress: one line per run start/end with the batch ETA, a heartbeat with
    the worker's own progress note (CI logs show it), and the ETA kept in batch.json."""

    HEARTBEAT_S = 15

    def __init__(self, batch, total: int, done: int):
        self.b, self.total, self.done = batch, total, done
        self.durations = [r["duration_s"] for r in batch.manifest["runs"] if r.get("duration_s")]
        self.t_run = time.monotonic()
        self.note = ""
        self.fraction = 0.0
        self.last_beat = time.monotonic()
        self.key = ""

    def _print(self, msg: str) -> None:
        if not self.b.opts.quiet:
            self.b.console.print(msg, highlight=False, soft_wrap=True)

    def eta(self) -> Optional[float]:
        per = (sum(self.durations) / len(self.durations)) if self.durations else self.b.budget_s * 0.5
        remaining = self.total - self.done
        if remaining <= 0:
            return 0.0
        el = time.monotonic() - self.t_run
        current_left = max(per * (1 - self.fraction), per - el, 0.0)
        return current_left + per * (remaining - 1)

    def start(self, r: dict) -> None:
        self.t_run, self.note, self.fraction, self.key = time.monotonic(), "", 0.0, r["key"]
        c = self.b.manifest["candidates"][r["candidate"]]
        self._print(
            f"[{self.done + 1}/{self.total}] {r['candidate']} ({c['labels'][0]}) run {r['index']}: started"
            f"{' (attempt ' + str(r['attempts'] + 1) + ')' if r['attempts'] else ''} — batch ETA {_fmt_s(self.eta())}"
        )

    def read_worker(self, stream) -> None:
        tasks: dict = {}
        for line in stream:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if ev.get("ev") == "task":
                tasks[ev["id"]] = ev.get("description", "")
                self.note = tasks[ev["id"]]
            elif ev.get("ev") == "update":
                tot = ev.get("total") or 0
                self.note = (
                    f"{tasks.get(ev['id'], '')} {ev.get('completed', 0):.0f}/{tot:g} {ev.get('note', '')}".strip()
                )
            elif ev.get("ev") == "log":
                self._print(f"    {ev.get('message', '')}")

    def tick(self) -> None:
        el = time.monotonic() - self.t_run
        per = (sum(self.durations) / len(self.durations)) if self.durations else self.b.budget_s * 0.5
        self.fraction = min(0.95, el / per) if per else 0.0
        if time.monotonic() - self.last_beat >= self.HEARTBEAT_S:
            self.last_beat = time.monotonic()
            self._print(
                f"    … {self.key}: {el:.0f} s{': ' + self.note if self.note else ''} — batch ETA {_fmt_s(self.eta())}"
            )
            self.b.manifest["eta_s"] = self.eta()

    def finish(self, r: dict) -> None:
        self.done += 1
        self.durations.append(r["duration_s"])
        o = r.get("outcome") or {}
        bad = o.get("exit_reason") or "; ".join(f"{k}: {v}" for k, v in (o.get("probe_errors") or {}).items())
        self._print(
            f"[{self.done}/{self.total}] {r['key']}: done in {r['duration_s']:.0f} s — auto "
            f"{o.get('auto_points', 0):g}/{o.get('auto_max', 0):g}"
            f"{' — ' + bad[:200] if bad else ''} — batch ETA {_fmt_s(self.eta())}"
        )
        self.b.manifest["eta_s"] = self.eta()
