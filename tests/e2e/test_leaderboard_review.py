"""The leaderboard on a store made from real runs. Eighteen demos of the repository (the
reference demo, check, timeline, density, shops, packaging and broken fixtures; not the
generated three.js cities, half a minute each on software WebGL) are placed as 3 systems ×
3 prompts × 2 samples by a round manifest and run by the real CLI as one batch
(`skycity-bench run FILES --manifest round.csv`, the packaging probe only: it runs on the
fake clock, about ten seconds a demo with the browser's start). Their run folders are
imported with the manifest the batch wrote, scored through the served app's HTTP API by two
reviewers (a level for every manual and assisted item; for every automated item the bench
left without points, an override with its reason) and finalised by an admin. Then:

- `leaderboard --db` prints the table, writes the figure, and its JSON passes the schema of the
  documented shape; each system's mean is the one worked out here from the run folders' own
  points and the reviewers' scores;
- the admin page (linked from the admin's nav) shows the same numbers as that JSON, and
  /api/admin/leaderboard serves that very document;
- a reviewer gets 403 on both, finds no link to them, and is never served a system or prompt.

The test plays the reviewers and knows the round, so it gives each system's candidates the
levels of that system, lower on one harder prompt (the truth a reviewer's eye would bring):
the order is known.
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from skycity_bench.cli import app as cli_app
from skycity_bench.inputs.demo_file import candidate_id, load_demo
from skycity_bench.inputs.round_manifest import Manifest, parse_manifest
from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.review import create_app
from skycity_bench.store.manifests import manifests
from skycity_bench.store.review_store import ReviewStore
from tests.e2e.test_batch_resume import ROOT, fast_scenario
from tests.review_reports import client, http_client, serving

R = load_rubric()
SHARE = {lv.key: lv.share for lv in R.levels}
# system → the files of its (prompt, sample) cells, in the order p-harbour 1, 2, p-night 1, 2,
# p-canyon 1, 2; every file a different demo (identical bytes would be one candidate)
ROUND = {
    "model-atlas v1": (
        "scenarios/demos/reference.html",
        "tests/fixtures/check/compliant.html",
        "tests/fixtures/timeline/clean.html",
        "tests/fixtures/packaging/clean.html",
        "tests/fixtures/timeline/three_phases.html",
        "tests/fixtures/shops/correct.html",
    ),
    "model-beacon v2": (
        "tests/fixtures/packaging/dead_reference.html",
        "tests/fixtures/check/no_hook.html",
        "tests/fixtures/timeline/canvas_name.html",
        "tests/fixtures/density/movers_50.html",
        "tests/fixtures/check/pause_noop.html",
        "tests/fixtures/packaging/stats_panel.html",
    ),
    "model-cinder v0": (
        "tests/fixtures/broken/throws_at_load.html",
        "tests/fixtures/broken/never_resolves_module.html",
        "tests/fixtures/packaging/external_resources.html",
        "tests/fixtures/check/external_script.html",
        "tests/fixtures/broken/draws_once_freezes.html",
        "tests/fixtures/broken/bare_three_import.html",
    ),
}
SYSTEMS = tuple(ROUND)
PROMPTS = ("p-harbour", "p-night", "p-canyon")
TAG = "round-7"
# The reviewers' levels: ann's is the system's own, one lower on the harder prompt (a prompt
# effect every system shares, which the paired differences cancel); bob gives the same or one
# lower (never more than one level apart: no third reviewer).
LEVEL_KEYS = [lv.key for lv in sorted(R.levels, key=lambda lv: -lv.share)]
SYSTEM_LEVEL = {"model-atlas v1": 0, "model-beacon v2": 1, "model-cinder v0": 2}
HARDER = {"p-harbour": 0, "p-night": 0, "p-canyon": 1}
BOB_LOWER = {"model-atlas v1": 1, "model-beacon v2": 0, "model-cinder v0": 1}
REVIEWERS = ("ann", "bob")
OVERRIDE_REASON = "packaging-only round: this item was judged by eye from the page"
# the documented JSON shape (more fields are welcome): type per key, lists described by their item
NUMBER = (int, float)
SCHEMA: dict[str, Any] = {
    "seed": int,
    "resamples": int,
    "systems": [
        {
            "system": str,
            "mean": NUMBER,
            "ci": [NUMBER],
            "rank_range": [int],
            "prompts": int,
            "samples": int,
        }
    ],
    "pairs": [{"a": str, "b": str, "diff": NUMBER, "ci": [NUMBER], "separated": bool}],
}


def round_csv() -> str:
    lines = ["file,system,prompt,sample,tags"]
    for system, files in ROUND.items():
        for i, f in enumerate(files):
            lines.append(f"{f},{system},{PROMPTS[i // 2]},{i % 2 + 1},{TAG}")
    return "\n".join(lines) + "\n"


def check(doc: Any, schema: Any, where: str = "$") -> None:
    """A small structural validator: dict → required keys, [item] → every element, type."""
    if isinstance(schema, dict):
        assert isinstance(doc, dict), where
        for k, sub in schema.items():
            assert k in doc, f"{where}.{k} missing"
            check(doc[k], sub, f"{where}.{k}")
    elif isinstance(schema, list):
        assert isinstance(doc, list) and doc, where
        for i, x in enumerate(doc):
            check(x, schema[0], f"{where}[{i}]")
    else:
        assert isinstance(doc, schema) and not (schema is int and isinstance(doc, bool)), (where, doc)


# --- the round: real runs, made once per session -------------------------------------------
@pytest.fixture(scope="session")
def round_runs(tmp_path_factory) -> Path:
    """The batch's output folder: one run folder per demo and the OUT/manifest.csv it wrote."""
    tmp = tmp_path_factory.mktemp("leaderboard_round")
    (tmp / "round.csv").write_text(round_csv(), encoding="utf-8")
    out = tmp / "out"
    files = [f for fs in ROUND.values() for f in fs]
    cmd = [sys.executable, "-m", "skycity_bench", "run", *files, "--manifest", str(tmp / "round.csv")]
    cmd += ["--out", str(out), "--probe", "packaging", "--duration", "1", "--viewport", "320x240", "-q"]
    cmd += ["--scenario", str(fast_scenario(tmp / "scenario.yaml")), "--candidate-timeout", "90", "--no-fetch"]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"round manifest: {out / 'manifest.csv'} (18 candidates, 3 systems, 3 prompts)" in r.stderr
    return out


