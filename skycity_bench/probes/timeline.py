"""Timeline facts and camera motion (items camera.phases, camera.motion, camera.ending).

Under the fake clock the demo is stepped from t = 0 to `end_s` (65 s: the tour plus five
seconds after it) at `sample_fps`; at each step the bench reads the hook's getState (the
demo's own claim of its phase: it locates, it is reported as a claim) and captures a PNG
scaled to `analysis_width`, which a worker thread registers against the previous one
(probes/_motion.py) while the browser renders the next. In the last `ending_window_s` of
the tour it looks for the city name (probes/_city_name.py). Frames of the first seconds
and of the time after the tour are kept as thumbnails to tell a jump back to the start.

One tour pass (probes/_tour.py): stepping the demo through 65 s means running 3900
animation frames of its code, which costs as much as the screenshots on a heavy demo. So
the recording's pass declares that it produces this probe's evidence (ProbeSpec.produces):
when both run, the runner runs that one pass, which samples the timeline at these settings'
times (registering the video's own frame where the times meet), and this function is not
called; run alone (`--probe timeline`), this probe walks the same pass without the video.
It collects measurements only; cuts, the reset verdict and findings are judged by
scorers/camera.py from these series with the thresholds below, so `rescore` can apply new
thresholds without a browser.

Note: the fake clock does not drive CSS animations or transitions; a closing title that
fades in by CSS runs on real time and is seen in whatever state real time left it.
"""

from __future__ import annotations

from skycity_bench.common.errors import Cause, ProbeError
from skycity_bench.evidence.timeline import TimelineEvidence, TimelineSettings
from skycity_bench.probes import probe
from skycity_bench.probes._tour import tour_pass

# The settings live beside the evidence: the camera scorer reads them too.
Settings = TimelineSettings


def _budget(sc) -> float:
    return Settings.model_validate(sc.probes.get("timeline") or {}).budget_s + sc.timeouts.load_s


@probe(
    "timeline",
    settings=Settings,
    evidence=TimelineEvidence,
    budget=_budget,
    description="fake-clock stepping 0–65 s: hook phases, city name, camera registration, reset at 60 s "
    "(in the recording's pass when both run)",
)
async def collect(ctx) -> TimelineEvidence:
    try:
        got = await tour_pass(ctx, timeline=ctx.settings, stepped_by="timeline")
    except ProbeError as e:
        e.data = (e.data or {}).get("timeline") or {}
        raise
    if got.get("stopped"):  # the run's wall-clock budget ended the pass
        raise ProbeError(got["stopped"]["message"], got["timeline"], cause=Cause.BUDGET)
    return TimelineEvidence.model_validate(got["timeline"])
