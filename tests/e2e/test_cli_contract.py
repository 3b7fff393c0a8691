"""The CLI as a user meets it: bad input and bad options (one line, exit 2, nothing written),
a demo that throws, and the report's contract. No assertion here depends on real time (the
frame-pacing runs' figures are only checked to be well-formed), so these run in the parallel
pass; the wall-clock bound on a hanging demo is test_cli_run.py, in the real-time pass."""

import json

import pytest

from .test_cli_run import cli

SHEET_IDS = [
    "visual.composition",
    "visual.color_light_material",
    "visual.floating_districts",
    "visual.identity_details",
    "camera.phases",
    "camera.motion",
    "camera.ending",
    "density.count",
    "density.categories",
    "density.behavior",
    "shops.hover",
    "shops.auto_display",
    "shops.manual_priority",
    "shops.card_placement",
    "shops.touch",
    "smoothness.frame_pacing",
    "packaging.single_file",
    "packaging.autoplay",
    "packaging.pause_resume_replay",
    "packaging.framing",
]


@pytest.fixture
def bad_files(tmp_path):
    (tmp_path / "empty.html").write_text("")
    (tmp_path / "notes.txt").write_text("just some words, no markup at all\n")
    (tmp_path / "bin.html").write_bytes(b"\x00\x01\x02" * 100)
    return tmp_path


@pytest.mark.parametrize(
    "arg,needle",
    [
        ("missing.html", "no such file"),
        (".", "is a directory"),
        ("empty.html", "empty"),
        ("notes.txt", "not an HTML file"),
        ("bin.html", "not an HTML file"),
    ],
)
def test_should_reject_bad_input_with_one_line_and_exit_2(bad_files, arg, needle):
    r = cli("run", str(bad_files / arg), "--out", str(bad_files / "out"))
    assert r.returncode == 2, r.stderr
    lines = [x for x in r.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in r.stderr
    assert not (bad_files / "out").exists()


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--probe", "nosuch"], "known probes: frame_pacing"),
        (["--viewport", "wide"], "--viewport"),
        (["--duration", "0"], "duration_s"),
        (["--network", "sometimes"], "--network"),
    ],
)
def test_should_reject_bad_options_with_one_line_and_exit_2(args, needle):
    r = cli("run", "scenarios/demos/basic.html", *args)
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr


@pytest.mark.browser
def test_should_fail_a_demo_that_throws_before_drawing_and_exit_0(tmp_path):
    out = tmp_path / "run"
    r = cli(
        "run",
        "tests/fixtures/frame_pacing/throws.html",
        "--duration",
        "2",
        "--viewport",
        "640x360",
        "--probe",
        "frame_pacing",
        "--out",
        str(out),
        "--quiet",
    )
    # the page was watched and never drew: that is the verdict (fail, 0), not a failed run
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads((out / "report.json").read_text())
    item = report["items"]["smoothness.frame_pacing"]
    assert (item["status"], item["points"]) == ("fail", 0.0), item["evidence"]
    assert "never drew" in item["evidence"]["reason"] and "boom" in item["evidence"]["untested_reason"]
    assert report["start"]["drew"] is False and "boom" in report["start"]["reason"]


@pytest.mark.browser
def test_should_write_every_sheet_item_and_the_contract_paths(tmp_path):
    out = tmp_path / "run"
    r = cli(
        "run",
        "scenarios/demos/basic.html",
        "--probe",
        "frame_pacing",
        "--duration",
        "2",
        "--viewport",
        "640x360",
        "--out",
        str(out),
        "--quiet",
    )
    assert r.returncode == 0, r.stderr
    rep = json.loads((out / "report.json").read_text())
    assert rep["schema"] == "skycity-bench/report@1"
    assert list(rep["items"]) == SHEET_IDS
    assert rep["candidate"]["id"].startswith("c-") and len(rep["candidate"]["sha256"]) == 64
    assert rep["rubric_id"] == "skycity-v1"
    for k in (
        "browser_version",
        "webgl_renderer",
        "software_rendering",
        "viewport",
        "device_scale_factor",
        "refresh_interval_ms",
        "os",
        "cpu_model",
        "cpu_cores",
        "bench_version",
        "scenario_sha256",
    ):
        assert k in rep["environment"], k
    s = rep["measurements"]["smoothness"]
    assert {"p95_ms", "long_frame_ratio"} <= set(s["full"]) and s["tier"] in (10, 8, 6, 3, 0)
    assert 0 <= s["scene_update_ratio"] <= 1
    assert rep["measurements"]["playback"]["external_requests"] == []
    for iid, it in rep["items"].items():
        assert it["status"] in ("pass", "partial", "fail", "untested", "review")
        if it["status"] in ("untested", "review"):
            assert it["points"] is None and it["evidence"].get("reason"), iid
    assert "smoothness" in r.stdout and "frame pacing" in r.stdout
