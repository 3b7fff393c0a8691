"""Batch runs: many candidates (files, folders, globs), each run in its own worker process,
each result persisted the moment it is done, resumable after kill -9.

Layout of the output folder:

    OUT/batch.json            manifest + state of every run (rewritten atomically on each change)
    OUT/summary.json          per candidate: runs, points, repeat spreads (atomic, after each run)
    OUT/.inputs/<id>.html     the exact bytes planned for each candidate (a resumed batch runs
                              what was planned even if the original file moved or changed)
    OUT/<id>/report.json      one run per candidate (--repeat 1)
    OUT/<id>/run-<k>/...      --repeat N
    OUT/<id>/.partial-...     a run in progress: renamed to its final name when done

Why it survives a kill -9 at any moment: a run writes into a staging folder which is renamed
(atomically) to its final name only when report.json is whole inside it; batch.json and
summary.json are only ever replaced whole (temp file + rename). On restart, a run whose
final folder holds a readable report.json is done and never run again; anything else is
cleaned and run again; a worker left over from the killed batch is killed first (it also
dies with its parent, worker.py). A lock file keeps two batches out of one folder.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from . import __version__
from .demo_file import candidate_id, load_demo
from .errors import UserError
from .report import Candidate, ProbeRecord, Report, load, save, write_atomic
from .stats import spread
from .worker import descendants, kill_marked

SCHEMA = "skycity-bench/batch@1"
GLOB_CHARS = set("*?[")


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


# ----------------------------------------------------------------- finding candidates
def discover(paths: list[str]) -> tuple[list[Path], list[str]]:
    """Candidate files from files, folders (every *.html / *.htm below) and globs.
    Returns (files, notes about skipped files). A file named explicitly must be a valid demo
    (UserError otherwise); an invalid file found in a folder or by a glob is skipped with a note,
    so one stray file does not stop a batch of hundreds."""
    files: list[Path] = []
    notes: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(q for q in p.rglob("*") if q.suffix.lower() in (".html", ".htm") and q.is_file()
                           and not any(part.startswith(".") for part in q.relative_to(p).parts))
            good, bad = _valid(found)
            if not good:
                why = "; ".join(bad) if bad else "no *.html file in it"
                raise UserError(f"{p}: is a directory with no valid HTML demo in it ({why})")
            files += good
            notes += [f"skipped {b}" for b in bad]
        elif p.exists():
            load_demo(p)                   # named explicitly: a bad file is a usage error
            files.append(p)
        elif GLOB_CHARS & set(raw):
            found = sorted(Path(x) for x in glob.glob(raw, recursive=True) if Path(x).is_file())
            good, bad = _valid(found)
            if not good:
                raise UserError(f"{raw}: the pattern matches no valid HTML demo")
            files += good
            notes += [f"skipped {b}" for b in bad]
        else:
            raise UserError(f"{p}: no such file")
    return files, notes


def _valid(found: list[Path]) -> tuple[list[Path], list[str]]:
    good, bad = [], []
    for q in found:
        try:
            load_demo(q)
            good.append(q)
        except UserError as e:
            bad.append(str(e))
    return good, bad


# ----------------------------------------------------------------- options and plan
@dataclass
class BatchOptions:
    scenario_path: Optional[str] = None
    overrides: dict = field(default_factory=dict)
    probes: Optional[list[str]] = None
    network: str = "offline"
    repeat: int = 1
    candidate_timeout_s: Optional[float] = None    # None: from the probes' budgets
    max_memory_mb: float = 3072
    quiet: bool = False

    def settings(self, scenario) -> dict:
        """What must match for a resumed batch to continue the same measurement."""
        return {"scenario_sha256": scenario.sha256(), "probes": sorted(self.probes or []),
                "network": self.network, "bench_version": __version__}


def default_budget(scenario, probes: Optional[list[str]]) -> float:
    """Wall-clock budget of one candidate run: calibration + every probe's own budget, or the
    run budget if larger (a slow renderer lets probes overrun their own budgets up to it,
    issue 16) + 45 s for starting Python and Chromium, scoring and writing (a generous bound:
    it is the backstop behind the probes' own limits, not the usual end)."""
    from .probes import registry

    probes_s = sum(float(s.budget(scenario)) for s in registry.select(probes))
    return scenario.calibration.duration_s + max(probes_s, scenario.timeouts.run_s) + 45


class Batch:
    def __init__(self, out: Path, opts: BatchOptions, console=None):
        from rich.console import Console

        from .scenario import load_scenario

        self.out = Path(out).resolve()
        self.opts = opts
        self.console = console or Console(stderr=True)
        self.scenario = load_scenario(opts.scenario_path, opts.overrides)
        self.budget_s = opts.candidate_timeout_s or default_budget(self.scenario, opts.probes)
        self.manifest: dict = {}
        self._lock_fd: Optional[int] = None
        self._current: dict = {}

    # ------------------------------------------------------------- manifest
    @property
    def manifest_path(self) -> Path:
        return self.out / "batch.json"

    def _save(self) -> None:
        self.manifest["updated_at"] = _now()
        write_atomic(self.manifest_path, self.manifest)

    def _lock(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.out / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise UserError(f"{self.out}: another batch is running in this folder") from None
        self._lock_fd = fd

    def plan(self, files: list[Path]) -> None:
        """Load or create the manifest, add these candidates and their runs, reconcile the
        state with what is on disk (the disk wins: a whole report.json means done)."""
        self._lock()
        settings = self.opts.settings(self.scenario)
        if self.manifest_path.exists():
            try:
                self.manifest = json.loads(self.manifest_path.read_text(encoding="utf-8"))
            except ValueError:
                raise UserError(f"{self.manifest_path}: not a readable batch manifest") from None
            if self.manifest.get("schema") != SCHEMA:
                raise UserError(f"{self.manifest_path}: not a skycity-bench batch manifest")
            old = self.manifest.get("settings", {})
            diff = [k for k in settings if old.get(k) != settings[k]]
            if diff:
                raise UserError(f"{self.out} holds a batch run with other settings ({', '.join(diff)} differ): "
                                f"pass the same options to resume it, or use another --out")
        else:
            if self.out.exists() and any(p.name not in (".lock",) for p in self.out.iterdir()):
                raise UserError(f"{self.out}: the folder is not empty and holds no batch (batch.json); "
                                f"use an empty or new --out")
            self.manifest = {"schema": SCHEMA, "created_at": _now(), "settings": settings,
                             "candidates": {}, "runs": [], "history": []}
        self.manifest["repeat"] = max(int(self.manifest.get("repeat", 1)), self.opts.repeat)
        self.manifest["budget_s"] = self.budget_s
        cands = self.manifest["candidates"]
        for f in files:
            demo = load_demo(f)
            cid = candidate_id(demo.sha256)
            c = cands.setdefault(cid, {"sha256": demo.sha256, "labels": [], "input": f".inputs/{cid}.html"})
            label = str(f)
            if label not in c["labels"]:
                c["labels"].append(label)
            inp = self.out / c["input"]
            if not inp.exists():
                _write_bytes_atomic(inp, demo.html)
        keys = {r["key"] for r in self.manifest["runs"]}
        rep = self.manifest["repeat"]
        for cid in cands:
            for k in range(1, rep + 1):
                key = f"{cid}/{k}"
                if key not in keys:
                    d = cid if rep == 1 else f"{cid}/run-{k}"
                    self.manifest["runs"].append({"key": key, "candidate": cid, "index": k, "dir": d,
                                                  "state": "pending", "attempts": 0})
        self._reconcile()
        self._save()

    def _reconcile(self) -> None:
        for r in self.manifest["runs"]:
            final = self.out / r["dir"]
            if _readable_report(final):
                if r["state"] != "done":
                    r["state"] = "done"
                    self.manifest["history"].append({"ev": "found-done", "key": r["key"], "t": _now()})
                continue
            if r.get("marker"):
                kill_marked(r["marker"])           # a worker left over from a killed batch
            shutil.rmtree(_staging(final), ignore_errors=True)
            if final.exists():                      # not a whole run (should not happen): run again
                shutil.rmtree(final, ignore_errors=True)
            if r["state"] != "pending":
                self.manifest["history"].append({"ev": "interrupted", "key": r["key"], "attempt": r["attempts"],
                                                 "t": _now()})
            r["state"] = "pending"

    # ------------------------------------------------------------- running
    def run(self) -> list[dict]:
        runs = self.manifest["runs"]
        todo = [r for r in runs if r["state"] != "done"]
        prog = _BatchProgress(self, len(runs), len(runs) - len(todo))
        try:
            for r in todo:
                prog.start(r)
                self._run_one(r, prog)
                prog.finish(r)
                self._write_summary()
        finally:
            prog.stop()
        self._write_summary()
        return runs

    def _run_one(self, r: dict, prog: "_BatchProgress") -> None:
        final = self.out / r["dir"]
        staging = _staging(final)
        shutil.rmtree(staging, ignore_errors=True)
        (staging / ".tmp").mkdir(parents=True)
        # The browser's scratch (profile, singleton socket): a fresh short folder under the system
        # temp dir (a Unix socket path must stay under 108 bytes), removed when the run ends.
        scratch = Path(tempfile.mkdtemp(prefix="skb-"))
        cand = self.manifest["candidates"][r["candidate"]]
        r.update(state="running", attempts=r["attempts"] + 1, marker=uuid.uuid4().hex, started_at=_now())
        self.manifest["history"].append({"ev": "start", "key": r["key"], "attempt": r["attempts"], "t": r["started_at"]})
        self._save()
        spec = {"demo": str(self.out / cand["input"]), "out_dir": str(staging), "label": cand["labels"][0],
                "scenario": self.opts.scenario_path and str(Path(self.opts.scenario_path).resolve()),
                "overrides": self.opts.overrides, "probes": self.opts.probes, "network": self.opts.network,
                "max_memory_mb": self.opts.max_memory_mb}
        spec_path = staging / ".tmp" / "worker-spec.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        t0 = time.monotonic()
        try:
            killed = self._supervise(r, spec_path, staging, scratch, prog)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        duration = time.monotonic() - t0
        shutil.rmtree(staging / ".tmp", ignore_errors=True)
        rep = _readable_report(staging)
        if rep is None:
            reason = killed or "the worker process ended without writing a report"
            rep = self._fallback_report(cand, r, staging, reason, duration)
        elif killed:
            rep.warnings.append(f"stopped by the batch after the report was written: {killed}")
            save(rep, staging)
        if final.exists():
            shutil.rmtree(final)
        os.replace(staging, final)                 # the run becomes visible whole, or not at all
        r.update(state="done", finished_at=_now(), duration_s=round(duration, 1), outcome=_outcome(rep))
        r.pop("marker", None)
        self.manifest["history"].append({"ev": "done", "key": r["key"], "attempt": r["attempts"], "t": r["finished_at"]})
        self._save()

    def _supervise(self, r: dict, spec_path: Path, staging: Path, scratch: Path,
                   prog: "_BatchProgress") -> Optional[str]:
        """Run the worker; kill it when it passes the wall-clock budget or its process tree
        passes the hard memory limit. Returns the reason it was killed, or None."""
        env = dict(os.environ, SKYCITY_RUN_MARKER=r["marker"], TMPDIR=str(scratch),
                   PYTHONUNBUFFERED="1")
        hard_mb = self.opts.max_memory_mb * 2 + 1024
        with open(staging / "worker.log", "wb") as log:
            proc = subprocess.Popen([sys.executable, "-m", "skycity_bench.worker", str(spec_path)], cwd=staging,
                                    env=env, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
            reader = threading.Thread(target=prog.read_worker, args=(proc.stdout,), daemon=True)
            reader.start()
            r["worker_pid"] = proc.pid
            t0 = time.monotonic()
            killed = None
            while proc.poll() is None:
                time.sleep(0.2)
                el = time.monotonic() - t0
                if el > self.budget_s:
                    killed = f"stopped by the batch: the run passed its wall-clock budget of {self.budget_s:.0f} s"
                else:
                    try:
                        tree_mb = sum(descendants(proc.pid).values()) / 2**20
                    except OSError:
                        tree_mb = 0
                    if tree_mb > hard_mb:
                        killed = (f"stopped by the batch: the run's processes used {tree_mb:.0f} MB, over the "
                                  f"hard limit of {hard_mb:.0f} MB")
                if killed:
                    _kill_tree(proc, r["marker"])
                    break
                prog.tick()
            proc.wait()
            kill_marked(r["marker"])               # nothing of this run outlives it
            reader.join(2)
        if killed is None and proc.returncode not in (0, None):
            killed = f"the worker process exited with code {proc.returncode}"
        return killed

    def _fallback_report(self, cand: dict, r: dict, staging: Path, reason: str, duration: float) -> Report:
        """A run that left no report still gets one: every probe failed with the reason,
        every item untested (errors are data)."""
        from .probes import registry
        from .rubric import load_rubric
        from .scoring import score_report

        rubric = load_rubric(None)
        rep = Report(bench_version=__version__, rubric_id=rubric.id,
                     candidate=Candidate(id=r["candidate"], sha256=cand["sha256"],
                                         size_bytes=(self.out / cand["input"]).stat().st_size, label=cand["labels"][0]),
                     scenario={"name": self.scenario.name, "sha256": self.scenario.sha256(),
                               "effective": self.scenario.model_dump(mode="json")},
                     started_at=r["started_at"], finished_at=_now(), duration_s=round(duration, 2),
                     exit_reason=reason, warnings=[reason])
        for spec in registry.select(self.opts.probes):
            rep.probes[spec.name] = ProbeRecord(name=spec.name, version=spec.version, status="error", error=reason)
        tail = _tail(staging / "worker.log")
        if tail:
            rep.warnings.append("worker log (last lines): " + tail)
        score_report(rep, self.scenario, rubric, staging)
        save(rep, staging)
        return rep

    # ------------------------------------------------------------- summary
    def _write_summary(self) -> dict:
        out = {"schema": "skycity-bench/batch-summary@1", "updated_at": _now(), "candidates": []}
        for cid, c in self.manifest["candidates"].items():
            runs = [r for r in self.manifest["runs"] if r["candidate"] == cid]
            reports = [(r, _readable_report(self.out / r["dir"])) for r in runs if r["state"] == "done"]
            reports = [(r, rep) for r, rep in reports if rep is not None]
            entry: dict[str, Any] = {"id": cid, "labels": c["labels"],
                                     "runs": [{"dir": r["dir"], **(r.get("outcome") or {})} for r, _ in reports],
                                     "pending": sum(1 for r in runs if r["state"] != "done")}
            if len(reports) > 1:
                entry["repeat"] = repeat_stats([rep for _, rep in reports])
            out["candidates"].append(entry)
        write_atomic(self.out / "summary.json", out)
        return out

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


# ----------------------------------------------------------------- repeat statistics
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
    return {"n": len(reports), "auto_points_identical": all(v["identical"] for v in items.values()),
            "items": items, "figures": figures,
            "unstable": [k for k, s in figures.items() if s.get("unstable")]}


# ----------------------------------------------------------------- helpers
def _staging(final: Path) -> Path:
    return final.parent / f".partial-{final.name}"


def _readable_report(d: Path) -> Optional[Report]:
    p = d / "report.json"
    if not p.is_file():
        return None
    try:
        return load(p)
    except Exception:
        return None


def _write_bytes_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{uuid.uuid4().hex}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _kill_tree(proc: subprocess.Popen, marker: str) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    kill_marked(marker)


def _tail(p: Path, n: int = 3) -> str:
    try:
        lines = [x for x in p.read_text(encoding="utf-8", errors="replace").splitlines() if x.strip()]
    except OSError:
        return ""
    return " | ".join(x.strip()[:200] for x in lines[-n:])


def _outcome(rep: Report) -> dict:
    got, mx = rep.auto_points()
    return {"auto_points": round(got, 2), "auto_max": mx, "total": rep.total(), "exit_reason": rep.exit_reason,
            "probe_errors": {n: p.error for n, p in rep.probes.items() if p.status == "error"}}


def _fmt_s(s: Optional[float]) -> str:
    if s is None:
        return "—"
    s = int(round(s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class _BatchProgress:
    """Whole-batch progress: one line per run start/end with the batch ETA, a heartbeat with
    the worker's own progress note (CI logs show it), and the ETA kept in batch.json."""

    HEARTBEAT_S = 15

    def __init__(self, batch: Batch, total: int, done: int):
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
        self._print(f"[{self.done + 1}/{self.total}] {r['candidate']} ({c['labels'][0]}) run {r['index']}: started"
                    f"{' (attempt ' + str(r['attempts'] + 1) + ')' if r['attempts'] else ''} — batch ETA {_fmt_s(self.eta())}")

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
                self.note = f"{tasks.get(ev['id'], '')} {ev.get('completed', 0):.0f}/{tot:g} {ev.get('note', '')}".strip()
            elif ev.get("ev") == "log":
                self._print(f"    {ev.get('message', '')}")

    def tick(self) -> None:
        el = time.monotonic() - self.t_run
        per = (sum(self.durations) / len(self.durations)) if self.durations else self.b.budget_s * 0.5
        self.fraction = min(0.95, el / per) if per else 0.0
        if time.monotonic() - self.last_beat >= self.HEARTBEAT_S:
            self.last_beat = time.monotonic()
            self._print(f"    … {self.key}: {el:.0f} s{': ' + self.note if self.note else ''} — batch ETA {_fmt_s(self.eta())}")
            self.b.manifest["eta_s"] = self.eta()

    def finish(self, r: dict) -> None:
        self.done += 1
        self.durations.append(r["duration_s"])
        o = r.get("outcome") or {}
        bad = o.get("exit_reason") or "; ".join(f"{k}: {v}" for k, v in (o.get("probe_errors") or {}).items())
        self._print(f"[{self.done}/{self.total}] {r['key']}: done in {r['duration_s']:.0f} s — auto "
                    f"{o.get('auto_points', 0):g}/{o.get('auto_max', 0):g}"
                    f"{' — ' + bad[:200] if bad else ''} — batch ETA {_fmt_s(self.eta())}")
        self.b.manifest["eta_s"] = self.eta()

    def stop(self) -> None:
        pass


# ----------------------------------------------------------------- the command's batch mode
def run_batch(paths: list[str], out: Optional[Path], *, scenario=None, viewport=None, duration=None, probe=None,
              network="offline", quiet=False, repeat=1, candidate_timeout=None, max_memory_mb=3072,
              scenario_probes=None) -> int:
    """`skycity-bench run PATH...` with many candidates: returns the exit code (0 when every
    run collected all its evidence, 1 otherwise)."""
    from rich.console import Console

    files, notes = discover(paths)          # usage errors before anything is written
    if out is None:
        out = Path("recordings") / f"batch-{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}"
    overrides = {k: v for k, v in (("viewport", viewport), ("duration_s", duration)) if v is not None}
    if scenario_probes:                     # probe settings from flags (run --realtime-capture)
        overrides["probes"] = scenario_probes
    opts = BatchOptions(scenario_path=str(scenario) if scenario else None, overrides=overrides,
                        probes=list(probe) if probe else None, network=network, repeat=repeat,
                        candidate_timeout_s=candidate_timeout, max_memory_mb=max_memory_mb, quiet=quiet)
    err = Console(stderr=True)
    b = Batch(out, opts, console=err)
    try:
        b.plan(files)
        _prefetch(b, files, err)
        for n in notes:
            err.print(f"[yellow]{n}[/]", highlight=False, soft_wrap=True)
        runs = b.run()
        summary = b._write_summary()
    finally:
        b.close()
    print_summary(summary, runs, Console(), b.out)
    bad = [r for r in runs if (r.get("outcome") or {}).get("exit_reason") or (r.get("outcome") or {}).get("probe_errors")]
    return 1 if bad else 0


def _prefetch(b: Batch, files: list[Path], console) -> None:
    """issue 16: while planning, fetch the CDN releases the demos name that the offline cache
    lacks (once here, not in each worker; off with --no-fetch); the manifest keeps the list.
    The workers' runs then find them cached; what could not be fetched each run reports."""
    try:
        from .cache.ondemand import prefetch_demos
    except ImportError:
        return

    def say(rec: dict) -> None:
        if rec["outcome"] != "unreachable":
            console.print(f"{'' if rec['outcome'] == 'fetched' else '[yellow]'}offline library cache: {rec['detail']}",
                          highlight=False, soft_wrap=True)
    od, _ = prefetch_demos(files, "while planning the batch", log=say)
    if any(r["outcome"] == "unreachable" for r in od.records):
        console.print(f"[yellow]offline library cache: the npm registry is unreachable; "
                      f"{sum(r['outcome'] == 'unreachable' for r in od.records)} release(s) the demos name are not "
                      f"cached (each run names them)[/]", highlight=False, soft_wrap=True)
    if od.records:
        b.manifest.setdefault("prefetched", []).extend(od.records)
        b._save()


def print_summary(summary: dict, runs: list[dict], console, out: Path) -> None:
    from rich.table import Table

    t = Table(title=f"skycity-bench batch — {len(summary['candidates'])} candidates, {len(runs)} runs")
    for col in ("candidate", "label", "runs", "auto points", "repeat", "problems"):
        t.add_column(col, overflow="fold")
    for c in summary["candidates"]:
        pts = [r.get("auto_points") for r in c["runs"]]
        mx = c["runs"][0].get("auto_max") if c["runs"] else None
        rep = c.get("repeat")
        rep_s = "—" if not rep else ("identical" if rep["auto_points_identical"] else "[red]points differ[/]") + (
            f", {len(rep['unstable'])} unstable figures" if rep["unstable"] else "")
        probs = sorted({(r.get("exit_reason") or "") or "; ".join(f"{k}: {v}" for k, v in (r.get("probe_errors") or {}).items())
                        for r in c["runs"]} - {""})
        t.add_row(c["id"], ", ".join(c["labels"])[:60], str(len(c["runs"])),
                  " / ".join(f"{p:g}" for p in pts) + (f" of {mx:g}" if mx is not None else ""), rep_s,
                  "; ".join(p[:160] for p in probs))
    console.print(t)
    console.print(f"batch: {out}/summary.json (manifest {out}/batch.json)")
