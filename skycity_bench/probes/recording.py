"""The recording reviewers watch: 0–65 s of the demo as a WebM (VP9; VP8 where PyAV lacks it)
at a steady 30 fps (60 on request), a contact sheet of time-stamped keyframes every 5 s, and
the keyframes themselves.

Under the fake clock every frame is taken at exactly t_i = i / fps (probes/_stepper.py), so
the video is smooth however slowly this machine renders: reviewers judge the demo, not the
test machine. Recording real time instead would show the machine's hiccups (frame pacing is
measured elsewhere, in real time, by its own probe). The fake clock does not drive CSS
animations or transitions: those run on real time and may look faster or slower than they
would live.

Speed: video frames are JPEG screenshots (CDP, optimizeForSpeed); keyframes are
PNG, since reviewers look at their pixels. Decoding and encoding run in one worker thread
(skycity_bench/media/video_encode.py: PyAV's libvpx-vp9 at its realtime deadline, chosen on the
figures of benchmarks/codec_options.py) while the browser renders the next frame; the queue
between them is bounded, so the capture waits only when the encoder is that far behind.
The video has a keyframe every `video_keyframe_every_s`, so a reviewer's seek is quick.

A wall-clock budget (`wall_budget_s`, browser/clock_budget.PassBudget): a demo that renders
a few frames a second (software WebGL) would keep the pass stepping for many minutes. Past
the budget the pass stops; the video keeps what was captured (`truncated` in the evidence
says where and why, and the terminal says so), and the timeline, which needs the whole
tour, is an error with that reason (the camera items untested), never a silently short
video.

A slow page (its measured frame cost above `timeouts.coarse_above_ms`) is recorded with fewer
frames rather than crawling through all 1950: `adapt` picks the highest video rate (a divisor
of 30, down to 1 fps) whose tour is expected to fit in the probe's share of the run's
budget (browser/clock_budget.Share) at that cost, the clock reaches each frame's time in
coarse steps (one frame rendered per step, `Stepper.to(picture_only=True)`), and the pass
stops a little before the share ends, so the video it has is kept (the evidence's `fps` is
the rate chosen; the terminal says why, and a shortened video's `truncated` names the frame
cost).

One tour pass (probes/_tour.py): stepping a demo through 65 s runs 3900 of its animation
frames, so this probe's pass also yields the timeline's evidence (`produces=("timeline",)`):
when both probes run, the runner runs this one pass and stores the two artifacts as the
two probes' records (the timeline registering the frames this pass captures at its sample
times); run alone, each probe walks the pass with its own part only.
"""

from __future__ import annotations

import asyncio
import time
from typing import Literal

import cv2
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.browser.clock_budget import cost_words
from skycity_bench.common.errors import Cause, ProbeError
from skycity_bench.evidence.recording import RecordingEvidence
from skycity_bench.evidence.timeline import TimelineEvidence
from skycity_bench.media.video_encode import CODEC_LABEL, EncoderUnavailable, EncodeWorker, even, pick
from skycity_bench.probes import probe
from skycity_bench.probes._stepper import decode, frame_times
from skycity_bench.probes._tour import DensityFrames, tour_pass


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Every value comes from the scenario's probes.recording (reasons there); none defaults.
    fps: Literal[30, 60]
    end_s: float = Field(gt=0, le=600)
    keyframe_interval_s: float = Field(gt=0)
    jpeg_quality: int = Field(ge=30, le=100)
    bitrate_mbps: float = Field(gt=0.1, le=100)
    # the video's codec: the first of these PyAV can encode (video_encode.CODECS)
    codecs: list[Literal["vp9", "vp8", "av1"]] = Field(min_length=1)
    video_keyframe_every_s: float = Field(gt=0, le=10)
    encoder_threads: int = Field(ge=1, le=16)
    # the video's height at most (the viewport scaled down, aspect kept; never up)
    max_video_height: int = Field(ge=120, le=4320)
    encode_queue_frames: int = Field(ge=1, le=240)
    sheet_columns: int = Field(ge=1, le=20)
    sheet_thumb_width: int = Field(ge=64, le=1920)
    wall_budget_s: float = Field(gt=0)
    budget_s: float = Field(gt=0)


