"""Batch runs: many candidates (files, folders, globs), each run in its own worker process,
each result persisted the moment it is done, resumable after kill -9.

Layout of the output folder:

    OUT/batch.json            manifest + state of every run (rewritten atomically on each change)
    OUT/summary.json          per candidate: runs, points, repeat spreads (atomic, after each run)
    OUT/manifest.csv          with --manifest: each candidate's place in the round, keyed by
                              its id, for `import --manifest` (batch_round.py)
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
dies with its parent, running/run_worker.py). A lock file keeps two batches out of one folder.

Each run is `runner.execute` with the run profile, in a worker process (running/run_worker.py), so a
batch run and a single `run` of the same demo collect and score alike; the batch's exit code
is the same rule over all its runs (runner.exit_code).
"""

from __future__ import annotations

import datetime as dt
import fcntl
import glob
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from skycity_bench import __version__
from skycity_bench.batch.batch_progress import BatchProgress
from skycity_bench.batch.batch_round import record_round, resolve_round
from skycity_bench.batch.batch_summary import candidate_start, machine_flag, print_summary, repeat_stats, start_counts
from skycity_bench.common.atomic_write import write_atomic
from skycity_bench.common.errors import UserError
from skycity_bench.common.process_tree import kill_marked
from skycity_bench.inputs.demo_file import candidate_id, load_demo
from skycity_bench.inputs.round_manifest import Manifest, read_manifest
from skycity_bench.reporting.run_report import Report
from skycity_bench.running.child_supervisor import (
    Limits,
    child_command,
    child_env,
    default_budget,
    exit_reason,
    fallback_report,
    kill_child,
    readable_report,
)
from skycity_bench.running.runner import exit_code

SCHEMA = "skycity-bench/batch@1"
GLOB_CHARS = set("*?[")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


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
            found = sorted(
                q
                for q in p.rglob("*")
                if q.suffix.lower() in (".html", ".htm")
                and q.is_file()
                and not any(part.startswith(".") for part in q.relative_to(p).parts)
            )
            good, bad = _valid(found)
            if not good:
                why = "; ".join(bad) if bad else "no *.html file in it"
                raise UserError(f"{p}: is a directory with no valid HTML demo in it ({why})")
            files += good
            notes += [f"skipped {b}" for b in bad]
        elif p.exists():
            load_demo(p)  # named explicitly: a bad file is a usage error
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
    candidate_timeout_s: Optional[float] = None  # None: from the probes' budgets
    max_memory_mb: float = 3072
    quiet: bool = False

    def settings(self, scenario) -> dict:
        """What must match for a resumed batch to continue the same measurement."""
        return {
            "scenario_sha256": scenario.sha256(),
            "probes": sorted(self.probes or []),
            "network": self.network,
            "bench_version": __version__,
        }


