"""The one execution path: `execute(candidate, scenario, profile, out_dir) -> Report`.

`run` (one demo, in this process), each batch worker (worker.py, one process per run) and
`check` (a profile of its own, check.py) all go through it: launch Chromium, calibrate,
run the profile's collection steps (the registry's probes, and a profile's own steps),
score, write report.json. Probes are found by the registry; the runner never names one.

Whatever happens inside (a demo that hangs, crashes the renderer, opens dialogs, eats
memory), every step is bounded by its budget, its failure is stored as its evidence, a
memory watchdog kill is recorded in the evidence of the step it happened in BEFORE the
report is scored, and report.json is written before this returns. `exit_code(report)` is
the one rule every command exits by (0 everything collected and scored, 1 a probe could
not collect or an item the run should score is untested; 2, usage, is raised before).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from skycity_bench import __version__
from skycity_bench.browser.clock_budget import RunBudget, Share, measure_real_time_cost
from skycity_bench.browser.launch import find_chromium
from skycity_bench.browser.page_errors import ThrownLog
from skycity_bench.browser.rate_calibration import calibrate
from skycity_bench.browser.server import DemoServer
from skycity_bench.browser.session import BrowserHandle
from skycity_bench.cache import resolvers, served_from_cache
from skycity_bench.cache.ondemand import OnDemand
from skycity_bench.common import environment
from skycity_bench.common.errors import BenchError, Cause, DemoCrash, DemoHang, ProbeError
from skycity_bench.common.run_progress import Progress, RunProgress
from skycity_bench.evidence.page_events import PageEventsEvidence
from skycity_bench.inputs.demo_file import candidate_id, load_demo
from skycity_bench.inputs.rubric import Rubric
from skycity_bench.inputs.scenario import Scenario
from skycity_bench.judging.score_items import run_problems, score_report
from skycity_bench.probes import ProbeContext, ProbeSpec, registry
from skycity_bench.probes.probe_api import Wanted
from skycity_bench.reporting.run_report import Candidate, ProbeRecord, Report, save
from skycity_bench.running.overlap_pass import NoOverlap, run_overlapped
from skycity_bench.running.run_profile import (  # noqa: F401  (re-exported: the runner's callers name them here)
    DEFAULT_MAX_MEMORY_MB,
    Profile,
    _after_what_they_read,
    scoped_rubric,
)
from skycity_bench.running.side_by_side import more_browsers, run_side_by_side
from skycity_bench.running.watchdog import MemoryWatchdog, kill_reason

log = logging.getLogger(__name__)


def exit_code(report: Report) -> int:
    """The one exit rule of `run`, a batch worker and a batch: 0 when every probe collected
    and every item the run should score was scored, 1 otherwise (score_items.run_problems)."""
    return 1 if run_problems(report) else 0


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def extra_resolvers(network: str, ondemand=None) -> list:
    """Request resolvers (answer a demo's request instead of a network error): the offline
    library cache's, fresh for this run."""
    return resolvers(network, ondemand)


def _fetch_named(demo, progress: Progress):
    """Fetch the CDN releases the demo names that the cache lacks, before the
    browser starts (cache/ondemand.py; off with --no-fetch). Never stops the run."""

    def say(rec: dict) -> None:
        if rec["outcome"] == "fetched":
            progress.log(f"offline library cache: {rec['detail']}")

    try:
        ondemand = OnDemand(log=say)
        ondemand.prefetch_html(demo.text)
        return ondemand
    except Exception as e:  # the bench's own fault: measure with the cache as it is
        log.debug("on-demand fetch failed", exc_info=True)
        progress.log(f"[yellow]offline library cache: fetching what the demo names failed: {e}[/]")
        return None


def _note_fetches(report: Report, handle, ondemand) -> None:
    """Which releases were fetched for this run (or could not be), in the network
    data and the warnings; run-time misses are fetched after the run for the next one."""
    if ondemand is None:
        return
    try:
        after = ondemand.after_run(handle.resolvers)
    except Exception as e:  # the bench's own fault: the run's evidence stands
        log.debug("fetching run-time misses failed", exc_info=True)
        after = [f"fetching what the demo asked for at run time failed: {e}"]
    report.probes["network"].data.update(ondemand.report())
    report.warnings.extend(f"offline library cache: {w}" for w in ondemand.warnings() + after)


def new_report(
    demo, scenario: Scenario, rubric: Rubric, label: Optional[str] = None, started_at: Optional[str] = None
) -> Report:
    """The report of one run before anything is collected (also the batch's report for a
    run whose worker died without writing one)."""
    return Report(
        bench_version=__version__,
        rubric_id=rubric.id,
        candidate=Candidate(
            id=candidate_id(demo.sha256),
            sha256=demo.sha256,
            size_bytes=len(demo.html),
            label=label if label is not None else demo.path.name,
        ),
        scenario={"name": scenario.name, "sha256": scenario.sha256(), "effective": scenario.model_dump(mode="json")},
        started_at=started_at or _now(),
    )


def finish_report(
    report: Report,
    specs: Sequence[ProbeSpec],
    scenario: Scenario,
    rubric: Rubric,
    out_dir: Path,
    reason: Optional[str] = None,
) -> Report:
    """Every step that did not run gets its error (`reason`), then the items are scored
    from the evidence as it stands and report.json is written (atomically)."""
    if reason and not report.exit_reason:
        report.exit_reason = reason
        report.warnings.append(reason)
    for spec in specs:
        for name, version in [(spec.name, spec.version), *((p, registry.get(p).version) for p in spec.produces)]:
            report.probes.setdefault(
                name,
                ProbeRecord(
                    name=name,
                    version=version,
                    status="error",
                    error=report.exit_reason or "the run ended before this probe ran",
                    cause=Cause.NOT_RUN,
                ),
            )
    report.finished_at = report.finished_at or _now()
    score_report(report, scenario, rubric, out_dir)
    save(report, out_dir)
    return report


async def execute(
    candidate: Path | str,
    scenario: Scenario,
    profile: Profile,
    out_dir: Path,
    *,
    progress: Progress | None = None,
    label: Optional[str] = None,
) -> Report:
    """Run `profile` on one candidate into out_dir; returns the scored, written report."""
    progress = progress or Progress()
    demo = load_demo(candidate)
    specs = profile.specs()
    rubric = profile.rubric()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    report = new_report(demo, scenario, rubric, label)
    dog = MemoryWatchdog(float(profile.max_memory_mb))
    _quiet_abandoned_tasks()
    try:
        with dog:
            try:
                await _run(report, demo, scenario, profile, specs, out_dir, progress, dog, started)
            except BenchError as e:
                report.exit_reason = str(e)
                report.warnings.append(f"run stopped: {e}")
            except Exception as e:  # the bench's own fault: keep the report, say what happened
                log.debug("run failed", exc_info=True)
                report.exit_reason = f"internal error: {type(e).__name__}: {e}"
                report.warnings.append(report.exit_reason)
                (out_dir / "bench-error.txt").write_text(traceback.format_exc())
    finally:  # also when interrupted: a report is always written
        if dog.kills:  # before scoring: the items read the evidence as recorded
            report.warnings.append(kill_reason(dog.kills))
            # an extra field of the report, present only when the watchdog killed something
            report.memory_watchdog = {"kills": dog.kills, "peak_mb": round(dog.peak_mb)}  # type: ignore[attr-defined]  # an extra field (extra="allow")
        report.environment["profile"] = profile.name
        if profile.items is not None:
            report.environment["profile_items"] = list(profile.items)
        report.duration_s = round(time.monotonic() - started, 2)
        finish_report(report, specs, scenario, rubric, out_dir)
    return report


def _quiet_abandoned_tasks() -> None:
    """A safety net for this run's event loop: an exception nobody retrieved from a task or
    future (Playwright rejects every pending call with TargetClosedError when a page or
    browser closes under a cancelled probe) is logged at debug level, not printed to the
    terminal as a traceback. The bench awaits or cancels what it starts; this only catches
    what a library leaves behind. Anything else goes to the loop's default handler."""
    loop = asyncio.get_running_loop()

    def handler(loop: asyncio.AbstractEventLoop, context: dict) -> None:
        if "never retrieved" in str(context.get("message", "")):
            log.debug("%s: %r", context.get("message"), context.get("exception"))
            return
        loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


async def run_candidate(
    demo_path: Path | str,
    scenario: Scenario,
    out_dir: Path,
    *,
    probes: Optional[list[str]] = None,
    progress: Progress | None = None,
    network: str = "offline",
    rubric_path: Path | None = None,
    label: Optional[str] = None,
    max_memory_mb: float = DEFAULT_MAX_MEMORY_MB,
) -> Report:
    """`execute` with the run profile (every probe, or those named)."""
    profile = Profile(
        probes=tuple(probes) if probes else None, network=network, rubric_path=rubric_path, max_memory_mb=max_memory_mb
    )
    return await execute(demo_path, scenario, profile, out_dir, progress=progress, label=label)


async def _run(
    report: Report,
    demo,
    scenario: Scenario,
    profile: Profile,
    specs,
    out_dir: Path,
    progress: Progress,
    dog: MemoryWatchdog,
    started: float,
) -> None:
    from playwright.async_api import async_playwright

    network = profile.network
    ondemand = _fetch_named(demo, progress)
    with DemoServer(demo.html) as server:
        demo.url = server.url
        async with async_playwright() as pw:
            handle = BrowserHandle(pw, offline=(network != "allow"), resolvers=extra_resolvers(network, ondemand))
            # the run's wall budget (counted from the run's start), the probes' shares of it and
            # every page's measured frame cost
            handle.budget = budget = RunBudget(scenario.timeouts, started=started)
            await handle.start()
            try:
                await _describe_environment(report, handle, scenario, profile, specs)
                # one display for the whole run where a person watches (run_progress.RunProgress),
                # whose estimate never passes the run's budget
                weights = {s.name: s.budget(scenario) for s in specs}
                view = RunProgress(progress, weights, ends_at=budget.deadline) if progress.run_view else None
                one = _ProbeRunner(report, demo, scenario, profile, specs, out_dir, progress, dog, view)
                try:
                    await _run_in_order(pw, report, scenario, profile, specs, handle, one, progress)
                finally:
                    if view is not None:
                        view.close()
                    # the report lists the probes in run order, however they finished
                    order = [n for s in specs for n in (s.name, *s.produces)]
                    report.probes = {**{n: report.probes[n] for n in order if n in report.probes}, **report.probes}
            finally:
                _close_out(report, handle, network, ondemand, progress)
                await handle.kill()


async def _describe_environment(
    report: Report, handle, scenario: Scenario, profile: Profile, specs: list[ProbeSpec]
) -> None:
    """Calibrate the refresh rate (where a probe of the run plays in real time) and record
    the environment every number of the run is read in."""
    path, source = find_chromium()
    # the refresh interval matters only to timing figures, which real-time probes alone make
    timed = profile.calibrate and any(s.realtime for s in specs)
    cal = await calibrate(handle, scenario) if timed else _not_calibrated(scenario)
    webgl = await environment.webgl_info(handle)
    report.environment = environment.build(handle.version, path, webgl, scenario, cal)
    report.environment["browser_source"] = source
    report.environment["network"] = profile.network
    report.environment["jobs"] = profile.jobs
    if timed and not cal["within_tolerance"]:
        report.warnings.append(
            f"calibration: measured refresh interval {cal['refresh_interval_ms']} ms is more than "
            f"{cal['tolerance_ms']} ms off {cal['expected_interval_ms']} ms; timing figures are not comparable"
        )


class _ProbeRunner:
    """Runs one probe on a given browser, within its share of the run's budget, and files its
    records in the report."""

    def __init__(self, report, demo, scenario, profile, specs, out_dir, progress, dog, view) -> None:
        self.report, self.demo, self.scenario, self.profile = report, demo, scenario, profile
        self.specs, self.out_dir, self.progress, self.dog, self.view = specs, out_dir, progress, dog, view
        self.begun: set[str] = set()  # probes started (their budgets no longer wait for a share)

    async def __call__(self, spec: ProbeSpec, h) -> None:
        share = await self._share(spec, h)
        if share is not None and share.seconds < self.scenario.timeouts.min_share_s:
            rec = ProbeRecord(
                name=spec.name,
                version=spec.version,
                status="error",
                error=share.reason(started=False),
                cause=Cause.BUDGET,
            )
            self.progress.log(f"[yellow]probe {spec.name}: {rec.error}[/]")
        else:
            rec = await self._run(spec, h, share)
        for r in _records_of_pass(spec, rec):
            self.report.probes[r.name] = r

    async def _share(self, spec: ProbeSpec, h) -> Share | None:
        """The probe's share of what is left of the run (RunBudget.share), set now. The page's
        frame cost is measured cheaply first when no page has and it decides something: the
        probes still to run have more budget than is left (a full run; not a short check)."""
        b: RunBudget | None = getattr(h, "budget", None)
        if b is None:
            return None
        self.begun.add(spec.name)
        own = float(spec.budget(self.scenario))
        pending_s = sum(float(s.budget(self.scenario)) for s in self.specs if s.name not in self.begun or s is spec)
        t = self.scenario.timeouts
        if b.frame_cost_ms() is None and not b.real_time_tried and t.min_share_s + t.load_s < b.left_s() < pending_s:
            b.real_time_tried = True  # once: a page that does not answer is not asked again
            b.real_time_cost_ms = await measure_real_time_cost(h, self.scenario, self.demo.url)
        return b.share(spec.name, own, pending_s, spec.realtime)

    async def _run(self, spec: ProbeSpec, h, share: Share | None) -> ProbeRecord:
        p = self.view.probe(spec.name) if self.view is not None else self.progress
        if self.view is not None and share is not None and share.binding:
            self.view.set_share(spec.name, share.ends_at)
        try:
            return await _run_probe(
                spec,
                self.demo,
                self.scenario,
                self.out_dir,
                h,
                self.report,
                p,
                self.dog,
                wanted=review_material_wanted(spec, self.scenario, self.report, self.profile),
                readers=readers_of(spec, self.specs),
                share=share,
            )
        finally:
            if self.view is not None:
                p.finish()


async def _run_in_order(pw, report, scenario, profile, specs, handle, one, progress) -> None:
    """Real time first and alone (a browser beside it would disturb what it measures), in
    run order; then the fake-clock probes, side by side on `jobs` browsers, each after the
    probes whose evidence it reads. Or, with `run --overlap pinned`, the fake-clock probes
    during the real-time ones on cores of their own (overlap_pass.py)."""
    realtime = [s for s in specs if s.realtime]
    rest = [s for s in specs if not s.realtime]
    weight = lambda s: float(s.budget(scenario))  # noqa: E731
    extra: list = []
    try:
        why = None
        if profile.overlap != "off":
            extra, why = await _try_overlap(
                pw, report, scenario, profile, realtime, rest, handle, one, progress, weight
            )
        if not extra or why:
            if profile.overlap != "off":
                report.environment["overlap"] = {"mode": profile.overlap, "used": False, "why": why}
            for spec in realtime:
                await one(spec, handle)
            want = min(profile.jobs, len(rest)) - 1
            while len(extra) > max(0, want):
                await extra.pop().kill()
            extra += await more_browsers(pw, handle, want - len(extra))
            await run_side_by_side(rest, [handle, *extra], one, weight=weight)
    finally:
        for h in extra:
            await h.kill()


async def _try_overlap(pw, report, scenario, profile, realtime, rest, handle, one, progress, weight):
    """`run --overlap`: the overlapped pass when it can run; else why not (the caller then
    runs the default order). Returns the extra browsers started and the reason, if any."""
    if not (realtime and rest):
        return [], ("no real-time probe in this run" if not realtime else "no fake-clock probe in this run")
    extra = await more_browsers(pw, handle, max(1, min(profile.jobs, len(rest))))
    if not extra:
        return extra, "no second browser could be started"
    try:
        await run_overlapped(report, scenario, profile, realtime, rest, handle, extra, one, progress, weight)
    except NoOverlap as e:  # nothing ran yet: the default order instead
        report.warnings.append(f"--overlap {profile.overlap}: {e}; the real-time probes ran alone first, as without it")
        progress.log(f"[yellow]{report.warnings[-1]}[/]")
        return extra, str(e)
    return extra, None


def _close_out(report: Report, handle, network: str, ondemand, progress: Progress) -> None:
    """What the run's browser saw, whatever happened to the probes: the network log (the
    pseudo-probe "network": packaging.single_file reads it, rescore finds it in the
    report), the missing libraries and fetches, the page events and the render cost."""
    report.probes["network"] = ProbeRecord(
        name="network",
        data={
            "requests": [r.to_json() for r in handle.requests],
            "misses": list(handle.misses),
            "mode": network,
            "served_from_cache": _served_from_cache(handle),
        },
    )
    # which library is missing and how to add it, in the report and the terminal
    for miss in dict.fromkeys(handle.misses):
        report.warnings.append(f"offline library cache: {miss}")
    _note_fetches(report, handle, ondemand)
    _page_events(report, handle)
    _render_cost(report, handle, progress)


def _not_calibrated(scenario: Scenario) -> dict:
    """A run that measures no timing (the check profile, or no real-time probe chosen) skips
    the refresh calibration; the environment says so instead of a refresh interval."""
    return {
        "refresh_interval_ms": None,
        "within_tolerance": None,
        "skipped": "no probe of this run plays in real time",
        "expected_interval_ms": scenario.calibration.expected_interval_ms,
        "tolerance_ms": scenario.calibration.tolerance_ms,
    }


def _served_from_cache(handle) -> list[dict]:
    """What the offline library cache served this run (package, version, path, sha256), so
    two runs are known to have used the same library bytes."""
    return served_from_cache(handle.resolvers)


def _thrown(evs: list) -> ThrownLog:
    """The errors every page's demo code threw, as one log."""
    log = ThrownLog()
    for e in evs:
        log = log.merged(e.thrown)
    return log


def _page_events(report: Report, handle) -> None:
    """What the demo did to the pages the bench opened (dialogs, popups, navigation away,
    renderer crashes), as the pseudo-probe 'page_events' and as warnings: a hostile demo's
    report says what it did."""
    evs = getattr(handle, "page_events", [])
    dialogs = [d for e in evs for d in e.dialogs]
    n_dialogs = sum(e.dialog_count for e in evs)
    popups = [u for e in evs for u in e.popups]
    left = [e.navigations[-1] if e.navigations else "?" for e in evs if e.documents > 1]
    crashed = sum(1 for e in evs if e.crashed)
    report.probes["page_events"] = ProbeRecord(
        name="page_events",
        data=PageEventsEvidence(
            pages=len(evs),
            dialogs=dialogs[:50],
            dialog_count=n_dialogs,
            popups=popups[:50],
            popup_count=len(popups),
            left_document=left[:20],
            renderer_crashes=crashed,
            page_errors=[m for e in evs for m in e.page_errors][:20],
            thrown=_thrown(evs).to_json(),
        ),
    )
    if n_dialogs:
        kinds = sorted({d["type"] for d in dialogs})
        report.warnings.append(f"the demo opened {n_dialogs} dialog(s) ({', '.join(kinds)}); the bench dismissed them")
    if popups:
        report.warnings.append(
            f"the demo opened {len(popups)} popup window(s) (first: {popups[0][:120]}); the bench closed them"
        )
    if left:
        report.warnings.append(
            f"the demo navigated away from its own document on {len(left)} page(s) (to {left[0][:120]})"
        )
    if crashed:
        report.warnings.append(f"the demo's renderer crashed on {crashed} page(s)")


def _render_cost(report: Report, handle, progress: Progress) -> None:
    """How slow the renderer was (each viewport's measured frame cost, how many
    pages were stepped coarsely, whether the demo's clock kept up), in the report's
    environment, and one warning line (also on the terminal) when it was slow."""
    b = getattr(handle, "budget", None)
    if b is None:
        return
    report.environment["render_cost"] = {
        "viewports": b.summary(),
        "run_budget_s": b.t.run_s,
        "beyond_real_time_s": round(b.beyond_real_time_s, 1),
    }
    line = b.slow_line()
    if line:
        report.warnings.append(line)
        progress.log(f"[yellow]{line}[/]")


class _ShareSpent(TimeoutError):
    """A probe stopped at the end of its share of the run's budget (before its own budget)."""


async def _within_budget(coro, budget: float, handle, share: Share | None = None):
    """Await a probe for `budget` seconds, plus the time its pages spent rendering beyond
    real time (a slow renderer, browser/clock_budget.py), never past the end of its share of
    the run (`share`; without one, the run's budget). Raises TimeoutError (its argument says
    how far it was extended), or _ShareSpent when the share ended it."""
    b = getattr(handle, "budget", None)
    task = asyncio.ensure_future(coro)
    start = time.monotonic()
    base = b.beyond_real_time_s if b else 0.0
    cap = share.ends_at if share is not None else (b.deadline if b else float("inf"))
    deadline = min(start + budget, cap)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=max(0.0, deadline - time.monotonic()))
            if done:
                return task.result()
            extra = (b.beyond_real_time_s - base) if b else 0.0
            new = min(start + budget + extra, cap)
            if new <= time.monotonic() + 0.05:
                if share is not None and share.binding and cap < start + budget + extra:
                    raise _ShareSpent(share.reason())
                raise TimeoutError(f" + {extra:.0f} s of slow rendering" if extra >= 1 else "")
            deadline = new
    finally:
        if not task.done():
            task.cancel()
        try:  # its end, whatever it was, is retrieved here (never "exception never retrieved")
            await task
        except BaseException:
            pass


