"""The recording reviewers watch: 0–65 s of the demo as a VP8 WebM at a steady 30 fps (60 on
request), a contact sheet of time-stamped keyframes every 5 s, and the keyframes themselves.

Under the fake clock every frame is taken at exactly t_i = i / fps (probes/_stepper.py), so
the video is smooth however slowly this machine renders: reviewers judge the demo, not the
test machine. Recording real time instead would show the machine's hiccups (frame pacing is
measured elsewhere, in real time, by its own probe). The fake clock does not drive CSS
animations or transitions: those run on real time and may look faster or slower than they
would live.

Speed: video frames are JPEG screenshots (CDP, optimizeForSpeed); keyframes are PNG, since
reviewers look at their pixels. Decoding and VP8 encoding (OpenCV's writer) run in one
worker thread while the browser renders the next frame; the queue between them is bounded.

One tour pass (probes/_tour.py): stepping a demo through 65 s runs 3900 of its animation
frames, so this probe's pass also yields the timeline's evidence (`produces=("timeline",)`):
when both probes run, the runner runs this one pass and stores the two artifacts as the
two probes' records (the timeline registering the frames this pass captures at its sample
times); run alone, each probe walks the pass with its own part only.
"""

from __future__ import annotations

import asyncio
import collections
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

import cv2
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..errors import ProbeError
from ..evidence.recording import RecordingEvidence
from ..evidence.timeline import TimelineEvidence
from . import probe
from ._stepper import decode, even, frame_times
from ._tour import tour_pass


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Every value comes from the scenario's probes.recording (reasons there); none defaults.
    fps: Literal[30, 60]
    end_s: float = Field(gt=0, le=600)
    keyframe_interval_s: float = Field(gt=0)
    jpeg_quality: int = Field(ge=30, le=100)
    bitrate_mbps: float = Field(gt=0.1, le=100)
    sheet_columns: int = Field(ge=1, le=20)
    sheet_thumb_width: int = Field(ge=64, le=1920)
    budget_s: float = Field(gt=0)


def _budget(sc) -> float:
    return Settings.model_validate(sc.probes.get("recording") or {}).budget_s + sc.timeouts.load_s


class _Encoder:
    """Owns the VideoWriter; called in frame order from one worker thread."""

    def __init__(self, path, fps: int, bitrate_mbps: float):
        self.path, self.fps, self.bitrate = path, fps, int(bitrate_mbps * 1e6)
        self.writer = None
        self.size = None
        self.frames = 0
        self.work_s = 0.0

    def write(self, data: bytes, already_decoded: np.ndarray | None = None) -> None:
        t0 = time.perf_counter()
        img = already_decoded if already_decoded is not None else decode(data)
        if self.writer is None:
            self.size = (even(img.shape[1]), even(img.shape[0]))
            # OpenCV's default VP8 bitrate grows with the frame size (~30 Mbit/s at 1080p30):
            # four times the file, and slower to encode, for no visible gain.
            self.writer = cv2.VideoWriter(str(self.path), cv2.CAP_FFMPEG, cv2.VideoWriter_fourcc(*"VP80"),
                                          float(self.fps), self.size, [cv2.VIDEOWRITER_PROP_BITRATE, self.bitrate])
            if not self.writer.isOpened():
                raise ProbeError("OpenCV could not open a VP8 WebM writer (is its FFmpeg backend missing?)")
        w, h = self.size
        if img.shape[1] != w or img.shape[0] != h:
            img = img[:h, :w] if img.shape[1] >= w and img.shape[0] >= h else cv2.resize(img, (w, h))
        self.writer.write(np.ascontiguousarray(img))
        self.frames += 1
        self.work_s += time.perf_counter() - t0

    def close(self) -> None:
        if self.writer is not None:
            self.writer.release()


def contact_sheet(keyframes: list[tuple[float, np.ndarray]], columns: int, thumb_w: int) -> np.ndarray:
    """Keyframes in a grid, each with its time stamp under it."""
    if not keyframes:
        raise ValueError("no keyframes")
    h0, w0 = keyframes[0][1].shape[:2]
    thumb_h = max(1, int(round(h0 * thumb_w / w0)))
    label_h, pad = 30, 6
    rows = (len(keyframes) + columns - 1) // columns
    cell_w, cell_h = thumb_w + pad, thumb_h + label_h + pad
    sheet = np.full((rows * cell_h + pad, columns * cell_w + pad, 3), 24, np.uint8)
    for k, (t, img) in enumerate(keyframes):
        r, c = divmod(k, columns)
        x, y = pad + c * cell_w, pad + r * cell_h
        sheet[y:y + thumb_h, x:x + thumb_w] = cv2.resize(img, (thumb_w, thumb_h), interpolation=cv2.INTER_AREA)
        cv2.putText(sheet, f"t = {t:05.2f} s", (x + 4, y + thumb_h + 22), cv2.FONT_HERSHEY_SIMPLEX, 0.6,
                    (235, 235, 235), 1, cv2.LINE_AA)
    return sheet