# --- the reviewers --------------------------------------------------------------------------
def _override_points(item_max: float, share: float) -> float:
    return round(item_max * share * 2) / 2  # the rubric's half-point grid


def level(m: Manifest, reviewer: int) -> str:
    return LEVEL_KEYS[SYSTEM_LEVEL[m.system] + HARDER[m.prompt] + reviewer * BOB_LOWER[m.system]]


def reviewer_scores(m: Manifest, reviewer: int, report: dict) -> dict[str, Any]:
    """A reviewer's submission for a candidate placed at `m`: their level for every graded
    item and, for each automated item the bench left without points, an override at that level."""
    lv = level(m, reviewer)
    grades = [{"item": it.id, "level": lv} for it in R.items if it.graded]
    overrides = [
        {"item": iid, "points": _override_points(it["max"], SHARE[lv]), "reason": OVERRIDE_REASON}
        for iid, it in report["items"].items()
        if it["how"] == "auto" and it["points"] is None
    ]
    return {"rubric_id": R.id, "grades": grades, "overrides": overrides}


def expected_total(m: Manifest, report: dict) -> float:
    """A candidate's total worked out from its run folder: the bench's points, the mean of the
    reviewers' overrides where the bench gave none, the mean of their grades; one decimal."""
    shares = [SHARE[level(m, k)] for k in range(len(REVIEWERS))]
    total = 0.0
    for it in R.items:
        got = report["items"][it.id]
        if it.graded:
            total += statistics.fmean(share * it.points for share in shares)
        elif got["points"] is not None:
            total += got["points"]
        else:
            total += statistics.fmean(_override_points(it.points, share) for share in shares)
    return round(total, 1)


def expected_means(out: Path) -> dict[str, float]:
    """Each system's mean total, prompts weighing equally (mean over prompts of the mean over
    samples), from the batch's own run folders."""
    rows = parse_manifest(round_csv())
    means = {}
    for system, files in ROUND.items():
        totals = []
        for f in files:
            bench_id = candidate_id(load_demo(ROOT / f).sha256)
            report = json.loads((out / bench_id / "report.json").read_text(encoding="utf-8"))
            totals.append(expected_total(rows[f], report))
        means[system] = statistics.fmean(statistics.fmean(totals[i : i + 2]) for i in range(0, 6, 2))
    return means


