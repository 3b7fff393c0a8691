"""What one frame of the tour pass costs, part by part (the recording's own added cost, the
tour pass with its encoding, <= 70 s at 1920x1080 on the 2-core machine).

Opens the reference demo (scenarios/demos/reference.html) at the scenario's viewport under
the fake clock, as the tour pass does, steps to `--at` (20 s: inside density's window) and
then over a short span (`--frames` video frames at the recording's fps, 2 s by default; never
the whole 65 s tour) measures, per frame:

  - step: the clock advance to the frame (the demo renders it; DemoPage.run_for);
  - each capture the pass can take (Page.captureScreenshot): the video frame as the
    recording takes it (JPEG at jpeg_quality, at the video's size), the video frame at full
    size (before), the timeline's PNG scaled to analysis_width, a keyframe PNG at full size,
    density's lossless full-size PNG (DemoPage.screenshot_png);
  - the encoder's work on the video frame (worker thread: decode + BGR->I420 + encode,
    CPU ms), at full size and at the video's size;
  - the timeline's registration (probes/_tour._Analyzer.feed: decode, register, thumbnail);
  - density's frame write: Chromium's PNG bytes written as sent (nothing re-encoded).

Then the tour's estimate: per-frame figures times the pass's counts of each kind (1950 video
frames, the timeline's samples, density's frames, the keyframes) beside the 70 s target, in
CPU terms (the browser and the encoder thread share the 2 cores) and as wall time.

Where a step's and a capture's time goes (`--options-frames`, 12 frames after the span, and
`--step-frames`, 90 steps; 0 skips either): on the same page, in rotating or interleaved
order so the machine's load affects each alike,

  - each capture option of Page.captureScreenshot on the same frame: JPEG / WebP / PNG at
    the viewport's size, at the video's (clip scale) and at half of that, an 8x8 px clip
    (what any capture costs before its pixels), JPEG without optimizeForSpeed; wall ms and
    the CPU ms each of Chromium's processes (renderer, GPU/viz, browser) and Playwright's
    driver spent on it (read from /proc), and the bytes;
  - a step's parts: the pass's advance now (DemoPage.run_for: the budget watch reads the
    page's clock, then the page's clock controller's runFor straight through CDP,
    DemoPage._clock_run_for) and before (the same through Playwright's clock.run_for, which
    also registers an init script per call so that a reloaded page replays the clock),
    Playwright's clock.run_for alone, and one read of performance.now() (one round trip);
  - with --gil, whether the encoder's thread blocks the capture loop: how often the main thread runs
    while the thread decodes a frame and encodes one (PyAV and OpenCV release the GIL when
    it is about the same as when the thread idles).

Real time, noisy under load: the load average is printed with every figure; CPU ms are
the steadier figure on a shared machine (10 ms ticks: means over the frames).

    .venv/bin/python benchmarks/tour_cost.py [--frames 60] [--at 20] [--options-frames 12] [--step-frames 90]
                                             [--gil] [--demo FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_RECORDING_S = 70.0


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


class Timer:
    def __init__(self):
        self.ms: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}

    def add(self, k: str, wall_s: float, cpu_s: float | None = None) -> None:
        self.ms.setdefault(k, []).append(wall_s * 1000)
        if cpu_s is not None:
            self.cpu.setdefault(k, []).append(cpu_s * 1000)

    def med(self, k: str) -> float:
        return statistics.median(self.ms[k]) if self.ms.get(k) else 0.0

    def cmed(self, k: str) -> float:
        return statistics.median(self.cpu[k]) if self.cpu.get(k) else 0.0


def _proc_tree() -> dict[int, str]:
    """This process's Chromium processes and Playwright's driver by kind (renderer, gpu,
    browser, other, driver), read from /proc (Linux)."""
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    out, todo = {}, list(kids.get(os.getpid(), []))
    while todo:
        p = todo.pop()
        todo += kids.get(p, [])
        try:
            cmd = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "run-driver" in cmd:
            out[p] = "driver"
        elif "chrom" in cmd:
            out[p] = next(
                (k for k, flag in (("renderer", "--type=renderer"), ("gpu", "--type=gpu-process")) if flag in cmd),
                "other" if "--type=" in cmd else "browser",
            )
    return out


_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_by_kind(procs: dict[int, str]) -> dict[str, float]:
    """CPU seconds so far of each kind of process in `procs`."""
    out: dict[str, float] = {}
    for p, kind in procs.items():
        try:
            f = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        out[kind] = out.get(kind, 0.0) + (int(f[11]) + int(f[12])) / _TCK
    return out


PROC_KINDS = ("renderer", "gpu", "browser", "driver")


class Parts:
    """Wall ms, CPU ms per process kind and bytes of named operations."""

    def __init__(self, procs: dict[int, str]):
        self.procs = procs
        self.wall: dict[str, list[float]] = {}
        self.cpu: dict[str, dict[str, list[float]]] = {}
        self.bytes: dict[str, list[int]] = {}

    async def time(self, k: str, coro):
        c0, w0 = _cpu_by_kind(self.procs), time.perf_counter()
        r = await coro
        w1, c1 = time.perf_counter(), _cpu_by_kind(self.procs)
        self.wall.setdefault(k, []).append((w1 - w0) * 1000)
        for kind in PROC_KINDS:
            self.cpu.setdefault(k, {}).setdefault(kind, []).append((c1.get(kind, 0.0) - c0.get(kind, 0.0)) * 1000)
        if isinstance(r, bytes):
            self.bytes.setdefault(k, []).append(len(r))
        return r

    def rows(self) -> list[dict]:
        out = []
        for k, w in self.wall.items():
            cpu = {kind: statistics.mean(v) for kind, v in self.cpu[k].items()}
            out.append(
                {
                    "part": k,
                    "wall_ms": statistics.median(w),
                    "cpu_ms": cpu,
                    "cpu_sum_ms": sum(cpu.values()),
                    "kib": round(statistics.median(self.bytes[k]) / 1024) if self.bytes.get(k) else None,
                }
            )
        return out


async def measure_options(dp, st, sc, at_s: float, n: int, n_steps: int) -> tuple[list[dict], list[dict]]:
    """Capture options on the same page over n frames from at_s (rotating order), then a
    step's parts over n_steps steps (interleaved); returns (capture rows, step rows)."""
    from skycity_bench.probes._stepper import on_grid
    from skycity_bench.probes.recording import video_size

    rs, vp = sc.probe_settings("recording"), sc.viewport
    vw, _ = video_size(vp.width, vp.height, rs.max_video_height)
    scale = vw / vp.width
    q = rs.jpeg_quality

    def shot(fmt, *, quality=None, scale=1.0, clip=None, fast=True):
        params = {"format": fmt, "optimizeForSpeed": fast, "captureBeyondViewport": False}
        if quality is not None:
            params["quality"] = quality
        box = clip or ({"x": 0, "y": 0, "width": vp.width, "height": vp.height} if scale != 1.0 else None)
        if box is not None:
            params["clip"] = {**box, "scale": scale}

        async def go():
            import base64

            r = await dp.call(st.cdp.send("Page.captureScreenshot", params), 30, "screenshot")
            return base64.b64decode(r["data"])

        return go

    h = video_size(vp.width, vp.height, rs.max_video_height)[1]
    captures = {
        f"JPEG q{q} {vp.width}x{vp.height} (timeline frames)": shot("jpeg", quality=q),
        f"JPEG q{q} at the video's {h} rows (clip scale; plain video frames)": shot("jpeg", quality=q, scale=scale),
        f"JPEG q{q} at {h // 2} rows (clip scale)": shot("jpeg", quality=q, scale=scale / 2),
        f"JPEG q{q} at {h} rows, optimizeForSpeed off": shot("jpeg", quality=q, scale=scale, fast=False),
        f"WebP q{q} at {h} rows": shot("webp", quality=q, scale=scale),
        f"PNG at {h} rows": shot("png", scale=scale),
        f"PNG {vp.width}x{vp.height} (keyframes, density)": shot("png"),
        f"PNG {vp.width}x{vp.height}, optimizeForSpeed off (smaller, same pixels)": shot("png", fast=False),
        "JPEG 8x8 px clip (a capture's cost before pixels)": shot(
            "jpeg", quality=q, clip={"x": 0, "y": 0, "width": 8, "height": 8}
        ),
    }
    parts = Parts(_proc_tree())
    steps = Parts(parts.procs)
    names = list(captures)
    t = at_s

    async def grid_step(kind: str) -> None:
        nonlocal t
        t = on_grid(t + 1 / rs.fps)
        ms = math.ceil(t * 1000.0 - st.pos_ms + 1e-3)
        if kind in ("now", "before"):
            dp.direct_clock = kind == "now"
            try:
                await st.to(t)
            finally:
                dp.direct_clock = True
            return
        await dp.call(dp.page.clock.run_for(ms), 30, "clock")
        st.pos_ms += ms

    step_kinds = [
        ("now", "step now (DemoPage.run_for: clock read + the controller's runFor via CDP)"),
        ("before", "step before (DemoPage.run_for: clock read + Playwright's clock.run_for)"),
        ("playwright", "Playwright's page.clock.run_for alone (no clock read)"),
    ]
    for i in range(n):
        await grid_step("now")
        for k in names[i % len(names) :] + names[: i % len(names)]:
            await parts.time(k, captures[k]())
    # the steps apart, many of them (their differences are a few ms): each followed by the
    # plain video frame's capture, as in the pass
    for i in range(n_steps):
        kind, label = step_kinds[i % len(step_kinds)]
        await steps.time(label, grid_step(kind))
        if i % len(step_kinds) == 0:
            await steps.time("one page round trip (performance.now())", dp.page.evaluate("performance.now()"))
        await captures[names[1]]()
    return parts.rows(), steps.rows()


