"""The recording's pass stands in for the timeline's own stepping only when it sampled the
timeline with the very same settings (no browser: a reused pass must not open a page)."""

from __future__ import annotations

import asyncio
import json

from skycity_bench.probes.base import ProbeContext
from skycity_bench.probes.recording import _timeline_every
from skycity_bench.probes.timeline import Settings, _from_recording, collect, settings_key
from skycity_bench.report import ProbeRecord
from skycity_bench.scenario import load_scenario


# A whole (if empty) timeline pass as the recording writes it (skycity_bench/evidence/timeline.py).
PASS = {"stepped_by": "x", "sample_fps": 10, "end_s": 65, "tour_s": 60, "viewport": {"width": 1920, "height": 1080},
        "analysis_size": None, "css_per_px": 4.0, "city_name": None, "hook": {}, "states": {}, "phases": [],
        "frames": {}, "reset": {}, "name_checks": [], "wall_s": 0.0, "analysis_cpu_s": 0.0,
        "spent_s": {}, "page_errors": [], "evidence_frames": {}}


def _ctx(tmp_path, s: Settings, key: str, status: str = "ok") -> ProbeContext:
    (tmp_path / "timeline").mkdir(exist_ok=True)
    (tmp_path / "timeline" / "pass_from_recording.json").write_text(json.dumps(PASS))
    rec = ProbeRecord(name="recording", status=status, data={
        "timeline_pass": {"file": "timeline/pass_from_recording.json", "settings": key}})
    return ProbeContext(demo=None, scenario=load_scenario(None), out_dir=tmp_path, browser=None, settings=s,
                        artifacts={"recording": rec})


def test_should_take_the_recordings_pass_without_opening_a_page(tmp_path):
    s = Settings()
    data = asyncio.run(collect(_ctx(tmp_path, s, settings_key(s))))
    assert data.stepped_by == "recording"


def test_should_step_on_its_own_when_the_pass_used_other_settings_or_failed(tmp_path):
    s = Settings(sample_fps=5)
    assert _from_recording(_ctx(tmp_path, s, settings_key(Settings())), s) is None
    assert _from_recording(_ctx(tmp_path, s, settings_key(s), status="error"), s) is None
    assert _from_recording(_ctx(tmp_path, s, settings_key(s)), s) is not None


def test_should_sample_the_timeline_in_the_recording_only_at_a_rate_dividing_its_fps():
    rec = load_scenario(None).probe_settings("recording")          # 30 fps to 65 s
    assert _timeline_every(Settings(sample_fps=10), rec) == 3
    assert _timeline_every(Settings(sample_fps=3), rec) == 10
    assert _timeline_every(Settings(sample_fps=4), rec) is None
    assert _timeline_every(Settings(sample_fps=10), rec.model_copy(update={"fps": 60})) == 6
    assert _timeline_every(Settings(end_s=70), rec) is None


def test_should_not_step_a_demo_again_that_hung_in_the_recordings_pass(tmp_path):
    import pytest

    from skycity_bench.errors import ProbeError

    s = Settings()
    ctx = _ctx(tmp_path, s, settings_key(s), status="error")
    ctx.artifacts["recording"].error = "advancing the clock 34 ms: no answer within 10.2 s (the demo's main thread hangs)"
    ctx.artifacts["recording"].data = {"demo_failure": "hang", "timeline_partial": {"reached_s": 1.5}}
    with pytest.raises(ProbeError, match="not stepped again") as e:
        asyncio.run(collect(ctx))
    assert e.value.data == {"reached_s": 1.5}