def _review_and_finalise(base: str, store: ReviewStore) -> None:
    """Both reviewers score every candidate through the API (the test knows each one's place
    from the manifest), then the admin finalises every sheet; a sheet with an item still
    missing would be refused (409)."""
    by_cid = manifests(store)
    reviewers = [http_client(base, store, name, api=True) for name in REVIEWERS]
    boss = http_client(base, store, "boss", "admin", api=True)
    try:
        for k, rev in enumerate(reviewers):
            cids = rev.get("/api/candidates").json()
            assert sorted(cids) == sorted(by_cid)
            for cid in cids:
                report = rev.get(f"/api/candidates/{cid}").json()["report"]
                r = rev.post(f"/api/candidates/{cid}/reviews", json=reviewer_scores(by_cid[cid], k, report))
                assert r.status_code == 201, r.text
        for cid in by_cid:
            r = boss.post(f"/api/candidates/{cid}/finalize", json={})
            assert r.status_code == 200, r.text
    finally:
        for c in (*reviewers, boss):
            c.close()


@pytest.fixture(scope="module")
def world(round_runs, tmp_path_factory):
    """The store made from the round's run folders, reviewed and finalised, served over HTTP."""
    db = tmp_path_factory.mktemp("leaderboard_store") / "db.sqlite"
    run_dirs = sorted(str(p) for p in round_runs.glob("c-*") if p.is_dir())
    res = CliRunner().invoke(
        cli_app, ["import", *run_dirs, "--db", str(db), "--no-html", "--manifest", str(round_runs / "manifest.csv")]
    )
    assert res.exit_code == 0, res.output
    assert "manifest: 18 candidates, 3 systems, 3 prompts" in res.output
    store = ReviewStore(db)
    try:
        with serving(create_app(store)) as base:
            _review_and_finalise(base, store)
            admin = http_client(base, store, "root", "admin", api=True)
            rita = http_client(base, store, "rita", api=True)
            yield {"store": store, "db": db, "out": round_runs, "admin": admin, "rita": rita}
            admin.close()
            rita.close()
    finally:
        store.close()


def _cli_json(db: Path) -> dict:
    run = CliRunner().invoke(cli_app, ["leaderboard", "--db", str(db), "--format", "json"])
    assert run.exit_code == 0, run.output
    return json.loads(run.stdout)


@pytest.mark.browser
def test_should_place_every_batch_candidate_in_the_round_at_import(world):
    """The batch's manifest, keyed by bench id, put each file where round.csv put it."""
    store = world["store"]
    rows = parse_manifest(round_csv())
    labels = store.labels()
    got = manifests(store)
    assert len(got) == 18 and set(got) == set(labels)
    for cid, m in got.items():
        assert m == rows[labels[cid]] == Manifest(m.system, m.prompt, m.sample, (TAG,))


@pytest.mark.browser
def test_should_not_calibrate_a_round_that_plays_nothing_in_real_time(world):
    """The packaging probe runs on the fake clock: no run measured a refresh interval (which a
    loaded machine could put off 60 Hz and so split the round), and each says why."""
    for run_dir in world["out"].glob("c-*"):
        env = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))["environment"]
        assert env["refresh_interval_ms"] is None
        assert env["calibration"]["skipped"] == "no probe of this run plays in real time"