def gil_check(seconds_each: int = 30) -> dict:
    """How often the main thread runs (iterations per ms) while a worker thread decodes the
    full-size JPEG and encodes frames at the video's size, against while it sleeps: about the
    same means the work releases the GIL and does not hold up the capture loop."""
    import threading

    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.media.video_encode import VideoEncoder, pick

    rs = load_scenario().probe_settings("recording")
    rng = np.random.default_rng(1)
    big = cv2.GaussianBlur((rng.random((1080, 1920, 3)) * 255).astype(np.uint8), (0, 0), 3)
    jpg = cv2.imencode(".jpg", big, [cv2.IMWRITE_JPEG_QUALITY, rs.jpeg_quality])[1].tobytes()
    small = cv2.resize(big, (1280, 720), interpolation=cv2.INTER_AREA)
    tmp = Path(tempfile.mkdtemp(prefix="tour-cost-gil-"))
    out = {}
    for what in ("idle", "decode", "encode"):
        busy: list[tuple[float, float]] = []
        enc = VideoEncoder(tmp / "g.webm", 1280, 720, rs.fps, codec=pick(rs.codecs), bitrate_mbps=rs.bitrate_mbps)
        enc.write(small)

        def work():
            for _ in range(seconds_each):
                t0 = time.perf_counter()
                if what == "decode":
                    cv2.imdecode(np.frombuffer(jpg, np.uint8), cv2.IMREAD_COLOR)
                elif what == "encode":
                    enc.write(small)
                else:
                    time.sleep(0.02)
                busy.append((t0, time.perf_counter()))

        th = threading.Thread(target=work)
        th.start()
        ticks = []
        while th.is_alive():
            x = 0
            for _ in range(200):
                x += 1
            ticks.append(time.perf_counter())
        th.join()
        enc.close()
        import bisect

        inside = sum(bisect.bisect(ticks, b) - bisect.bisect(ticks, a) for a, b in busy)
        dur = sum(b - a for a, b in busy)
        out[what] = {"work_ms": round(dur / len(busy) * 1000, 1), "main_per_ms": round(inside / dur / 1000, 2)}
    return out


