"""What one frame of the tour pass costs, part by part (issue 18: the recording's own added
cost, the tour pass with its encoding, <= 70 s at 1920x1080 on the 2-core machine).

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

Real time, noisy under load: the load average is printed with every figure.

    .venv/bin/python benchmarks/tour_cost.py [--frames 60] [--at 20] [--demo FILE]
"""

from __future__ import annotations

import argparse
import asyncio
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


async def measure(demo: Path, at_s: float, n: int) -> tuple[Timer, dict]:
    from playwright.async_api import async_playwright

    from skycity_bench.browser.server import DemoServer
    from skycity_bench.browser.session import BrowserHandle
    from skycity_bench.probes import _tour
    from skycity_bench.probes._city_name import CANVAS_TEXT_JS
    from skycity_bench.probes._stepper import RAF_60HZ_JS, Stepper, decode
    from skycity_bench.probes.recording import video_size
    from skycity_bench.runner import extra_resolvers
    from skycity_bench.scenario import load_scenario
    from skycity_bench.video_encode import VideoEncoder, pick

    sc = load_scenario()
    rs, ts = sc.probe_settings("recording"), sc.probe_settings("timeline")
    vp = sc.viewport
    vw, vh = video_size(vp.width, vp.height, rs.max_video_height)
    codec = pick(rs.codecs)
    tm = Timer()
    tmp = Path(tempfile.mkdtemp(prefix="tour-cost-"))
    info = {"viewport": f"{vp.width}x{vp.height}", "video": f"{vw}x{vh}", "codec": codec,
            "jpeg_quality": rs.jpeg_quality, "sizes": {}}
    sizes: dict[str, list[int]] = {}
    psnr: list[float] = []
    with DemoServer(demo.read_bytes()) as srv:
        async with async_playwright() as pw:
            h = await BrowserHandle(pw, resolvers=extra_resolvers("offline")).start()
            try:
                dp = await h.open_page(sc, srv.url, fake_clock=True, init_scripts=[RAF_60HZ_JS, CANVAS_TEXT_JS])
                st = await Stepper(dp).start()
                await st.to(at_s, picture_only=True)
                full = VideoEncoder(tmp / "full.webm", vp.width, vp.height, rs.fps, codec=codec,
                                    bitrate_mbps=rs.bitrate_mbps, threads=rs.encoder_threads)
                small = VideoEncoder(tmp / "small.webm", vw, vh, rs.fps, codec=codec,
                                     bitrate_mbps=rs.bitrate_mbps, threads=rs.encoder_threads)
                # the full-size JPEG scaled by the encoder's thread (its own file: one source a file)
                scaled = VideoEncoder(tmp / "scaled.webm", vw, vh, rs.fps, codec=codec,
                                      bitrate_mbps=rs.bitrate_mbps, threads=rs.encoder_threads)
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
                    for first in ((True, False) if i % 2 else (False, True)):
                        if first:
                            jf = await timed("capture video JPEG full size (before)",
                                             st.capture("jpeg", quality=rs.jpeg_quality))
                        else:
                            js_ = await timed("capture video JPEG scaled by Chromium (clip scale)",
                                              st.capture("jpeg", quality=rs.jpeg_quality, scale=scale))
                    tp = await timed("capture timeline PNG scaled", st.capture("png", scale=min(1.0, ts.analysis_width / vp.width)))
                    if i % 10 == 0:
                        await timed("capture keyframe PNG full size", st.capture("png"))
                    dpng = await timed("capture density PNG full (screenshot_png)", dp.screenshot_png())
                    # the same frame through Chromium's scaling and through the encoder's (the
                    # video mixes both: they must look alike)
                    psnr.append(cv2.PSNR(decode(js_), small.fit(decode(jf))))
                    for k, enc, data in (("encode thread: JPEG full -> decode+encode (before)", full, jf),
                                         ("encode thread: JPEG scaled by Chromium -> decode+encode", small, js_),
                                         ("encode thread: JPEG full -> decode+scale+encode (timeline frames)", scaled, jf)):
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
    if before:     # every video frame a full-size JPEG, encoded at full size
        loop = counts["steps"] * step + counts["video"] * med("capture video JPEG full size (before)") + keys + dens
        worker = counts["video"] * cmed("encode thread: JPEG full -> decode+encode (before)") + reg
    else:          # a JPEG scaled by Chromium; the timeline's full-size JPEG at its sample times
        loop = (counts["steps"] * step + counts["video_scaled"] * med("capture video JPEG scaled by Chromium (clip scale)")
                + counts["video_full"] * med("capture video JPEG full size (before)") + keys + dens)
        worker = (counts["video_scaled"] * cmed("encode thread: JPEG scaled by Chromium -> decode+encode")
                  + counts["video_full"] * cmed("encode thread: JPEG full -> decode+scale+encode (timeline frames)")
                  + reg)
    loop, worker = loop / 1000, worker / 1000
    return {"capture loop (s)": round(loop, 1), "encoder + registration threads, CPU (s)": round(worker, 1),
            # two cores: the loop's browser work and the worker threads overlap at best
            "tour wall estimate, 2 cores (s)": round(max(loop, (loop + worker) / 2), 1),
            "tour wall estimate, no overlap (s)": round(loop + worker, 1)}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--demo", type=Path, default=ROOT / "scenarios" / "demos" / "reference.html")
    ap.add_argument("--frames", type=int, default=60, help="video frames measured (at 30 fps: 60 = 2 s of demo time)")
    ap.add_argument("--at", type=float, default=20.0, help="demo time the span starts at (s)")
    a = ap.parse_args(argv)
    from skycity_bench.probes._tour import density_frame_times
    from skycity_bench.probes.density import sample_times
    from skycity_bench.probes._stepper import frame_times
    from skycity_bench.scenario import load_scenario

    sc = load_scenario()
    rs, ts, ds = sc.probe_settings("recording"), sc.probe_settings("timeline"), sc.probe_settings("density")
    video = frame_times(rs.end_s, rs.fps)
    samples = frame_times(ts.end_s, ts.sample_fps, include_end=True)
    dens = density_frame_times(sample_times(sc.density_sample_times_s, *sc.dense_window_s, ds.step_s),
                               [0, ds.delta_frames, *ds.other_pair_frames], ds.densify_points)["frames_at"]
    steps = len({round(t, 6) for t in [*video, rs.end_s, *samples, *dens]})
    every = int(round(rs.keyframe_interval_s * rs.fps))
    plain = [round(t, 6) for i, t in enumerate(video) if i % every]
    ss = {round(t, 6) for t in samples}
    full = sum(t in ss for t in plain)
    counts = {"steps": steps, "video": len(video), "samples": len(samples), "density": len(dens),
              "keys": len(video[::every]) + 1, "video_full": full,
              "video_scaled": len(plain) - full}
    print(f"load average before: {_load()}", flush=True)
    t0 = time.monotonic()
    tm, info = asyncio.run(measure(a.demo, a.at, a.frames))
    print(f"\n== tour pass per frame: {a.demo.name} at {info['viewport']}, video {info['video']} {info['codec']} "
          f"(JPEG q{info['jpeg_quality']}), {a.frames} frames from t = {a.at:g} s "
          f"({time.monotonic() - t0:.0f} s; load average after: {_load()})")
    print(f"  {'part':58s} {'wall ms':>8s} {'CPU ms':>8s} {'KiB':>6s}")
    for k in tm.ms:
        cpu = f"{tm.cmed(k):8.1f}" if tm.cpu.get(k) else f"{'-':>8s}"
        print(f"  {k:58s} {tm.med(k):8.1f} {cpu} {str(info['sizes'].get(k, '')):>6s}")
    print(f"  PSNR of Chromium's scaled frame against the encoder's scaling of the full one: "
          f"{info['psnr_chromium_vs_encoder_scaling_db']} dB (the video mixes both)")
    vb = info["video_bytes"]
    print(f"  video files of the span: full size {vb['full'] / 1e6:.2f} MB, scaled by Chromium {vb['small'] / 1e6:.2f} MB, "
          f"scaled by the encoder's thread {vb['scaled'] / 1e6:.2f} MB (6 Mbit/s: the same bitrate at every size)")
    print(f"\n== the 65 s tour: {counts}")
    for label, before in (("before (full-size video)", True), ("now", False)):
        e = estimate(tm, counts, before)
        print(f"  {label}:")
        for k, v in e.items():
            print(f"    {k:44s} {v:8.1f}   target <= {TARGET_RECORDING_S:g} s (the tour's wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