class _Video:
    """The recording's part of the tour pass: takes the frames at its times (video frames as
    JPEG, keyframes as PNG, the end as a last keyframe), encodes them in one worker thread,
    and at the end writes the contact sheet and gives the evidence's figures."""

    def __init__(self, ctx, s: Settings):
        self.ctx, self.s = ctx, s
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recording")
        path, self.rel = ctx.file("recordings/recording.webm")
        self.enc = _Encoder(path, s.fps, s.bitrate_mbps)
        self.keyframes: list[tuple[float, np.ndarray]] = []
        self.key_files: list[dict] = []
        self.pending: collections.deque = collections.deque()
        self.first_at: float | None = None
        self.late = 0
        self.capture_s = 0.0
        self.n_frames = 0
        self.started = time.monotonic()

    def times(self) -> list[tuple[float, str]]:
        """(t, kind): every video frame in [0, end) (t_i = i / fps), a PNG keyframe every
        keyframe_interval_s, and the end itself (65 s) as the last keyframe."""
        s = self.s
        every = max(1, int(round(s.keyframe_interval_s * s.fps)))
        times = frame_times(s.end_s, s.fps)               # end_s * fps frames, duration end_s
        self.n_frames = len(times)
        return [(t, "key" if i % every == 0 else "frame") for i, t in enumerate(times)] + [(s.end_s, "end")]

    async def take(self, kind: str, t: float, st) -> bytes:
        """The frame on screen at t (the pass stepped there), captured and queued; returns
        the encoded screenshot (the timeline registers it when it samples at t)."""
        loop = asyncio.get_running_loop()
        if kind != "end":
            if st.frame_s > t + 1e-6:     # shows a later animation frame than t_i's:
                self.late += 1            # only the first one(s): loading passed t = 0
            self.first_at = st.frame_s if self.first_at is None else self.first_at
        c0 = time.perf_counter()
        if kind == "frame":
            shot = await st.capture("jpeg", quality=self.s.jpeg_quality)
            self.capture_s += time.perf_counter() - c0
            self.pending.append(loop.run_in_executor(self.pool, self.enc.write, shot))
        else:
            shot = await st.capture("png")
            self.capture_s += time.perf_counter() - c0
            img = self._keep(t, shot)
            if kind == "key":
                self.pending.append(loop.run_in_executor(self.pool, self.enc.write, b"", img))
        while len(self.pending) > 24:
            await self.pending.popleft()
        return shot

    def _keep(self, t: float, png: bytes) -> np.ndarray:
        img = decode(png)
        path, rel = self.ctx.file(f"recordings/keyframes/t{t:06.2f}s.png")
        path.write_bytes(png)
        self.keyframes.append((t, img))
        self.key_files.append({"t_s": round(t, 3), "file": rel})
        return img

    async def drain(self) -> None:
        while self.pending:
            await self.pending.popleft()

    def partial(self) -> dict:
        return {"file": self.rel, "frames_written": self.enc.frames, "partial": True}

    async def finish(self) -> dict:
        s, enc = self.s, self.enc
        await asyncio.get_running_loop().run_in_executor(self.pool, enc.close)
        self.keyframes.sort(key=lambda k: k[0])
        sheet_path, sheet_rel = self.ctx.file("recordings/contact_sheet.png")
        cv2.imwrite(str(sheet_path), contact_sheet(self.keyframes, s.sheet_columns, s.sheet_thumb_width))
        wall = time.monotonic() - self.started
        n = max(1, self.n_frames)
        return {
            "file": self.rel, "codec": "VP8", "container": "webm", "fps": s.fps, "frames": enc.frames,
            "duration_s": round(enc.frames / s.fps, 4), "end_s": s.end_s,
            "width": enc.size[0] if enc.size else None, "height": enc.size[1] if enc.size else None,
            "first_frame_s": round(self.first_at or 0.0, 4), "late_frames": self.late,
            "keyframe_interval_s": s.keyframe_interval_s,
            "keyframes": sorted(self.key_files, key=lambda k: k["t_s"]),
            "contact_sheet": sheet_rel, "size_bytes": enc.path.stat().st_size if enc.path.exists() else 0,
            "wall_s": round(wall, 2), "capture_ms_mean": round(self.capture_s / n * 1000, 2),
            "encode_ms_mean": round(enc.work_s / max(1, enc.frames) * 1000, 2),
            "frames_per_wall_s": round(self.n_frames / wall, 2) if wall > 0 else None,
        }

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        self.enc.close()


# No run order against the timeline: its pass yields the timeline's evidence (produces). Like
# every fake-clock probe it runs after the real-time ones (the default order).
@probe("recording", settings=Settings, evidence=RecordingEvidence, budget=_budget, produces=("timeline",),
       description="fake-clock frame stepping 0–65 s into a VP8 WebM at 30 fps, keyframes, contact sheet; "
                   "the same pass yields the timeline's evidence when the timeline runs too")
async def collect(ctx):
    """RecordingEvidence; with the timeline in this run's pass (ctx.produces), both
    artifacts keyed by probe name, as ProbeSpec.produces asks."""
    with_timeline = "timeline" in ctx.produces
    ts = ctx.scenario.probe_settings("timeline") if with_timeline else None
    try:
        got = await tour_pass(ctx, video=_Video(ctx, ctx.settings), timeline=ts, stepped_by="recording")
    except ProbeError as e:
        if not with_timeline:
            e.data = (e.data or {}).get("recording") or {}
        raise
    rec = RecordingEvidence.model_validate(got["recording"])
    if not with_timeline:
        return rec
    return {"recording": rec, "timeline": TimelineEvidence.model_validate(got["timeline"])}