async def measure(demo: Path, at_s: float, n: int, n_options: int = 0, n_steps: int = 0) -> tuple[Timer, dict]:
    from playwright.async_api import async_playwright

    from skycity_bench.browser.server import DemoServer
    from skycity_bench.browser.session import BrowserHandle
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.media.video_encode import VideoEncoder, pick
    from skycity_bench.probes import _tour
    from skycity_bench.probes._city_name import CANVAS_TEXT_JS
    from skycity_bench.probes._stepper import RAF_60HZ_JS, Stepper, decode
    from skycity_bench.probes.recording import video_size
    from skycity_bench.running.runner import extra_resolvers

    sc = load_scenario()
    rs, ts = sc.probe_settings("recording"), sc.probe_settings("timeline")
    vp = sc.viewport
    vw, vh = video_size(vp.width, vp.height, rs.max_video_height)
    codec = pick(rs.codecs)
    tm = Timer()
    tmp = Path(tempfile.mkdtemp(prefix="tour-cost-"))
    info = {
        "viewport": f"{vp.width}x{vp.height}",
        "video": f"{vw}x{vh}",
        "codec": codec,
        "jpeg_quality": rs.jpeg_quality,
        "sizes": {},
    }
    sizes: dict[str, list[int]] = {}
    psnr: list[float] = []
    with DemoServer(demo.read_bytes()) as srv:
        async with async_playwright() as pw:
            h = await BrowserHandle(pw, resolvers=extra_resolvers("offline")).start()
            try:
                dp = await h.open_page(sc, srv.url, fake_clock=True, init_scripts=[RAF_60HZ_JS, CANVAS_TEXT_JS])
                dp.direct_clock = True  # as the tour pass steps (DemoPage._clock_run_for)
                st = await Stepper(dp).start()
                await st.to(at_s, picture_only=True)
                full = VideoEncoder(
                    tmp / "full.webm",
                    vp.width,
                    vp.height,
                    rs.fps,
                    codec=codec,
                    bitrate_mbps=rs.bitrate_mbps,
                    threads=rs.encoder_threads,
                )
                small = VideoEncoder(
                    tmp / "small.webm",
                    vw,
                    vh,
                    rs.fps,
                    codec=codec,
                    bitrate_mbps=rs.bitrate_mbps,
                    threads=rs.encoder_threads,
                )
                # the full-size JPEG scaled by the encoder's thread (its own file: one source a file)
                scaled = VideoEncoder(
                    tmp / "scaled.webm",
                    vw,
                    vh,
                    rs.fps,
                    codec=codec,
                    bitrate_mbps=rs.bitrate_mbps,
                    threads=rs.encoder_threads,
                )
                an = _tour._Analyzer(ts)
                scale = vw / vp.width
                for i in range(n):
                    t = at_s + (i + 1) / rs.fps

                    async def timed(k, coro):
                        c0 = time.perf_counter()
                        r = await coro
                        tm.add(k, time.perf_counter() - c0)
                        if isinstance(r, bytes):
                            sizes.setdefault(k, []).append(len(r))
                        return r

                    await timed("step (clock advance + render)", st.to(t))
                    # the two video captures in alternating order (the first capture after a
                    # step can pay for the frame's compositing)
                    for first in (True, False) if i % 2 else (False, True):
                        if first:
                            jf = await timed(
                                "capture video JPEG full size (before)", st.capture("jpeg", quality=rs.jpeg_quality)
                            )
                        else:
                            js_ = await timed(
                                "capture video JPEG scaled by Chromium (clip scale)",
                                st.capture("jpeg", quality=rs.jpeg_quality, scale=scale),
                            )
                    await timed(
                        "capture timeline PNG scaled", st.capture("png", scale=min(1.0, ts.analysis_width / vp.width))
                    )
                    if i % 10 == 0:
                        await timed("capture keyframe PNG full size", st.capture("png"))
                    dpng = await timed("capture density PNG full (screenshot_png)", dp.screenshot_png())
                    # the same frame through Chromium's scaling and through the encoder's (the
                    # video mixes both: they must look alike)
                    psnr.append(cv2.PSNR(decode(js_), small.fit(decode(jf))))
                    for k, enc, data in (
                        ("encode thread: JPEG full -> decode+encode (before)", full, jf),
                        ("encode thread: JPEG scaled by Chromium -> decode+encode", small, js_),
                        ("encode thread: JPEG full -> decode+scale+encode (timeline frames)", scaled, jf),
                    ):
                        c0, u0 = time.perf_counter(), time.thread_time()
                        enc.write(decode(data))
                        tm.add(k, time.perf_counter() - c0, time.thread_time() - u0)
                    for k, data in (("registration from the full JPEG (before and now)", jf),):
                        c0, u0 = time.perf_counter(), time.thread_time()
                        an.feed(t, data)
                        tm.add(k, time.perf_counter() - c0, time.thread_time() - u0)
                    # density's write: Chromium's PNG bytes as sent (no decode, no re-encoding)
                    c0, u0 = time.perf_counter(), time.thread_time()
                    (tmp / "d.png").write_bytes(dpng)
                    tm.add("density write: Chromium's PNG bytes", time.perf_counter() - c0, time.thread_time() - u0)
                for enc in (full, small, scaled):
                    enc.close()
                if n_options > 0 or n_steps > 0:
                    info["capture_options"], info["step_parts"] = await measure_options(
                        dp, st, sc, at_s + (n + 1) / rs.fps, n_options, n_steps
                    )
                await dp.close()
            finally:
                await h.kill()
    info["sizes"] = {k: round(statistics.median(v) / 1024) for k, v in sizes.items()}
    info["psnr_chromium_vs_encoder_scaling_db"] = round(statistics.median(psnr), 1)
    info["video_bytes"] = {k: (tmp / f"{k}.webm").stat().st_size for k in ("full", "small", "scaled")}
    return tm, info


