"""The four packaging scorers on hand-made evidence (no browser), and the pure pixel helpers
they rely on (blank bands, SSIM, change cells)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.inputs.scenario import load_scenario
from skycity_bench.judging.scorers import ScoreInput, all_scorers
from skycity_bench.probes._pixel_compare import change_stats, changed_mask, ssim
from skycity_bench.probes.framing import blank_bands
from skycity_bench.reporting.run_report import ProbeRecord

RUBRIC = load_rubric()
SCENARIO = load_scenario()


# What a hand-made record leaves out is filled from a neutral whole evidence, so every
# record is a valid evidence model (skycity_bench/evidence/: unknown or missing fields fail).
_QUIET_CHANGE = {"changed_share": 0.0, "changed_cells": 0, "grid": [16, 9], "bbox": None}
BASE = {
    "packaging": {
        "file_bytes": 1000,
        "lines": 40,
        "references": [],
        "embedded": [],
        "dynamic": [],
        "page": {"watched_s": 1.0, "bench_errors": [], "page_errors": [], "navigations": []},
    },
    "playback": {
        "viewport": [1280, 720],
        "autoplay": {
            "frames": [{"t_s": 0.1}],
            "changes": [],
            "union": _QUIET_CHANGE,
            "travel": {"travel_px": 0, "extent_px": 0, "places": 0, "bbox": None},
            "sound": None,
            "dialogs": [],
            "page_errors": [],
            "files": [],
        },
        "pause_resume_replay": {
            "hook_methods": [],
            "hook_has_time": False,
            "ways": {
                "hook": {"way": "hook", "untested": "no hook"},
                "keyboard": {"way": "keyboard", "untested": "keyboard not enabled"},
            },
        },
    },
    "framing": {"viewports": [], "times_s": [1.0]},
}


def whole(probe: str, data: dict) -> dict:
    if probe not in BASE:
        return data
    out = copy.deepcopy(BASE[probe])
    for k, v in data.items():
        out[k] = {**out[k], **v} if isinstance(v, dict) and isinstance(out.get(k), dict) and probe == "playback" else v
    return out


def score(item_id: str, **records):
    inp = ScoreInput(
        item=RUBRIC.item(item_id),
        rubric=RUBRIC,
        scenario=SCENARIO,
        records={k: ProbeRecord(name=k, data=whole(k, v)) for k, v in records.items()},
    )
    return all_scorers()[item_id].fn(inp)


# ------------------------------------------------------------------ single_file
def pk(references=(), embedded=(), dynamic=()):
    return {"references": list(references), "embedded": list(embedded), "dynamic": list(dynamic), "file_bytes": 1000}


def net(*reqs):
    return {
        "requests": [
            {"url": u, "method": "GET", "resource_type": "script", "t_wall": 1.0e9 + i, "outcome": o, "detail": d}
            for i, (u, o, d) in enumerate(reqs)
        ],
        "misses": [],
        "mode": "offline",
    }


def test_should_fail_single_file_when_a_cdn_import_was_served_from_the_offline_cache():
    url = "https://cdn.jsdelivr.net/npm/three@0.160.0/build/three.module.js"
    r = score(
        "packaging.single_file",
        packaging=pk([{"url": url, "line": 12, "where": "static import"}]),
        network=net((url, "served", "served from the offline cache: three@0.160.0")),
    )
    assert (r.status, r.points, r.evidence["rule"]) == ("fail", 0, "F1")
    assert url in r.evidence["reason"] and "offline cache" in r.evidence["reason"]
    assert r.evidence["external_requests"][0]["outcome"] == "served"


def test_should_fail_single_file_for_a_markup_reference_even_when_nothing_was_requested():
    r = score(
        "packaging.single_file",
        packaging=pk([{"url": "style.css", "line": 4, "where": "<link rel=stylesheet>"}]),
        network=net(),
    )
    assert (r.status, r.evidence["rule"]) == ("fail", "F2")
    assert "line 4" in r.evidence["reason"]


def test_should_give_partial_for_a_loading_call_that_never_ran():
    r = score(
        "packaging.single_file", packaging=pk([{"url": "data/city.json", "line": 9, "where": "fetch()"}]), network=net()
    )
    assert (r.status, r.points, r.evidence["rule"]) == ("partial", 1.0, "P1")


def test_should_fail_a_loading_call_that_did_run():
    r = score(
        "packaging.single_file",
        packaging=pk([{"url": "data/city.json", "line": 9, "where": "fetch()"}]),
        network=net(("http://127.0.0.1:4000/data/city.json", "blocked", "blocked")),
    )
    assert r.evidence["rule"] == "F1"


def test_should_give_partial_for_embedded_binaries_over_the_size_limit_only():
    big = {"kind": "image/png", "mime": "image/png", "bytes": 9000, "line": 3, "how": "data: URI, base64"}
    small = {**big, "bytes": 300}
    r = score("packaging.single_file", packaging=pk(embedded=[big, small]), network=net())
    assert (r.status, r.evidence["rule"]) == ("partial", "P2")
    assert "8.8 KB" in r.evidence["reason"]
    r = score("packaging.single_file", packaging=pk(embedded=[small]), network=net())
    assert (r.status, r.points) == ("pass", 2.0)
    assert "small embedded" in r.evidence["notes"][0]


def test_should_ignore_the_browsers_own_favicon_request_and_inline_urls():
    r = score(
        "packaging.single_file",
        packaging=pk(),
        network=net(("http://127.0.0.1:4000/favicon.ico", "blocked", ""), ("data:image/png;base64,AA", "blocked", "")),
    )
    assert r.status == "pass" and r.evidence["external_requests"] == []


# ------------------------------------------------------------------ autoplay
def watch(cells=0, share=0.0, travel=0, t0=3.0):
    return {
        "frames": [{"t_s": t0}, {"t_s": t0 + 0.5}, {"t_s": t0 + 1.0}, {"t_s": t0 + 1.5}],
        "union": {"changed_share": share, "changed_cells": cells, "grid": [16, 9], "bbox": None},
        "travel": {"travel_px": travel, "extent_px": travel, "places": 1 if travel else 0, "bbox": None},
    }


def autoplay_data(cells=40, share=0.05, sound=None, travel=0, control=None, clicked=None):
    d = {
        "frames": [{"t_s": 0.1 + 0.5 * i} for i in range(7)],
        "union": {"changed_share": share, "changed_cells": cells, "grid": [16, 9], "bbox": None},
        "travel": {"travel_px": travel, "extent_px": travel, "places": 1, "bbox": None},
        "changes": [],
        "sound": sound or {"media": [], "audio": [], "input_listeners": []},
        "files": [],
        "dialogs": [],
        "page_errors": [],
    }
    for k, v in (("control", control), ("clicked", clicked)):
        if v:
            d[k] = v
    return {"autoplay": d}


def test_should_pass_autoplay_when_the_scene_moves_widely_and_silently():
    r = score("packaging.autoplay", playback=autoplay_data())
    assert (r.status, r.points) == ("pass", 1.0)
    assert r.measurements == {"playback.autoplay": True, "playback.audible": False}


def test_should_pass_a_sparse_scene_whose_one_mover_travels_and_fail_a_spinner():
    # one car entering late: 0.18 % of the pixels in 2 cells, but it travelled 80 px
    r = score("packaging.autoplay", playback=autoplay_data(cells=2, share=0.0018, travel=80))
    assert r.status == "pass" and "travelled 80 px" in r.evidence["reason"], r.evidence["reason"]
    # a spinner changes as much, in place
    r = score("packaging.autoplay", playback=autoplay_data(cells=2, share=0.004, travel=3))
    assert r.status == "fail" and "spinner" in r.evidence["reason"] and r.evidence["outcome"] == "still"


def test_should_name_click_to_start_only_when_the_no_input_control_stayed_still():
    clicked = watch(cells=50, share=0.2, travel=120)
    r = score("packaging.autoplay", playback=autoplay_data(cells=0, share=0.0, control=watch(), clicked=clicked))
    assert r.status == "fail" and r.evidence["outcome"] == "click_to_start" and r.evidence["started_after_click"]
    assert "click-to-start" in r.evidence["reason"]
    # the same after-click picture, but the page left alone moved too: a late start, no accusation
    moved = watch(cells=3, share=0.002, travel=60)
    r = score("packaging.autoplay", playback=autoplay_data(cells=0, share=0.0, control=moved, clicked=clicked))
    assert r.evidence["outcome"] == "late_start" and not r.evidence["started_after_click"]
    assert "click-to-start" not in r.evidence["reason"].replace("not click-to-start", "")
    # neither arm moved; and without the arms nothing is claimed
    r = score("packaging.autoplay", playback=autoplay_data(cells=0, share=0.0, control=watch(), clicked=watch()))
    assert r.evidence["outcome"] == "still_click_tried"
    r = score("packaging.autoplay", playback=autoplay_data(cells=0, share=0.0, clicked=clicked))
    assert r.evidence["outcome"] == "still" and not r.evidence["started_after_click"]


def test_should_give_partial_autoplay_when_it_makes_sound():
    sound = {
        "media": [{"tag": "audio", "src": "data:audio/wav", "volume": 1, "audible": True}],
        "audio": [
            {
                "state": "running",
                "feeds_destination": ["GainNode"],
                "feed_gains": [0],
                "sources_started": 1,
                "audible": False,
            }
        ],
        "input_listeners": [],
    }
    r = score("packaging.autoplay", playback=autoplay_data(sound=sound))
    assert (r.status, r.points) == ("partial", 0.5)
    assert len(r.evidence["audible"]) == 1 and "<audio>" in r.evidence["audible"][0]


# ------------------------------------------------------------------ pause / resume / replay
def cycle(pause_share=0.0, resume_share=0.2, ssim_v=0.999, block=0.99, times=(1.0, 1.0, 2.5)):
    t_before, t0, t1 = times
    return {
        "pause": {"changed_share": pause_share, "changed_cells": 0, "hook_time": [t_before, t0, t1]},
        "resume": {
            "changed_share": resume_share,
            "changed_cells": 40,
            "hook_time": [t1, None if t1 is None else t1 + 0.5],
        },
        "replay": [
            {"t_s": 2.0, "ssim": ssim_v, "worst_block": block, "offset_frames": 0},
            {"t_s": 5.0, "ssim": ssim_v, "worst_block": block, "offset_frames": 0},
        ],
    }


def way(name, cycles):
    return {
        "way": name,
        "first_play_times_s": [2.0, 5.0],
        "first_play_change": {"changed_share": 0.3, "changed_cells": 80},
        "cycles": cycles,
    }


def prr(hook=None, keyboard=None):
    return {
        "pause_resume_replay": {
            "hook_methods": [],
            "ways": {
                "hook": hook or {"way": "hook", "untested": "no hook"},
                "keyboard": keyboard or {"way": "keyboard", "untested": "keyboard not enabled"},
            },
        }
    }


def test_should_pass_pause_resume_replay_only_when_both_cycles_hold():
    ok = {"cycles": [cycle(times=(1.0, 1.0, 1.0)), cycle(times=(1.0, 1.0, 1.0))]}
    r = score("packaging.pause_resume_replay", playback=prr(hook=way("hook", ok["cycles"])))
    assert (r.status, r.points, r.evidence["decided_by"]) == ("pass", 1.0, "hook")
    second_broken = [cycle(times=(1.0, 1.0, 1.0)), cycle(ssim_v=0.93, block=0.6, times=(1.0, 1.0, 1.0))]
    r = score("packaging.pause_resume_replay", playback=prr(hook=way("hook", second_broken)))
    assert r.status == "partial" and "cycle 2" in r.evidence["reason"] and "did not reset" in r.evidence["reason"]


def test_should_name_a_pause_that_stops_only_the_camera():
    cycles = [cycle(pause_share=0.03, times=(1.0, 1.0, 1.0))] * 2
    r = score("packaging.pause_resume_replay", playback=prr(keyboard=way("keyboard", cycles)))
    assert r.status == "partial" and "暂停只停止镜头" in r.evidence["reason"]
    assert r.evidence["decided_by"] == "keyboard"


def test_should_fail_a_frozen_pause_whose_hook_time_runs_on():
    cycles = [cycle(times=(1.0, 1.0, 2.0), ssim_v=0.5, block=0.1)] * 2
    r = score("packaging.pause_resume_replay", playback=prr(hook=way("hook", cycles)))
    assert r.status == "fail" and "hook's time ran on" in r.evidence["reason"]


def test_should_be_untested_without_hook_and_keyboard():
    r = score("packaging.pause_resume_replay", playback=prr())
    assert r.status == "untested" and r.points is None and "no hook" in r.evidence["reason"]


def test_should_take_the_better_way_and_keep_the_other_ways_failures():
    good = [cycle(times=(1.0, 1.0, 1.0))] * 2
    bad = [cycle(pause_share=0.5, times=(None, None, None), ssim_v=0.4, block=0.1)] * 2
    r = score("packaging.pause_resume_replay", playback=prr(hook=way("hook", bad), keyboard=way("keyboard", good)))
    assert r.status == "pass" and r.evidence["decided_by"] == "keyboard"
    assert r.evidence["ways"]["hook"]["status"] == "fail" and r.evidence["other_ways"] == ["hook: fail"]


# ------------------------------------------------------------------ framing
def vp(w, h, *, overlays=(), blank=0.0, buffer=None, scroll=False, texts=()):
    smp = {
        "t_s": 1.0,
        "page": {
            "inner": [w, h],
            "client": [w, h],
            "scroll": [w, h],
            "scrollbar": [0, 0],
            "scrollable_x": False,
            "scrollable_y": scroll,
        },
        "scene": {
            "tag": "canvas",
            "id": "c",
            "rect": [0, 0, w, h],
            "buffer": list(buffer or (w, h)),
            "object_fit": "fill",
            "visible_share": 1,
        },
        "overlays": list(overlays),
        "canvas_texts": [{"text": t, "draws": 9} for t in texts],
        "excused_texts": [],
    }
    return {
        "viewport": [w, h],
        "samples": [smp],
        "blank_bands": [
            {
                "side": "top",
                "px": 9,
                "share": blank,
                "counted_share": blank,
                "sharp_edge_share": 1.0,
                "colour_bgr": [0, 0, 0],
            }
        ],
        "blank_share": blank,
        "file": f"framing/framing-{w}x{h}.png",
        "clock": {},
    }


VPS = [(1920, 1080), (1280, 720), (1024, 768)]
PANEL = {
    "tag": "div",
    "id": "stats",
    "cls": "",
    "text": "60 FPS",
    "why": "text",
    "rect": [0, 0, 80, 48],
    "position": "fixed",
    "excused": False,
}


def test_should_pass_framing_that_fits_everywhere_without_overlays():
    r = score("packaging.framing", framing={"viewports": [vp(*s) for s in VPS]})
    assert (r.status, r.points) == ("pass", 1.0) and len(r.evidence["files"]) == 3


def test_should_give_partial_framing_for_overlay_ui_or_a_misfit_at_some_viewports():
    r = score("packaging.framing", framing={"viewports": [vp(*s, overlays=[PANEL]) for s in VPS]})
    assert r.status == "partial" and "60 FPS" in r.evidence["reason"]
    r = score("packaging.framing", framing={"viewports": [vp(*s, buffer=(1920, 1080)) for s in VPS]})
    assert r.status == "partial" and "stretched" in r.evidence["reason"] and "1024x768" in r.evidence["reason"]
    excused = {**PANEL, "text": "云岚城", "excused": True}
    r = score("packaging.framing", framing={"viewports": [vp(*s, overlays=[excused]) for s in VPS]})
    assert r.status == "pass"


def test_should_fail_framing_that_never_fits_or_has_both_problems():
    r = score("packaging.framing", framing={"viewports": [vp(*s, blank=0.3) for s in VPS]})
    assert r.status == "fail" and "blank bands" in r.evidence["reason"]
    both = [vp(1920, 1080, scroll=True), vp(1280, 720), vp(1024, 768, texts=["FPS: 59.8"])]
    r = score("packaging.framing", framing={"viewports": both})
    assert r.status == "fail" and "scrollbars" in r.evidence["reason"] and "FPS: 59.8" in r.evidence["reason"]


# ------------------------------------------------------------------ pixels
def test_should_count_letterbox_bars_but_not_a_gradient_sky():
    h, w = 200, 300
    sky = np.zeros((h, w, 3), np.uint8)
    sky[:] = np.linspace(20, 200, h, dtype=np.uint8)[:, None, None]  # a vertical gradient, static
    sky[150:, ::7] = 255  # a ragged skyline
    bands, mask = blank_bands([sky, sky.copy()], 8, [0, 0, w, h])
    assert mask.mean() == 0
    boxed = sky.copy()
    boxed[:20] = 0
    boxed[-20:] = 0  # letterbox bars drawn in the canvas
    bands, mask = blank_bands([boxed, boxed.copy()], 8, [0, 0, w, h])
    assert mask.mean() == pytest.approx(40 / 200)
    bands, mask = blank_bands([sky, sky.copy()], 8, [0, 20, w, 160])  # the canvas does not reach the top
    assert {b["side"] for b in bands if b["counted_share"] > 0} >= {"top"}


def test_should_score_identical_frames_one_and_a_misplaced_object_low_in_its_block():
    rng = np.random.default_rng(3)
    a = cv2_blur(rng.integers(0, 255, (360, 640, 3), dtype=np.uint8))
    assert ssim(a, a)["ssim"] == pytest.approx(1.0)
    b = copy.deepcopy(a)
    b[100:130, 200:240] = 255
    s = ssim(a, b)
    assert s["ssim"] > 0.95 and s["worst_block"] < 0.9


def test_should_tell_a_spinner_from_a_scene_by_changed_cells():
    a = np.zeros((360, 640, 3), np.uint8)
    b = a.copy()
    b[160:200, 300:340] = 255
    assert change_stats(changed_mask(a, b))["changed_cells"] <= 4
    c = a.copy()
    c[::40, :] = 255
    assert change_stats(changed_mask(a, c))["changed_cells"] == 16 * 9


def cv2_blur(img):
    import cv2

    return cv2.GaussianBlur(img, (9, 9), 3)
