"""The real-time capture for 录屏复核 (item smoothness.frame_pacing): a video of
what a viewer saw during a real-time pass, timed by Chromium's own frame timestamps, so a
stall shows as a held frame as long as it lasted (browser/screencast.py, realtime_video.py).

Which pass is filmed is the scenario's choice (`capture_in`): the measured pass itself, when
the capture's cost does not move the figures (benchmarks/realtime_capture.py measures it),
or a second real-time pass of the same length, so the measured pass is never disturbed.
When the video is wanted is the scenario's choice too (`when`): by default only when the
frame-pacing item ends in `review` (a reviewer has to look), always with
`run --realtime-capture`, or never. That decision is the runner's
(runner.review_material_wanted: it scores the item on the evidence already collected); this
probe is told (`ctx.wanted`), films or not, and reads no rubric and runs no scorer.

This probe runs right after frame_pacing, and whenever frame_pacing runs (`companion_of`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.browser.screencast import VIDEO_NAME
from skycity_bench.common.errors import ProbeError
from skycity_bench.evidence.realtime_capture import RealtimeCaptureEvidence
from skycity_bench.probes import probe, registry
from skycity_bench.probes.probe_api import Wanted

ITEM = "smoothness.frame_pacing"


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Every value comes from the scenario's probes.realtime_capture (reasons there); none defaults.
    when: Literal["review", "always", "never"]
    capture_in: Literal["measured_pass", "second_pass"]
    fps: Literal[30, 60]
    max_width: int = Field(ge=160, le=3840)
    max_height: int = Field(ge=90, le=2160)
    jpeg_quality: int = Field(ge=20, le=100)
    bitrate_mbps: float = Field(gt=0.1, le=50)
    queue_frames: int = Field(ge=1, le=1000)
    encode_timeout_s: float = Field(gt=0, le=1200)


def _settings(sc) -> Settings:
    return Settings.model_validate(sc.probes.get("realtime_capture") or {})


def _budget(sc) -> float:
    # a second real-time pass (load + duration) plus the encoder's catching up
    return sc.duration_s + sc.timeouts.load_s + sc.timeouts.probe_grace_s + _settings(sc).encode_timeout_s


@probe(
    "realtime_capture",
    realtime=True,
    order=11,
    settings=Settings,
    evidence=RealtimeCaptureEvidence,
    after=("frame_pacing",),
    companion_of=("frame_pacing",),
    review_material_for=ITEM,
    budget=_budget,
    description="real-time video of what a viewer saw (CDP screencast, Chromium's frame timestamps) "
    "for 录屏复核, when frame pacing ends in review or on request",
)
async def collect(ctx) -> RealtimeCaptureEvidence:
    return RealtimeCaptureEvidence.model_validate(await _collect(ctx))


async def _collect(ctx) -> dict:
    s: Settings = ctx.settings
    rec = ctx.artifacts.get("frame_pacing")
    measured = ((rec.data or {}) if rec is not None else {}).get("realtime_capture")
    out: dict[str, Any] = {
        "file": None,
        "when": s.when,
        "capture_in": s.capture_in,
        "pass": None,
        "reason": "",
        "intervals_from": None,
        "capture": None,
    }
    if measured:
        out["measured_pass_capture"] = {k: v for k, v in measured.items() if k != "dropped_spans_s"}
    told = ctx.wanted or Wanted(False, "the runner did not say whether the video is wanted")
    if not told.yes:
        out["reason"] = told.reason
    elif rec is None or rec.status != "ok":
        out["reason"] = "frame_pacing did not collect its evidence: no real-time pass to film"
    else:
        out["reason"] = told.reason
        if s.capture_in == "measured_pass" and measured and measured.get("file"):
            out.update(
                {
                    "file": measured["file"],
                    "capture": measured,
                    "pass": "measured_pass",
                    "intervals_from": "frame_pacing",
                }
            )
            return out
        if s.capture_in == "measured_pass":
            out["reason"] += (
                "; the measured pass was not captured "
                f"({(measured or {}).get('problem') or 'no capture'}): filmed in a second pass"
            )
        try:
            second = await _second_pass(ctx)
        except ProbeError as e:  # the demo hung, crashed or left in this pass: no video, no run failure
            out.update({"pass": "second_pass", "problem": f"the second real-time pass failed: {e}"})
            return out
        cap = second.pop("realtime_capture", None) or {"file": None, "problem": "the capture did not run"}
        out.update({"file": cap.get("file"), "capture": cap, "pass": "second_pass", "intervals_from": "second_pass"})
        # the second pass's own frame clock: the plot under the video shows this pass
        out["second_pass"] = {k: second.get(k) for k in ("duration_s", "frames", "raf_ms", "entry_ms", "drew")}
        return out
    # Not wanted: a video the measured pass made is not kept.
    if measured and measured.get("file"):
        out["reason"] += f"; the measured pass's video ({measured['file']}) was not kept"
        p = ctx.out_dir / measured["file"]
        p.unlink(missing_ok=True)
        try:
            p.parent.rmdir()
        except OSError:
            pass
    return out


async def _second_pass(ctx) -> dict:
    """The frame-pacing pass again, with the screencast on (its evidence is this probe's,
    never the measured figures). One pass only: the machine-noise calibration and re-runs
    around the measured pass are about the measurement, not the video."""
    from skycity_bench.probes import frame_pacing

    ctx2 = dataclasses.replace(ctx, settings=ctx.scenario.probe_settings("frame_pacing"))
    ctx2.realtime_capture_pass = True  # read by frame_pacing._capture
    one_pass = getattr(frame_pacing, "_pass", None) or registry.get("frame_pacing").collect
    return await one_pass(ctx2)


__all__ = ["Settings", "VIDEO_NAME"]