def estimate(tm: Timer, counts: dict, before: bool) -> dict:
    """Seconds of the 65 s tour, from per-frame medians and the pass's counts of each kind
    of step (how the pass captures each: probes/_tour.tour_pass, recording._Video.take)."""
    med, cmed = tm.med, tm.cmed
    step = med("step (clock advance + render)")
    keys = counts["keys"] * med("capture keyframe PNG full size")
    dens = counts["density"] * med("capture density PNG full (screenshot_png)")
    reg = counts["samples"] * cmed("registration from the full JPEG (before and now)")
    if before:  # every video frame a full-size JPEG, encoded at full size
        loop = counts["steps"] * step + counts["video"] * med("capture video JPEG full size (before)") + keys + dens
        worker = counts["video"] * cmed("encode thread: JPEG full -> decode+encode (before)") + reg
    else:  # a JPEG scaled by Chromium; the timeline's full-size JPEG at its sample times
        loop = (
            counts["steps"] * step
            + counts["video_scaled"] * med("capture video JPEG scaled by Chromium (clip scale)")
            + counts["video_full"] * med("capture video JPEG full size (before)")
            + keys
            + dens
        )
        worker = (
            counts["video_scaled"] * cmed("encode thread: JPEG scaled by Chromium -> decode+encode")
            + counts["video_full"] * cmed("encode thread: JPEG full -> decode+scale+encode (timeline frames)")
            + reg
        )
    loop, worker = loop / 1000, worker / 1000
    return {
        "capture loop (s)": round(loop, 1),
        "encoder + registration threads, CPU (s)": round(worker, 1),
        # two cores: the loop's browser work and the worker threads overlap at best
        "tour wall estimate, 2 cores (s)": round(max(loop, (loop + worker) / 2), 1),
        "tour wall estimate, no overlap (s)": round(loop + worker, 1),
    }