# Video rates a slow page may be recorded at (each divides 60: frame times stay on the grid).
SLOW_RATES = (30, 15, 10, 6, 5, 3, 2, 1)
# Wall seconds a video frame's capture and hand-off take besides its render (a 1080p JPEG
# under load, benchmarks/tour_cost.py: 50-150 ms).
CAPTURE_S = 0.15
# Of the share: the pass stops this much before it ends (the encoder's close, the contact
# sheet), at least FINISH_S.
FINISH_SHARE, FINISH_S = 0.1, 15.0


def adapt(ctx, s: Settings) -> tuple[Settings, dict | None]:
    """The recording's settings for this page: as they are on a fast page (or without a
    measured frame cost), else fewer frames and a wall budget inside the probe's share (see
    the module's docstring). Returns them and what was adapted (None: nothing)."""
    b = getattr(ctx.browser, "budget", None)
    cost = b.frame_cost_ms() if b is not None else None
    t = ctx.scenario.timeouts
    if b is None or cost is None or cost <= t.coarse_above_ms:
        return s, None
    share = b.shares.get("recording")
    seconds = share.seconds if share is not None else b.left_s()
    wall = max(FINISH_S, min(s.wall_budget_s, seconds - max(FINISH_S, FINISH_SHARE * seconds)))
    # frames a coarse walk renders per demo second at least (and the timeline's samples, when
    # this pass takes them: a step each)
    steps_per_s = 1000.0 / t.coarse_step_ms
    if "timeline" in getattr(ctx, "produces", ()):
        steps_per_s = max(steps_per_s, ctx.scenario.probe_settings("timeline").sample_fps)
    fps = next(
        (f for f in SLOW_RATES if s.end_s * (max(f, steps_per_s) * cost / 1000.0 + f * CAPTURE_S) <= wall),
        SLOW_RATES[-1],
    )
    note = {
        "frame_cost_ms": round(cost, 1),
        "fps": fps,
        "wall_budget_s": round(wall, 1),
        "share_s": round(seconds, 1),
        "why": f"{cost_words(cost)}: {fps} frames a second of demo time, stepped coarsely, to fit in "
        f"{wall:.0f} s of its {seconds:.0f} s share of the run's budget",
    }
    return s.model_copy(update={"fps": fps, "wall_budget_s": wall}), note


def video_size(width: int, height: int, max_height: int) -> tuple[int, int]:
    """The video's frame size: the viewport, scaled down (aspect kept) to at most
    `max_height` rows, even in both sides (4:2:0)."""
    k = min(1.0, max_height / height)
    return even(int(round(width * k))), even(int(round(height * k)))


def _budget(sc) -> float:
    return Settings.model_validate(sc.probes.get("recording") or {}).budget_s + sc.timeouts.load_s


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
        sheet[y : y + thumb_h, x : x + thumb_w] = cv2.resize(img, (thumb_w, thumb_h), interpolation=cv2.INTER_AREA)
        cv2.putText(
            sheet,
            f"t = {t:05.2f} s",
            (x + 4, y + thumb_h + 22),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.6,
            (235, 235, 235),
            1,
            cv2.LINE_AA,
        )
    return sheet


