"""One video encoder for the bench's WebM files: the recording reviewers
watch (probes/recording.py) and the real-time video of the pacing pass (realtime_video.py).

PyAV (FFmpeg's libraries, a wheel with its own codecs: nothing to install beside it) writes
WebM, which Chromium's <video> plays and seeks in frame-accurately. Codecs, by name:

- `vp9`: libvpx-vp9 at its realtime deadline (cpu-used 8, row-mt, tile columns). The
  recording's choice: measured on frames of the reference demo at 1920x1080
  (benchmarks/codec_options.py, figures in the README's recording section) it encodes
  several times faster than OpenCV's VP8 writer at a smaller file and a higher PSNR.
- `vp8`: libvpx at its realtime deadline, at a fixed speed level. The fallback where a PyAV build lacks libvpx-vp9,
  and the real-time capture's codec (small frames, where VP8 costs least).
- `av1`: SVT-AV1 (libsvtav1) at a fast preset: measured beside the others; Chromium plays it.

Every file gets a keyframe at least every `keyframe_interval` frames, so a reviewer's seek
decodes at most that many frames (Chromium seeks frame-accurately in any WebM; the keyframe
interval only bounds how long a seek takes).

`EncodeWorker` runs one encoder in a worker thread fed by a bounded queue: the capture loop
hands over encoded screenshots (JPEG/PNG bytes) or decoded frames and only waits when the
encoder is `queue_frames` behind, so encoding runs beside the browser's rendering instead of
after it, with memory bounded.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

import cv2
import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from av.container import OutputContainer

# name -> (FFmpeg encoder, its options). Why each option:
#   deadline realtime / cpu-used 8 (VP9): the fastest libvpx speed level (the recording is
#     for reviewers' eyes at 6 Mbit/s; quality is measured in benchmarks/codec_options.py);
#   cpu-used -4 (VP8): a fixed speed level, 4. At its realtime deadline VP8 takes a
#     cpu-used of 0 or more as a CPU share and picks its speed level frame by frame from how
#     long the last frames took on the wall clock (libvpx's vp8_auto_select_speed, 4 to 16);
#     only a negative value fixes it. So the same frames made a different video on a busy
#     machine: 960x540 frames encoded with the thread sharing its core with four busy loops
#     came out up to 124-158 grey levels from the quiet machine's, and a held picture
#     changed in more pixels while it was held (928 px by over 24 levels, against 768),
#     which is what a reviewer (and test_realtime_capture) reads a stall from. A quiet
#     machine settles on speed 4: this keeps that output bit for bit, busy or not
#     (tests/unit/test_video_encode.py).
#   lag-in-frames 0: no look-ahead buffer (frames leave as soon as they are encoded);
#   row-mt / tile-columns (VP9): lets libvpx split a 1080p frame across threads when it has
#     more than one; tile columns also make the file decode faster in the browser.
CODECS: dict[str, tuple[str, dict[str, str]]] = {
    "vp9": (
        "libvpx-vp9",
        {
            "deadline": "realtime",
            "cpu-used": "8",
            "lag-in-frames": "0",
            "row-mt": "1",
            "tile-columns": "2",
            "frame-parallel": "0",
        },
    ),
    "vp8": ("libvpx", {"deadline": "realtime", "cpu-used": "-4", "lag-in-frames": "0"}),
    # preset 12 is SVT-AV1's fastest; it has no realtime deadline of its own
    "av1": ("libsvtav1", {"preset": "12"}),
}

# SVT-AV1 prints its whole configuration to stderr unless told to log errors only
os.environ.setdefault("SVT_LOG", "1")

CODEC_LABEL = {"vp9": "VP9", "vp8": "VP8", "av1": "AV1"}


class EncoderUnavailable(RuntimeError):
    pass


def available(codec: str) -> bool:
    """Whether this PyAV build can encode `codec` (a CODECS name)."""
    try:
        import av

        av.codec.Codec(CODECS[codec][0], "w")
        return True
    except Exception:
        return False


def pick(preferred: list[str] | tuple[str, ...]) -> str:
    """The first codec of `preferred` this PyAV build has (the scenario lists the recording's
    choice first and VP8 as its fallback)."""
    for c in preferred:
        if c in CODECS and available(c):
            return c
    raise EncoderUnavailable(
        f"none of the video codecs {', '.join(preferred)} can be encoded by this PyAV build (av {_av_version()})"
    )


def _av_version() -> str:
    try:
        import av

        return av.__version__
    except Exception:
        return "not installed"


def even(n: int) -> int:
    """4:2:0 video wants even frame sizes."""
    return n - (n % 2)


class VideoEncoder:
    """One WebM file through PyAV: `write(img, n)` appends img (BGR, uint8) n times, at the
    next n frame slots of a constant rate; `close()` flushes and finishes the file."""

    def __init__(
        self,
        path: Path | str,
        width: int,
        height: int,
        fps: int,
        *,
        codec: str = "vp9",
        bitrate_mbps: float = 6.0,
        keyframe_interval: int = 30,
        threads: int = 1,
        options: dict[str, str] | None = None,
    ):
        import av
        from av.video.stream import VideoStream

        if codec not in CODECS:
            raise EncoderUnavailable(f"unknown video codec {codec!r} (known: {', '.join(CODECS)})")
        self.codec = codec
        self.path = Path(path)
        self.width, self.height = even(int(width)), even(int(height))
        self.fps = int(fps)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        name, base_opts = CODECS[codec]
        self.container: OutputContainer | None = av.open(str(self.path), "w", format="webm")
        try:
            # a video codec's stream (add_stream's type covers audio and subtitles too)
            s = cast(VideoStream, self.container.add_stream(name, rate=self.fps))
        except Exception as e:
            self.container.close()
            raise EncoderUnavailable(f"PyAV (av {_av_version()}) cannot encode {name}: {e}") from e
        s.width, s.height, s.pix_fmt = self.width, self.height, "yuv420p"
        s.bit_rate = int(bitrate_mbps * 1e6)
        s.codec_context.gop_size = max(1, int(keyframe_interval))
        opts: dict[str, object] = {**base_opts, **(options or {})}
        if codec == "av1":
            # SVT-AV1 takes its keyframe interval, rate control and cores (lp) as its own parameters
            lp = opts.pop("lp", None)
            opts["svtav1-params"] = f"keyint={max(1, int(keyframe_interval))}:rc=1:tbr={int(bitrate_mbps * 1000)}" + (
                f":lp={lp}" if lp else ""
            )
        s.options = opts
        # Threads: libvpx's worker threads spin when the CPU is contended (measured on the
        # 2-core machine under load: 74 ms of CPU per 640x360 frame with them, 3 ms without),
        # so the caller decides (the recording measures both in benchmarks/codec_options.py).
        s.codec_context.thread_count = max(1, int(threads))
        self.stream = s
        self.pts = 0
        self.frames = 0
        self.encode_s = 0.0
        self._av = av

    def fit(self, img: np.ndarray) -> np.ndarray:
        """img at the video's size: an odd pixel cropped, anything else resized."""
        h, w = img.shape[:2]
        if (w, h) == (self.width, self.height):
            return img
        if w >= self.width and h >= self.height and w - self.width <= 1 and h - self.height <= 1:
            return img[: self.height, : self.width]
        return cv2.resize(img, (self.width, self.height), interpolation=cv2.INTER_AREA)

    def write(self, img: np.ndarray, n: int = 1) -> None:
        # CPU time of the calling thread: what encoding costs, whatever else the machine runs
        t0 = time.thread_time()
        img = self.fit(img)
        # OpenCV's BGR -> I420 is several times faster than swscale's bgr24 -> yuv420p here
        yuv = cv2.cvtColor(np.ascontiguousarray(img), cv2.COLOR_BGR2YUV_I420)
        frame = self._av.VideoFrame.from_ndarray(cast(npt.NDArray[np.uint8], yuv), format="yuv420p")
        container = self.container
        assert container is not None, "the video is closed"
        for _ in range(n):
            frame.pts = self.pts
            self.pts += 1
            for p in self.stream.encode(frame):
                container.mux(p)
        self.frames += n
        self.encode_s += time.thread_time() - t0

    def close(self) -> None:
        if self.container is None:
            return
        t0 = time.thread_time()
        try:
            for p in self.stream.encode():
                self.container.mux(p)
        finally:
            self.container.close()
            self.container = None
            self.encode_s += time.thread_time() - t0