def _settings(spec: ProbeSpec, scenario: Scenario):
    """A registry probe's settings from the scenario; a profile's own step (not in the
    registry) brings its settings model, validated against the scenario section of the same
    name when there is one (check's hover-only shops step reads probes.shops)."""
    if spec.name in registry.names() and registry.get(spec.name) is spec:
        return scenario.probe_settings(spec.name)
    return spec.settings.model_validate(scenario.probes.get(spec.name) or {})


def _records_of_pass(spec: ProbeSpec, rec: ProbeRecord) -> list[ProbeRecord]:
    """One record per probe whose evidence the pass yielded (ProbeSpec.produces): its data
    is keyed by probe name, ok or not; a produced probe shares the pass's status, error
    (said to be the pass's) and wall time."""
    if not spec.produces:
        return [rec]
    parts = rec.data if isinstance(rec.data, dict) else {}
    out = []
    for name in (spec.name, *spec.produces):
        own = name == spec.name
        r = ProbeRecord(
            name=name,
            version=spec.version if own else registry.get(name).version,
            status=rec.status,
            error=rec.error
            if own or rec.error is None
            else f"{spec.name}'s pass, which collects it, stopped: {rec.error}",
            cause=rec.cause,
            duration_s=rec.duration_s,
        )
        part = parts.get(name)
        if isinstance(part, ProbeError) and rec.status == "ok":
            # the pass went on but this part could not be finished (a tour its
            # wall-clock budget stopped keeps the shortened video; the timeline needs the
            # whole tour): its own error and partial data
            r.status, r.error, r.cause, part = "error", str(part), part.cause, part.data
        r.data = part or {}
        out.append(r)
    return out