class _Video:
    """The recording's part of the tour pass: takes the frames at its times (video frames as
    JPEG, keyframes as PNG, the end as a last keyframe), hands them to the encoder's worker
    thread (bounded queue), and at the end writes the contact sheet and gives the evidence's
    figures."""

    def __init__(self, ctx, s: Settings):
        self.ctx, self.s = ctx, s
        path, self.rel = ctx.file("recordings/recording.webm")
        try:
            self.codec = pick(tuple(s.codecs))
        except EncoderUnavailable as e:
            raise ProbeError(str(e)) from e
        vp = ctx.scenario.viewport
        self.size = video_size(vp.width, vp.height, s.max_video_height)
        # what Chromium scales a plain video frame by in its capture (CSS px -> video px)
        self.scale = self.size[0] / vp.width
        self.enc = EncodeWorker(
            path,
            s.fps,
            codec=self.codec,
            bitrate_mbps=s.bitrate_mbps,
            keyframe_interval=max(1, int(round(s.video_keyframe_every_s * s.fps))),
            threads=s.encoder_threads,
            queue_frames=s.encode_queue_frames,
            size=self.size,
        )
        self.keyframes: list[tuple[float, np.ndarray]] = []
        self.key_files: list[dict] = []
        self.first_at: float | None = None
        self.last_at: float | None = None
        self.late = 0
        self.capture_s = 0.0
        self.n_frames = 0
        self.started = time.monotonic()

    def times(self) -> list[tuple[float, str]]:
        """(t, kind): every video frame in [0, end) (t_i = i / fps), a PNG keyframe every
        keyframe_interval_s, and the end itself (65 s) as the last keyframe."""
        s = self.s
        every = max(1, int(round(s.keyframe_interval_s * s.fps)))
        times = frame_times(s.end_s, s.fps)  # end_s * fps frames, duration end_s
        self.n_frames = len(times)
        return [(t, "key" if i % every == 0 else "frame") for i, t in enumerate(times)] + [(s.end_s, "end")]

    async def take(self, kind: str, t: float, st, *, full: bool = False) -> bytes:
        """The frame on screen at t (the pass stepped there), captured and queued; returns
        the encoded screenshot (the timeline registers it when it samples at t).

        A plain video frame is one JPEG capture scaled by Chromium to the video's size
        (max_video_height; the captures bound the pass: benchmarks/tour_cost.py). With
        `full` (the timeline samples at t and registers this very frame) it is the
        full-size JPEG the timeline has always registered, so its measurements do not
        change, and the encoder's thread scales it to the video's size."""
        if kind != "end":
            if st.frame_s > t + 1e-6:  # shows a later animation frame than t_i's:
                self.late += 1  # only the first one(s): loading passed t = 0
            self.first_at = st.frame_s if self.first_at is None else self.first_at
            self.last_at = t
        c0 = time.perf_counter()
        if kind == "frame":
            if full or self.scale == 1.0:
                shot = await st.capture("jpeg", quality=self.s.jpeg_quality)
            else:
                shot = await st.capture("jpeg", quality=self.s.jpeg_quality, scale=self.scale)
            self.capture_s += time.perf_counter() - c0
            await self._put(shot)
        else:
            shot = await st.capture("png")
            self.capture_s += time.perf_counter() - c0
            img = self._keep(t, shot)
            if kind == "key":
                await self._put(img)
        return shot

    async def _put(self, item) -> None:
        """Hand a frame to the encoder; wait (off the event loop) only when its queue is full."""
        try:
            if self.enc.full():
                await asyncio.to_thread(self.enc.put, item)
            else:
                self.enc.put(item)
        except Exception as e:
            raise ProbeError(f"the video encoder ({CODEC_LABEL[self.codec]}) failed: {type(e).__name__}: {e}") from e

    def _keep(self, t: float, png: bytes) -> np.ndarray:
        img = decode(png)
        path, rel = self.ctx.file(f"recordings/keyframes/t{t:06.2f}s.png")
        path.write_bytes(png)
        self.keyframes.append((t, img))
        self.key_files.append({"t_s": round(t, 3), "file": rel})
        return img

    async def drain(self) -> None:
        """Nothing to wait for here: the encoder finishes the file in finish()."""

    def partial(self) -> dict:
        return {"file": self.rel, "frames_written": self.enc.figures.frames, "partial": True}

    async def finish(self, stopped: dict | None = None) -> dict:
        """The file finished, the contact sheet written, the evidence's figures. `stopped`:
        the pass ended early ({at_s, reason}); the video holds what was captured."""
        s, enc = self.s, self.enc
        try:
            await asyncio.to_thread(enc.close)
        except Exception as e:
            raise ProbeError(f"the video encoder ({CODEC_LABEL[self.codec]}) failed: {type(e).__name__}: {e}") from e
        if not self.keyframes:
            # only the pass's wall-clock budget stops it that early (the tour's `stopped`)
            raise ProbeError("the tour pass stopped before its first frame: no recording", cause=Cause.BUDGET)
        self.keyframes.sort(key=lambda k: k[0])
        sheet_path, sheet_rel = self.ctx.file("recordings/contact_sheet.png")
        cv2.imwrite(str(sheet_path), contact_sheet(self.keyframes, s.sheet_columns, s.sheet_thumb_width))
        wall = time.monotonic() - self.started
        f = enc.figures
        n = max(1, f.frames)
        out = {
            "file": self.rel,
            "codec": CODEC_LABEL[self.codec],
            "container": "webm",
            "fps": s.fps,
            "frames": f.frames,
            "duration_s": round(f.frames / s.fps, 4),
            "end_s": s.end_s,
            "width": enc.width or 0,
            "height": enc.height or 0,
            "first_frame_s": round(self.first_at or 0.0, 4),
            "late_frames": self.late,
            "keyframe_interval_s": s.keyframe_interval_s,
            "video_keyframe_every_s": s.video_keyframe_every_s,
            "keyframes": sorted(self.key_files, key=lambda k: k["t_s"]),
            "contact_sheet": sheet_rel,
            "size_bytes": enc.path.stat().st_size if enc.path.exists() else 0,
            "wall_s": round(wall, 2),
            "capture_ms_mean": round(self.capture_s / n * 1000, 2),
            "decode_ms_mean": round(f.decode_s / n * 1000, 2),
            "encode_ms_mean": round(f.encode_s / n * 1000, 2),
            "encode_wait_s": round(f.waited_s, 2),
            "frames_per_wall_s": round(f.frames / wall, 2) if wall > 0 else 0.0,
            "truncated": None,
        }
        if stopped is not None:
            out["truncated"] = {
                "at_s": round(f.frames / s.fps, 4),
                "of_s": s.end_s,
                "reason": stopped["reason"],
                "wall_budget_s": s.wall_budget_s,
            }
        return out

    def close(self) -> None:
        self.enc.abort()