class Batch:
    def __init__(self, out: Path, opts: BatchOptions, console=None):
        from rich.console import Console

        from skycity_bench.inputs.scenario import load_scenario

        self.out = Path(out).resolve()
        self.opts = opts
        self.console = console or Console(stderr=True)
        self.scenario = load_scenario(opts.scenario_path, opts.overrides)
        self.budget_s = opts.candidate_timeout_s or default_budget(self.scenario, opts.probes)
        self.manifest: dict = {}
        self._lock_fd: Optional[int] = None

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
                raise UserError(
                    f"{self.out} holds a batch run with other settings ({', '.join(diff)} differ): "
                    f"pass the same options to resume it, or use another --out"
                )
        else:
            if self.out.exists() and any(p.name not in (".lock",) for p in self.out.iterdir()):
                raise UserError(
                    f"{self.out}: the folder is not empty and holds no batch (batch.json); use an empty or new --out"
                )
            self.manifest = {
                "schema": SCHEMA,
                "created_at": _now(),
                "settings": settings,
                "candidates": {},
                "runs": [],
                "history": [],
            }
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
                write_atomic(inp, demo.html)
        keys = {r["key"] for r in self.manifest["runs"]}
        rep = self.manifest["repeat"]
        for cid in cands:
            for k in range(1, rep + 1):
                key = f"{cid}/{k}"
                if key not in keys:
                    d = cid if rep == 1 else f"{cid}/run-{k}"
                    self.manifest["runs"].append(
                        {"key": key, "candidate": cid, "index": k, "dir": d, "state": "pending", "attempts": 0}
                    )
        self._reconcile()
        self._save()

    def _reconcile(self) -> None:
        for r in self.manifest["runs"]:
            final = self.out / r["dir"]
            if readable_report(final):
                if r["state"] != "done":
                    r["state"] = "done"
                    self.manifest["history"].append({"ev": "found-done", "key": r["key"], "t": _now()})
                continue
            if r.get("marker"):
                kill_marked(r["marker"])  # a worker left over from a killed batch
            shutil.rmtree(_staging(final), ignore_errors=True)
            if final.exists():  # not a whole run (should not happen): run again
                shutil.rmtree(final, ignore_errors=True)
            if r["state"] != "pending":
                self.manifest["history"].append(
                    {"ev": "interrupted", "key": r["key"], "attempt": r["attempts"], "t": _now()}
                )
            r["state"] = "pending"

    # ------------------------------------------------------------- running
    def run(self) -> list[dict]:
        runs = self.manifest["runs"]
        todo = [r for r in runs if r["state"] != "done"]
        prog = BatchProgress(self, len(runs), len(runs) - len(todo))
        for r in todo:
            prog.start(r)
            self._run_one(r, prog)
            prog.finish(r)
            self._write_summary()
        self._write_summary()
        return runs

    def _run_one(self, r: dict, prog: BatchProgress) -> None:
        final = self.out / r["dir"]
        staging = _staging(final)
        shutil.rmtree(staging, ignore_errors=True)
        (staging / ".tmp").mkdir(parents=True)
        # The browser's scratch (profile, singleton socket): a fresh short folder under the system
        # temp dir (a Unix socket path must stay under 108 bytes), removed when the run ends.
        scratch = Path(tempfile.mkdtemp(prefix="skb-"))
        cand = self.manifest["candidates"][r["candidate"]]
        r.update(state="running", attempts=r["attempts"] + 1, marker=uuid.uuid4().hex, started_at=_now())
        self.manifest["history"].append(
            {"ev": "start", "key": r["key"], "attempt": r["attempts"], "t": r["started_at"]}
        )
        self._save()
        spec = {
            "demo": str(self.out / cand["input"]),
            "out_dir": str(staging),
            "label": cand["labels"][0],
            "scenario": self.opts.scenario_path and str(Path(self.opts.scenario_path).resolve()),
            "overrides": self.opts.overrides,
            "probes": self.opts.probes,
            "network": self.opts.network,
            "max_memory_mb": self.opts.max_memory_mb,
        }
        spec_path = staging / ".tmp" / "worker-spec.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        t0 = time.monotonic()
        try:
            killed = self._supervise(r, spec_path, staging, scratch, prog)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        duration = time.monotonic() - t0
        shutil.rmtree(staging / ".tmp", ignore_errors=True)
        rep = readable_report(staging)
        if rep is None:
            reason = killed or "the worker process ended without writing a report"
            rep = self._fallback_report(cand, r, staging, reason, duration)
        elif killed:
            # the report is whole and scored: the batch never edits it; the manifest says it
            r["stopped_after_report"] = killed
        if final.exists():
            shutil.rmtree(final)
        os.replace(staging, final)  # the run becomes visible whole, or not at all
        r.update(state="done", finished_at=_now(), duration_s=round(duration, 1), outcome=_outcome(rep))
        r.pop("marker", None)
        self.manifest["history"].append(
            {"ev": "done", "key": r["key"], "attempt": r["attempts"], "t": r["finished_at"]}
        )
        self._save()

    def _supervise(self, r: dict, spec_path: Path, staging: Path, scratch: Path, prog: BatchProgress) -> Optional[str]:
        """Run the worker (running/child_supervisor.py); kill it when it passes the wall-clock
        budget or its process tree passes the hard memory limit. Returns the reason it was
        killed, or None."""
        limits = Limits(self.budget_s, self.opts.max_memory_mb, "the batch")
        with open(staging / "worker.log", "wb") as log:
            proc = subprocess.Popen(
                child_command(spec_path),
                cwd=staging,
                env=child_env(scratch, r["marker"]),
                stdout=subprocess.PIPE,
                stderr=log,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            reader = threading.Thread(target=prog.read_worker, args=(proc.stdout,), daemon=True)
            reader.start()
            r["worker_pid"] = proc.pid
            t0 = time.monotonic()
            killed = None
            while proc.poll() is None:
                time.sleep(0.2)
                killed = limits.broken(proc.pid, t0)
                if killed:
                    kill_child(proc.pid, r["marker"])
                    break
                prog.tick()
            proc.wait()
            kill_marked(r["marker"])  # nothing of this run outlives it
            reader.join(2)
        return killed or exit_reason(proc.returncode)

    def _fallback_report(self, cand: dict, r: dict, staging: Path, reason: str, duration: float) -> Report:
        """A run that left no report still gets one (child_supervisor.fallback_report)."""
        return fallback_report(
            self.out / cand["input"],
            self.scenario,
            {"probes": self.opts.probes},
            cand["labels"][0],
            staging,
            reason,
            duration,
            started_at=r["started_at"],
        )

    # ------------------------------------------------------------- summary
    def _write_summary(self) -> dict:
        out: dict[str, Any] = {"schema": "skycity-bench/batch-summary@1", "updated_at": _now(), "candidates": []}
        for cid, c in self.manifest["candidates"].items():
            runs = [r for r in self.manifest["runs"] if r["candidate"] == cid]
            read = [(r, readable_report(self.out / r["dir"])) for r in runs if r["state"] == "done"]
            reports = [(r, rep) for r, rep in read if rep is not None]
            entry: dict[str, Any] = {
                "id": cid,
                "labels": c["labels"],
                "runs": [{"dir": r["dir"], **(r.get("outcome") or {})} for r, _ in reports],
                "pending": sum(1 for r in runs if r["state"] != "done"),
            }
            if len(reports) > 1:
                entry["repeat"] = repeat_stats([rep for _, rep in reports])
            entry["start"] = candidate_start([rep for _, rep in reports])
            out["candidates"].append(entry)
        out["start_classes"] = start_counts(out["candidates"])
        write_atomic(self.out / "summary.json", out)
        return out

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


# ----------------------------------------------------------------- helpers
def _staging(final: Path) -> Path:
    return final.parent / f".partial-{final.name}"


def _outcome(rep: Report) -> dict:
    got, mx = rep.auto_points()
    return {
        "auto_points": round(got, 2),
        "auto_max": mx,
        "total": rep.total(),
        "exit_reason": rep.exit_reason,
        "probe_errors": {n: p.error for n, p in rep.probes.items() if p.status == "error"},
        "exit_code": exit_code(rep),
        **machine_flag(rep),
    }


# ----------------------------------------------------------------- the command's batch mode
def run_batch(
    paths: list[str],
    out: Optional[Path],
    *,
    scenario=None,
    viewport=None,
    duration=None,
    probe=None,
    network="offline",
    quiet=False,
    repeat=1,
    candidate_timeout=None,
    max_memory_mb=3072,
    scenario_probes=None,
    budget=None,
    manifest: Optional[Path] = None,
) -> int:
    """`skycity-bench run PATH...` with many candidates: returns the exit code, the one rule
    over every run (runner.exit_code: 0 when each run collected all its evidence and scored
    every item it should, 1 otherwise). `manifest`: the round's CSV (batch_round.py)."""
    from rich.console import Console

    files, notes = discover(paths)  # usage errors before anything is written
    places = None if manifest is None else resolve_round(read_manifest(manifest), files, manifest.parent, str(manifest))
    if out is None:
        out = Path("recordings") / f"batch-{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}"
    overrides = {
        k: v for k, v in (("viewport", viewport), ("duration_s", duration), ("run_s", budget)) if v is not None
    }
    if scenario_probes:  # probe settings from flags (run --realtime-capture)
        overrides["probes"] = scenario_probes
    opts = BatchOptions(
        scenario_path=str(scenario) if scenario else None,
        overrides=overrides,
        probes=list(probe) if probe else None,
        network=network,
        repeat=repeat,
        candidate_timeout_s=candidate_timeout,
        max_memory_mb=max_memory_mb,
        quiet=quiet,
    )
    err = Console(stderr=True)
    b = Batch(out, opts, console=err)
    try:
        b.plan(files)
        if places is not None:
            _record_round(b, places, err)
        _prefetch(b, files, err)
        for n in notes:
            err.print(f"[yellow]{n}[/]", highlight=False, soft_wrap=True)
        runs = b.run()
        summary = b._write_summary()
    finally:
        b.close()
    print_summary(summary, runs, Console(), b.out)
    return max((_exit_of(b.out, r) for r in runs), default=0)


def _record_round(b: Batch, places: dict[str, Manifest], console) -> None:
    """Each candidate's place in the round into batch.json and OUT/manifest.csv, and the
    line that says how to import the run folders with it."""
    path, unplaced = record_round(b.manifest, places, b.out)
    b._save()
    console.print(
        f"round manifest: {path} ({len(places)} candidates, {len({m.system for m in places.values()})} systems, "
        f"{len({m.prompt for m in places.values()})} prompts); import the run folders with --manifest {path}",
        highlight=False,
        soft_wrap=True,
    )
    if unplaced:
        console.print(
            f"[yellow]round manifest: {unplaced} candidate(s) of the batch have no row; the leaderboard leaves them out[/]",
            highlight=False,
            soft_wrap=True,
        )


def _exit_of(out: Path, r: dict) -> int:
    """A run's exit code by the one rule: from its report (a run done by an older batch has
    none in its outcome)."""
    o = r.get("outcome") or {}
    if "exit_code" in o:
        return int(o["exit_code"])
    rep = readable_report(out / r["dir"])
    return exit_code(rep) if rep is not None else 1


def _prefetch(b: Batch, files: list[Path], console) -> None:
    """While planning, fetch the CDN releases the demos name that the offline cache
    lacks (once here, not in each worker; off with --no-fetch); the manifest keeps the list.
    The workers' runs then find them cached; what could not be fetched each run reports."""
    try:
        from skycity_bench.cache.ondemand import prefetch_demos
    except ImportError:
        return

    def say(rec: dict) -> None:
        if rec["outcome"] != "unreachable":
            console.print(
                f"{'' if rec['outcome'] == 'fetched' else '[yellow]'}offline library cache: {rec['detail']}",
                highlight=False,
                soft_wrap=True,
            )

    od, _ = prefetch_demos(files, "while planning the batch", log=say)
    if any(r["outcome"] == "unreachable" for r in od.records):
        console.print(
            f"[yellow]offline library cache: the npm registry is unreachable; "
            f"{sum(r['outcome'] == 'unreachable' for r in od.records)} release(s) the demos name are not "
            f"cached (each run names them)[/]",
            highlight=False,
            soft_wrap=True,
        )
    if od.records:
        b.manifest.setdefault("prefetched", []).extend(od.records)
        b._save()