@pytest.mark.browser
def test_should_print_the_table_write_the_figure_and_json_of_the_schema(world, tmp_path):
    run = CliRunner().invoke(cli_app, ["leaderboard", "--db", str(world["db"]), "--figure", str(tmp_path / "f.png")])
    assert run.exit_code == 0, run.output
    assert "seed 20240, 2000 resamples" in run.stdout
    assert (tmp_path / "f.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    doc = _cli_json(world["db"])
    check(doc, SCHEMA)
    assert doc["resamples"] >= 2000 and doc["notes"] == [] and doc["mixed_environments"] is False
    assert [s["system"] for s in doc["systems"]] == list(SYSTEMS)
    want = expected_means(world["out"])
    for s in doc["systems"]:
        assert s["mean"] == pytest.approx(want[s["system"]], abs=1e-3), s["system"]
        assert (s["prompts"], s["samples"], s["missing"]) == (3, 6, 0)
        assert s["ci"][0] <= s["mean"] <= s["ci"][1]
        # the table's row: the system's whole name, its mean and its interval, as the JSON says
        row = next(line for line in run.stdout.splitlines() if s["system"] in line)
        assert f"{s['mean']:.1f}" in row and f"[{s['ci'][0]:.1f}, {s['ci'][1]:.1f}]" in row
    assert len(doc["pairs"]) == 3 and all(p["diff"] > 0 and p["separated"] for p in doc["pairs"])


ROW = re.compile(
    r'<td class="name">(?P<system>[^<]+)</td>\s*<td class="mean">(?P<mean>[^<]+)</td>\s*'
    r'<td class="ci">\[(?P<lo>[^,]+), (?P<hi>[^\]]+)\]</td>\s*<td>(?P<ranks>[^<]+)</td>'
)


@pytest.mark.browser
def test_should_show_the_admin_the_same_numbers_on_the_page_and_the_api(world):
    admin, doc = world["admin"], _cli_json(world["db"])
    api = admin.get("/api/admin/leaderboard")
    assert api.status_code == 200 and api.json() == doc
    nav = re.search(r'<a href="([^"]+)" id="nav-leaderboard">', admin.get("/queue").text)
    assert nav is not None
    page = admin.get(nav.group(1))
    assert page.status_code == 200
    shown = [m.groupdict() for m in ROW.finditer(page.text)]
    assert [r["system"] for r in shown] == [s["system"] for s in doc["systems"]]
    for row, s in zip(shown, doc["systems"]):
        assert row["mean"] == f"{s['mean']:.1f}"
        assert (row["lo"], row["hi"]) == (f"{s['ci'][0]:.1f}", f"{s['ci'][1]:.1f}")
        best, worst = s["rank_range"]
        assert row["ranks"] == (str(best) if best == worst else f"{best}–{worst}")
    for p in doc["pairs"]:
        assert f"<td>{p['a']}</td><td>{p['b']}</td><td>{p['diff']:.1f}</td>" in page.text
    assert 'id="leaderboard-figure"' in page.text and "data:image/png;base64," in page.text


@pytest.mark.browser
def test_should_refuse_a_reviewer_both_and_never_show_them_a_system_or_prompt(world):
    rita, store = world["rita"], world["store"]
    assert rita.get("/admin/leaderboard").status_code == 403
    assert rita.get("/api/admin/leaderboard").status_code == 403
    cids = sorted(manifests(store))
    pages = [rita.get(u) for u in ("/queue", "/sheet", "/sheet.json", "/sheet.csv", "/api/candidates", "/api/sheet")]
    for cid in cids[:4]:
        pages += [rita.get(f"/c/{cid}"), rita.get(f"/api/candidates/{cid}")]
    for page in pages:
        assert page.status_code == 200, (page.url, page.status_code)
        for secret in (*SYSTEMS, *PROMPTS, TAG, "/admin/leaderboard"):
            assert secret not in page.text, (page.url, secret)


# --- without runs: the nav link and the refusal ------------------------------------------------
def test_should_link_the_leaderboard_in_the_nav_for_admins_only(tmp_path):
    store = ReviewStore(tmp_path / "empty.sqlite")
    try:
        app = create_app(store)
        boss, dan = client(app, store, "boss", "admin"), client(app, store, "dan")
        link = '<a href="/admin/leaderboard" id="nav-leaderboard">'
        for path in ("/queue", "/sheet", "/me"):
            assert link in boss.get(path).text, path
            page = dan.get(path)
            assert page.status_code == 200 and "/admin/leaderboard" not in page.text, path
    finally:
        store.close()


def test_should_answer_409_with_the_reason_when_the_store_cannot_rank(tmp_path):
    store = ReviewStore(tmp_path / "empty.sqlite")
    try:
        boss = client(create_app(store), store, "boss", "admin")
        r = boss.get("/api/admin/leaderboard")
        assert r.status_code == 409 and "no candidates" in r.json()["error"]
        page = boss.get("/admin/leaderboard")
        assert page.status_code == 409 and 'id="leaderboard-refused"' in page.text
    finally:
        store.close()