@dataclass
class WorkerFigures:
    frames: int = 0
    decode_s: float = 0.0  # CPU seconds of the worker thread
    encode_s: float = 0.0
    waited_s: float = 0.0  # time the capture loop waited for room in the queue
    max_queue: int = 0


class EncodeWorker:
    """A VideoEncoder in one worker thread behind a bounded queue. `put(item)` is called in
    frame order with encoded image bytes or a decoded BGR frame; it blocks only while
    `queue_frames` items wait (the browser never runs far ahead of the encoder). The encoder
    opens on the first frame (its size is the video's). An encoder error is kept (`error`)
    and raised from `put`/`close`, never lost in the thread."""

    def __init__(
        self,
        path: Path | str,
        fps: int,
        *,
        codec: str,
        bitrate_mbps: float,
        keyframe_interval: int,
        threads: int = 1,
        queue_frames: int = 24,
        size: tuple[int, int] | None = None,
    ):
        self.path, self.fps, self.codec = Path(path), int(fps), codec
        self.bitrate_mbps, self.keyframe_interval, self.threads = bitrate_mbps, keyframe_interval, threads
        self.size = size
        self.enc: VideoEncoder | None = None
        self.figures = WorkerFigures()
        self.error: BaseException | None = None
        self._q: queue.Queue = queue.Queue(maxsize=max(1, int(queue_frames)))
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=f"encode-{codec}", daemon=True)
        self._thread.start()

    # ---------------------------------------------------------------- capture side
    def put(self, item: bytes | np.ndarray) -> None:
        if self.error is not None:
            raise self.error
        t0 = time.perf_counter()
        while True:
            try:
                self._q.put(item, timeout=0.5)
                break
            except queue.Full:
                if self.error is not None or not self._thread.is_alive():
                    raise self.error or RuntimeError("the video encoder thread stopped") from None
        self.figures.waited_s += time.perf_counter() - t0
        self.figures.max_queue = max(self.figures.max_queue, self._q.qsize())

    def full(self) -> bool:
        """Whether put() would wait now (the caller then waits off its event loop)."""
        return self._q.full()

    def close(self, timeout_s: float | None = None) -> None:
        """Finish the file (waits for the frames queued); raises the encoder's error."""
        if not self._closed:
            self._closed = True
            while self._thread.is_alive():
                try:
                    self._q.put(None, timeout=0.5)
                    break
                except queue.Full:
                    continue
        self._thread.join(timeout_s)
        if self.error is not None:
            raise self.error

    def abort(self) -> None:
        """Stop without raising (the pass failed): what was encoded stays a playable file."""
        try:
            self.close()
        except BaseException:
            pass

    # ---------------------------------------------------------------- worker side
    def _run(self) -> None:
        f = self.figures
        try:
            while True:
                item = self._q.get()
                if item is None:
                    break
                if self.error is not None:
                    continue  # drain after an error: put() raises it
                t0 = time.thread_time()
                img = (
                    item
                    if isinstance(item, np.ndarray)
                    else cv2.imdecode(np.frombuffer(item, np.uint8), cv2.IMREAD_COLOR)
                )
                if img is None:
                    raise RuntimeError("a captured frame could not be decoded")
                f.decode_s += time.thread_time() - t0
                if self.enc is None:
                    w, h = self.size or (img.shape[1], img.shape[0])
                    self.enc = VideoEncoder(
                        self.path,
                        w,
                        h,
                        self.fps,
                        codec=self.codec,
                        bitrate_mbps=self.bitrate_mbps,
                        keyframe_interval=self.keyframe_interval,
                        threads=self.threads,
                    )
                self.enc.write(img)
                f.frames += 1
        except BaseException as e:  # kept for the capture side; the thread keeps draining
            self.error = e
            while self._q.get() is not None:
                pass
        finally:
            if self.enc is not None:
                try:
                    self.enc.close()
                except BaseException as e:
                    self.error = self.error or e
                f.encode_s = self.enc.encode_s

    @property
    def width(self) -> int | None:
        return self.enc.width if self.enc else None

    @property
    def height(self) -> int | None:
        return self.enc.height if self.enc else None


__all__ = ["CODECS", "CODEC_LABEL", "EncodeWorker", "EncoderUnavailable", "VideoEncoder", "available", "even", "pick"]