def _density_frames(ctx) -> DensityFrames | None:
    """The density probe's frames, captured in this pass when density runs after it in this
    run (it declares that it reads this probe's evidence: ProbeSpec.after; ctx.readers);
    else None (density then plays its window itself)."""
    if "density" not in ctx.readers:
        return None
    from skycity_bench.probes.density import sample_times  # the density probe's own plan of its samples

    s, sc = ctx.scenario.probe_settings("density"), ctx.scenario
    a_s, b_s = sc.dense_window_s
    return DensityFrames(
        ctx,
        sample_times(sc.density_sample_times_s, a_s, b_s, s.step_s),
        s.delta_frames,
        list(s.other_pair_frames),
        s.densify_points,
        list(s.still_point_frames),
        scene=s if s.scene_graph else None,
    )


# No run order against the timeline: its pass yields the timeline's evidence (produces). Like
# every fake-clock probe it runs after the real-time ones (the default order).
@probe(
    "recording",
    settings=Settings,
    evidence=RecordingEvidence,
    budget=_budget,
    produces=("timeline",),
    description="fake-clock frame stepping 0–65 s into a WebM (VP9) at 30 fps, keyframes, contact sheet; "
    "the same pass yields the timeline's evidence when the timeline runs too",
)
async def collect(ctx):
    """RecordingEvidence; with the timeline in this run's pass (ctx.produces), both
    artifacts keyed by probe name, as ProbeSpec.produces asks. A pass its wall-clock budget
    stopped keeps the shortened video (evidence `truncated`) and gives the timeline part as
    a ProbeError with the reason (the camera items need the whole tour)."""
    with_timeline = "timeline" in ctx.produces
    ts = ctx.scenario.probe_settings("timeline") if with_timeline else None
    s, adapted = adapt(ctx, ctx.settings)
    if adapted is not None:
        ctx.progress.log(f"[yellow]recording: {adapted['why']}[/]")
    try:
        got = await tour_pass(
            ctx,
            video=_Video(ctx, s),
            timeline=ts,
            density=_density_frames(ctx),
            stepped_by="recording",
            wall_budget_s=s.wall_budget_s,
            picture_only=adapted is not None,
        )
    except ProbeError as e:
        if not with_timeline:
            e.data = (e.data or {}).get("recording") or {}
        raise
    rec = RecordingEvidence.model_validate({**got["recording"], "density_frames": got["density_frames"]})
    if rec.truncated:
        ctx.progress.log(
            f"[yellow]recording: shortened to {rec.truncated['at_s']:g} s of {rec.end_s:g} s: "
            f"{rec.truncated['reason']}[/]"
        )
    if not with_timeline:
        return rec
    if got.get("stopped"):
        return {
            "recording": rec,
            "timeline": ProbeError(got["stopped"]["message"], got["timeline"], cause=Cause.BUDGET),
        }
    return {"recording": rec, "timeline": TimelineEvidence.model_validate(got["timeline"])}