def review_material_wanted(spec: ProbeSpec, scenario: Scenario, report: Report, profile: Profile) -> Optional[Wanted]:
    """Whether this run wants the review material a probe makes (ProbeSpec.review_material_for;
    realtime_capture: the video for 录屏复核 of smoothness.frame_pacing), from the probe's
    `when` setting: never; always (`run --realtime-capture` sets it); or review, when the
    item, scored with this run's rubric on the evidence collected so far, ends in review (a
    reviewer has to look). None for a probe that makes none."""
    item = spec.review_material_for
    if item is None:
        return None
    where = f"probes.{spec.name}.when"
    when = _settings(spec, scenario).when
    if when == "never":
        return Wanted(False, f"the scenario says never ({where})")
    if when == "always":
        return Wanted(True, f"requested ({where}: always; `run --realtime-capture` sets it)")
    unread = [p for p in spec.after if p not in report.probes or report.probes[p].status != "ok"]
    if unread:
        return Wanted(False, f"{', '.join(unread)} did not collect its evidence: {item} cannot end in review")
    rubric = profile.rubric()
    if item not in {i.id for i in rubric.items}:
        return Wanted(False, f"not needed: this run does not score {item}")
    so_far = report.model_copy(update={"items": {}, "measurements": {}, "probes": dict(report.probes)})
    status = score_report(so_far, scenario, scoped_rubric(rubric, [item]), None).items[item].status
    if status == "review":
        return Wanted(True, f"{item} ended in review")
    return Wanted(
        False, f"not needed: {item} ended in {status} (made for review; {where}: always makes it in every run)"
    )


