"""Which encoder for the recording: the options measured on frames of the reference demo
at 1920x1080.

Frames: the recording's own input, i.e. JPEG screenshots (the scenario's jpeg_quality) taken
under the fake clock at 30 fps from `--from` s (default 20: the busy middle of the tour) for
`--frames` frames, decoded once. Each option encodes the same frames at the recording's
bitrate and keyframe interval; per option:
  - encode frames/s (colour conversion + encode, one thread unless the option says so;
    the JPEG decoding every option shares is not counted),
  - the file size, scaled to a 65 s recording (MB),
  - PSNR (dB, all three channels) of the decoded video against the captured frames.
The recording needs >= 1950 / 60 s ~ 33 frames/s beside the browser to keep the tour's
added cost under its 70 s target; the printout puts every figure beside that.

    .venv/bin/python benchmarks/codec_options.py [--frames 120] [--from 20] [--demo FILE]

Real time on a shared machine: run it when the machine is quiet; figures under load are
lower (encode frames/s) but the order of the options holds.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# (label, codec or "opencv-vp8", threads, options over video_encode.CODECS')
OPTIONS = [
    ("OpenCV VP8 writer (the recording's earlier one)", "opencv-vp8", 1, {}),
    # VP8's speed level is fixed only by a negative cpu-used (video_encode.CODECS); 8 lets
    # libvpx choose it from the wall time of each frame, so that row moves with the load
    ("PyAV VP8 realtime speed 4 (cpu-used -4, the bench's)", "vp8", 1, {}),
    ("PyAV VP8 realtime speed 16 (cpu-used -16)", "vp8", 1, {"cpu-used": "-16"}),
    ("PyAV VP8 realtime cpu-used 8 (speed from the wall clock)", "vp8", 1, {"cpu-used": "8"}),
    ("PyAV VP9 realtime cpu-used 8, 1 thread", "vp9", 1, {}),
    ("PyAV VP9 realtime cpu-used 8, 2 threads", "vp9", 2, {}),
    ("PyAV SVT-AV1 preset 10", "av1", 1, {"preset": "10"}),
    ("PyAV SVT-AV1 preset 12", "av1", 1, {}),
    ("PyAV SVT-AV1 preset 12, 1 core", "av1", 1, {"lp": "1"}),
]
TARGET_FPS = 1950 / 60.0  # a 65 s recording encoded in 60 s of wall time


async def grab(demo: Path, t0: float, n: int, fps: int = 30) -> tuple[list[bytes], dict]:
    """n JPEG screenshots of the demo at t0 + i / fps, as the recording takes them."""
    from playwright.async_api import async_playwright

    from skycity_bench.browser.server import DemoServer
    from skycity_bench.browser.session import BrowserHandle
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.probes._city_name import CANVAS_TEXT_JS
    from skycity_bench.probes._stepper import RAF_60HZ_JS, Stepper
    from skycity_bench.running.runner import extra_resolvers

    sc = load_scenario()
    q = sc.probe_settings("recording").jpeg_quality
    shots = []
    with DemoServer(demo.read_bytes()) as srv:
        async with async_playwright() as pw:
            h = await BrowserHandle(pw, resolvers=extra_resolvers("offline")).start()
            try:
                dp = await h.open_page(sc, srv.url, fake_clock=True, init_scripts=[RAF_60HZ_JS, CANVAS_TEXT_JS])
                st = await Stepper(dp).start()
                await st.to(t0, picture_only=True)
                c0 = time.perf_counter()
                for i in range(n):
                    await st.to(t0 + i / fps)
                    shots.append(await st.capture("jpeg", quality=q))
                took = time.perf_counter() - c0
            finally:
                await h.kill()
    return shots, {
        "jpeg_quality": q,
        "viewport": f"{sc.viewport.width}x{sc.viewport.height}",
        "step_and_capture_ms": round(took / n * 1000, 1),
    }


def _opencv_vp8(path: Path, frames: list[np.ndarray], fps: int, bitrate_mbps: float) -> float:
    h, w = frames[0].shape[:2]
    wr = cv2.VideoWriter(
        str(path),
        cv2.CAP_FFMPEG,
        cv2.VideoWriter_fourcc(*"VP80"),
        float(fps),
        (w, h),
        [cv2.VIDEOWRITER_PROP_BITRATE, int(bitrate_mbps * 1e6)],
    )
    t = time.perf_counter()
    for f in frames:
        wr.write(f)
    wr.release()
    return time.perf_counter() - t


def _pyav(
    path: Path,
    frames: list[np.ndarray],
    fps: int,
    codec: str,
    threads: int,
    bitrate_mbps: float,
    keyframe_interval: int,
    extra: dict,
) -> float:
    from skycity_bench.media.video_encode import VideoEncoder

    h, w = frames[0].shape[:2]
    t = time.perf_counter()
    enc = VideoEncoder(
        path,
        w,
        h,
        fps,
        codec=codec,
        bitrate_mbps=bitrate_mbps,
        keyframe_interval=keyframe_interval,
        threads=threads,
        options=extra,
    )
    for f in frames:
        enc.write(f)
    enc.close()
    return time.perf_counter() - t


def _psnr(path: Path, frames: list[np.ndarray]) -> tuple[float, int]:
    import av

    vals, n = [], 0
    with av.open(str(path)) as c:
        for fr in c.decode(video=0):
            img = fr.to_ndarray(format="bgr24")
            if n < len(frames):
                vals.append(cv2.PSNR(frames[n], img))
            n += 1
    return (float(np.mean(vals)) if vals else float("nan")), n


def measure(shots: list[bytes], fps: int = 30, options=OPTIONS) -> list[dict]:
    """Every option on the same decoded frames: [{label, codec, threads, fps, mb_65s, psnr_db,
    frames_out}] (an option this PyAV build lacks gets its reason)."""
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.media.video_encode import available

    s = load_scenario().probe_settings("recording")
    bitrate = s.bitrate_mbps
    gop = max(1, int(round(getattr(s, "video_keyframe_interval_s", 1.0) * fps)))
    frames = [cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_COLOR) for b in shots]
    frames = [f[: f.shape[0] - f.shape[0] % 2, : f.shape[1] - f.shape[1] % 2] for f in frames]
    out = []
    tmp = Path(tempfile.mkdtemp(prefix="codec-options-"))
    cv2.setNumThreads(1)
    for label, codec, threads, extra in options:
        row = {"label": label, "codec": codec, "threads": threads}
        if codec != "opencv-vp8" and not available(codec):
            out.append({**row, "skipped": "not in this PyAV build"})
            continue
        path = tmp / f"{len(out)}-{codec}.webm"
        cpu0 = time.process_time()
        try:
            took = (
                _opencv_vp8(path, frames, fps, bitrate)
                if codec == "opencv-vp8"
                else _pyav(path, frames, fps, codec, threads, bitrate, gop, extra)
            )
        except Exception as e:
            out.append({**row, "skipped": f"{type(e).__name__}: {e}"})
            continue
        cpu = time.process_time() - cpu0
        psnr, n = _psnr(path, frames)
        size = path.stat().st_size
        out.append(
            {
                **row,
                "fps": round(len(frames) / took, 1),
                "cpu_ms": round(cpu / len(frames) * 1000, 1),
                "mb_65s": round(size / 1e6 * 65 * fps / len(frames), 1),
                "psnr_db": round(psnr, 2),
                "frames_out": n,
                "frames_in": len(frames),
            }
        )
    return out


def print_rows(rows: list[dict]) -> None:
    print(f"  {'option':42s} {'encode fps':>10s} {'CPU ms/fr':>9s} {'MB / 65 s':>10s} {'PSNR dB':>8s} {'frames':>7s}")
    for r in rows:
        if "skipped" in r:
            print(f"  {r['label']:42s} skipped: {r['skipped']}")
            continue
        ok = "meets" if r["fps"] >= TARGET_FPS else "below"
        print(
            f"  {r['label']:42s} {r['fps']:10.1f} {r['cpu_ms']:9.1f} {r['mb_65s']:10.1f} {r['psnr_db']:8.2f} "
            f"{r['frames_out']:>3d}/{r['frames_in']:<3d}  ({ok} the {TARGET_FPS:.1f} fps a 65 s recording "
            f"needs in 60 s)"
        )


def _grab_or_load(a) -> tuple[list[bytes], dict]:
    import json

    if a.keep and (a.keep / "info.json").exists():
        info = json.loads((a.keep / "info.json").read_text())
        return [(a.keep / f"{i:04d}.jpg").read_bytes() for i in range(info["frames"])], info
    shots, info = asyncio.run(grab(a.demo, a.t0, a.frames))
    if a.keep:
        a.keep.mkdir(parents=True, exist_ok=True)
        for i, b in enumerate(shots):
            (a.keep / f"{i:04d}.jpg").write_bytes(b)
        (a.keep / "info.json").write_text(json.dumps({**info, "frames": len(shots)}))
    return shots, info


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--from", dest="t0", type=float, default=20.0)
    ap.add_argument("--demo", type=Path, default=ROOT / "scenarios" / "demos" / "reference.html")
    ap.add_argument("--keep", type=Path, help="keep the grabbed frames in this folder and reuse them on the next run")
    a = ap.parse_args(argv)
    t = time.monotonic()
    shots, info = _grab_or_load(a)
    print(
        f"== encoder options on {a.frames} frames of {a.demo.name} at {info['viewport']} from t = {a.t0:g} s "
        f"(JPEG q{info['jpeg_quality']}, step+capture {info['step_and_capture_ms']} ms/frame, "
        f"grabbed in {time.monotonic() - t:.0f} s)"
    )
    rows = measure(shots)
    print_rows(rows)
    bad = [r for r in rows if "skipped" not in r and r["frames_out"] != r["frames_in"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