def print_options(info: dict, n: int, n_steps: int) -> None:
    if info.get("capture_options"):
        _print_captures(info, n)
    if not info.get("step_parts"):
        return
    print(f"\n== a step's parts ({n_steps} 30 fps steps, interleaved, each followed by the video frame's capture)")
    for r in info["step_parts"]:
        print(
            f"  {r['part']:86s} {r['wall_ms']:8.1f} "
            + " ".join(f"{r['cpu_ms'].get(k, 0):8.1f}" for k in PROC_KINDS)
            + f" {r['cpu_sum_ms']:8.1f}"
        )


def _print_captures(info: dict, n: int) -> None:
    print(f"\n== capture options on the same frames ({n} frames, rotating order; load average: {_load()})")
    print(
        f"  {'capture':62s} {'wall ms':>8s} "
        + " ".join(f"{k:>8s}" for k in PROC_KINDS)
        + f" {'CPU sum':>8s} {'KiB':>6s}"
    )
    for r in info["capture_options"]:
        print(
            f"  {r['part']:62s} {r['wall_ms']:8.1f} "
            + " ".join(f"{r['cpu_ms'].get(k, 0):8.1f}" for k in PROC_KINDS)
            + f" {r['cpu_sum_ms']:8.1f} {str(r['kib'] or ''):>6s}"
        )
    print(
        "  (CPU ms by process: Chromium's renderer, its GPU/viz process, its browser process, Playwright's "
        "driver; means, 10 ms ticks)"
    )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--demo", type=Path, default=ROOT / "scenarios" / "demos" / "reference.html")
    ap.add_argument("--frames", type=int, default=60, help="video frames measured (at 30 fps: 60 = 2 s of demo time)")
    ap.add_argument("--at", type=float, default=20.0, help="demo time the span starts at (s)")
    ap.add_argument(
        "--options-frames",
        type=int,
        default=12,
        help="frames over which the capture options and a step's parts are measured (0: skip)",
    )
    ap.add_argument(
        "--step-frames",
        type=int,
        default=90,
        help="steps over which a step's parts are measured, interleaved (0: skip)",
    )
    ap.add_argument("--gil", action="store_true", help="also check that the encoder's thread leaves the loop running")
    a = ap.parse_args(argv)
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.probes._stepper import frame_times
    from skycity_bench.probes._tour import density_frame_times
    from skycity_bench.probes.density import sample_times

    sc = load_scenario()
    rs, ts, ds = sc.probe_settings("recording"), sc.probe_settings("timeline"), sc.probe_settings("density")
    video = frame_times(rs.end_s, rs.fps)
    samples = frame_times(ts.end_s, ts.sample_fps, include_end=True)
    dens = density_frame_times(
        sample_times(sc.density_sample_times_s, *sc.dense_window_s, ds.step_s),
        [0, ds.delta_frames, *ds.other_pair_frames],
        ds.densify_points,
    )["frames_at"]
    steps = len({round(t, 6) for t in [*video, rs.end_s, *samples, *dens]})
    every = int(round(rs.keyframe_interval_s * rs.fps))
    plain = [round(t, 6) for i, t in enumerate(video) if i % every]
    ss = {round(t, 6) for t in samples}
    full = sum(t in ss for t in plain)
    counts = {
        "steps": steps,
        "video": len(video),
        "samples": len(samples),
        "density": len(dens),
        "keys": len(video[::every]) + 1,
        "video_full": full,
        "video_scaled": len(plain) - full,
    }
    print(f"load average before: {_load()}", flush=True)
    t0 = time.monotonic()
    tm, info = asyncio.run(measure(a.demo, a.at, a.frames, a.options_frames, a.step_frames))
    print(
        f"\n== tour pass per frame: {a.demo.name} at {info['viewport']}, video {info['video']} {info['codec']} "
        f"(JPEG q{info['jpeg_quality']}), {a.frames} frames from t = {a.at:g} s "
        f"({time.monotonic() - t0:.0f} s; load average after: {_load()})"
    )
    print(f"  {'part':58s} {'wall ms':>8s} {'CPU ms':>8s} {'KiB':>6s}")
    for k in tm.ms:
        cpu = f"{tm.cmed(k):8.1f}" if tm.cpu.get(k) else f"{'-':>8s}"
        print(f"  {k:58s} {tm.med(k):8.1f} {cpu} {str(info['sizes'].get(k, '')):>6s}")
    print(
        f"  PSNR of Chromium's scaled frame against the encoder's scaling of the full one: "
        f"{info['psnr_chromium_vs_encoder_scaling_db']} dB (the video mixes both)"
    )
    vb = info["video_bytes"]
    print(
        f"  video files of the span: full size {vb['full'] / 1e6:.2f} MB, scaled by Chromium {vb['small'] / 1e6:.2f} MB, "
        f"scaled by the encoder's thread {vb['scaled'] / 1e6:.2f} MB (6 Mbit/s: the same bitrate at every size)"
    )
    if info.get("capture_options") or info.get("step_parts"):
        print_options(info, a.options_frames, a.step_frames)
    if a.gil:
        g = gil_check()
        print(
            f"\n== the encoder's thread and the capture loop (main-thread iterations per ms while the thread works; "
            f"load average: {_load()})"
        )
        idle = g["idle"]["main_per_ms"] or 1e-9
        for k, v in g.items():
            print(
                f"  {k:8s} {v['work_ms']:7.1f} ms a frame   main thread {v['main_per_ms']:5.2f}/ms "
                f"({v['main_per_ms'] / idle:4.0%} of its rate beside the idle thread)"
            )
        held = [k for k in ("decode", "encode") if g[k]["main_per_ms"] < 0.1 * idle]
        print(
            "  a thread holding the GIL leaves the main thread ~0 % while it works; "
            + (f"HELD by: {', '.join(held)}" if held else "both release it (below 100 %: the two share the cores)")
        )
    print(f"\n== the 65 s tour: {counts}")
    for label, before in (("before (full-size video)", True), ("now", False)):
        e = estimate(tm, counts, before)
        print(f"  {label}:")
        for k, v in e.items():
            print(f"    {k:44s} {v:8.1f}   target <= {TARGET_RECORDING_S:g} s (the tour's wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