def readers_of(spec: ProbeSpec, specs: Sequence[ProbeSpec]) -> tuple[str, ...]:
    """The probes of this run that read `spec`'s evidence (or that of a probe its pass
    produces): they name it in ProbeSpec.after (ProbeContext.readers)."""
    mine = {spec.name, *spec.produces}
    return tuple(s.name for s in specs if s is not spec and set(s.after) & mine)


def _stopped(spec: ProbeSpec, ctx: ProbeContext, rec: ProbeRecord, why: str, progress: Progress) -> None:
    """A probe the budget stopped: an error with the budget's cause, or, where it finished
    parts that stand alone (ProbeSpec.close_stopped), evidence of those, its other parts
    untested with `why`: what was observed keeps its verdict."""
    closed = spec.close_stopped(ctx, why) if spec.close_stopped is not None and ctx.kept else None
    if closed is None:
        rec.status, rec.error, rec.cause = "error", why, Cause.BUDGET
        return
    rec.data = closed
    progress.log(f"[yellow]probe {spec.name}: {why}; kept what it finished ({', '.join(ctx.kept)})[/]")


async def _run_probe(
    spec,
    demo,
    scenario,
    out_dir,
    handle,
    report,
    progress,
    dog: MemoryWatchdog,
    *,
    wanted: Optional[Wanted] = None,
    readers: tuple[str, ...] = (),
    share: Share | None = None,
) -> ProbeRecord:
    budget = float(spec.budget(scenario))
    ctx = ProbeContext(
        demo=demo,
        scenario=scenario,
        out_dir=out_dir,
        browser=handle,
        settings=_settings(spec, scenario),
        artifacts=dict(report.probes),
        progress=progress,
        produces=spec.produces,
        wanted=wanted,
        readers=readers,
    )
    t = time.monotonic()
    rec = ProbeRecord(name=spec.name, version=spec.version)
    try:
        rec.data = await _within_budget(spec.collect(ctx), budget, handle, share)
    except TimeoutError as e:  # its share of the run ended (_ShareSpent), or its own budget
        more = e.args[0] if e.args else ""
        own = f"probe ran past its budget of {budget:.0f} s{more} (demo hangs or is too slow)"
        _stopped(spec, ctx, rec, str(e) if isinstance(e, _ShareSpent) else own, progress)
        await handle.restart()
    except (DemoHang, DemoCrash) as e:
        rec.status, rec.error, rec.cause, rec.data = "error", str(e), e.cause, e.data
        await handle.restart()
    except ProbeError as e:
        rec.status, rec.error, rec.cause, rec.data = "error", str(e), e.cause, e.data
    except Exception as e:
        rec.status, rec.cause = "error", Cause.BENCH
        rec.error = f"probe failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        log.debug("probe %s failed", spec.name, exc_info=True)
        if handle.browser is None or not handle.browser.is_connected():
            await handle.restart()
    kills = dog.kills_since(t)
    if kills and rec.status == "error":
        # the watchdog's kill is why this probe lost its page: say so in its evidence, so
        # the items it leaves untested name the memory blow-up, not a crash
        rec.error = f"{rec.error} — {kill_reason(kills)}"
        rec.cause = Cause.CRASH
    rec.duration_s = round(time.monotonic() - t, 2)
    if rec.status == "error":
        progress.log(f"[yellow]probe {spec.name}: {rec.error}[/]")
    return rec
