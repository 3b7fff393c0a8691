"""Golden evidence: what the probes collected on each fixture, checked in
under tests/golden/, so the scorers' unit tests run on real probe output without a browser
and a drift in a probe's output shape fails a fast test, not only a browser test.

One file per fixture run, tests/golden/<family>/<fixture>.json:

    {"fixture": "packaging/clean", "rubric_id", "rubric_sha256",
     "scenario": the run's effective scenario (probe and scorer settings included),
     "probes": {name: the report's probe record (evidence_version, data) ...},
     "items": {item id: {"status", "points"}} of the items those probes decide, as scored live}

Only probes with an evidence model are kept (the runner's `network` log too: the packaging
scorer reads it); `page_events` and probes that failed are left out, and so are items whose
probes are not all kept. Long arrays no item depends on are shortened (COMPACT below: the
density samples' regions and hook claims, the shop follow paths), so the files stay small;
what is kept is still the model's shape, so it parses and rescoring reproduces the items.
Regenerate with one command (README, section golden):

    SKYCITY_WRITE_GOLDEN=1 .venv/bin/python -m pytest -q -p no:randomly tests/probes/test_packaging_fixtures.py \\
        tests/probes/test_packaging_fake_clock.py tests/probes/test_frame_pacing_fixtures.py tests/probes/test_timeline_fixtures.py \\
        tests/probes/test_density.py tests/probes/test_shops.py

(scripts/golden.sh runs exactly that); tests/truth.run_fixture writes the file after each run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
ENV = "SKYCITY_WRITE_GOLDEN"
# Probes whose evidence a golden file keeps besides the typed ones: the runner's network log,
# read by packaging.single_file.
EXTRA = ("network",)


# What a golden file keeps of arrays whose items no item's status or points depend on (the
# first few, so their shape is still there). A density sample's counts (visual, claimed,
# verified, categories, the hookless `objects` figures) are kept whole: they decide the items.
# Its regions (drawn in the evidence image) and the hook's claims (80 a sample on the liar
# fixture: 190 KB; read only for the notes and the review-only density.behavior) are cut to
# the first KEEP_FIRST, each claim to what scorers/density.py and vision/behavior.py read.
KEEP_FIRST = 3
CLAIM_KEYS = ("id", "category", "verdict", "x", "y", "dx", "dy")


def _ends(xs: list) -> list:
    return xs if len(xs) <= 2 else [xs[0], xs[-1]]


def _compact_density(d: dict) -> dict:
    for s in d.get("samples", []):
        s["regions"] = s.get("regions", [])[:KEEP_FIRST]
        if s.get("claims") is not None:
            s["claims"] = [{k: c[k] for k in CLAIM_KEYS if k in c} for c in s["claims"][:KEEP_FIRST]]
    return d


def _compact_shops(d: dict) -> dict:
    # follow paths: only max_lag_px is read (the steps of manual priority are read whole)
    for p in (d.get("hover") or {}).get("per_shop", []):
        if p.get("follow"):
            p["follow"]["path"] = _ends(p["follow"]["path"])
    man = d.get("manual") or {}
    if man.get("follow"):
        man["follow"]["path"] = _ends(man["follow"]["path"])
    if isinstance(d.get("auto"), dict):
        d["auto"]["timeline"] = _ends(d["auto"]["timeline"])
    return d


COMPACT = {"density": _compact_density, "shops": _compact_shops}


def wanted() -> bool:
    return os.environ.get(ENV) == "1"


def golden_of(report: dict, fixture: str) -> dict | None:
    """The golden record of a live report (None when no probe of it has typed evidence)."""
    from skycity_bench import evidence
    from skycity_bench.judging.scorers import all_scorers

    typed = set(evidence.known_probes()) - {"network", "page_events"}
    keep = {
        n: json.loads(json.dumps(r))
        for n, r in report["probes"].items()
        if r.get("status") == "ok" and (n in typed or n in EXTRA)
    }
    for n, r in keep.items():
        if n in COMPACT:
            r["data"] = COMPACT[n](r["data"])
    if not set(keep) & typed:
        return None
    if "network" in keep:  # the requests (what the scorer reads), the misses and the mode; not the cache's log
        net = keep["network"]["data"]
        keep["network"] = {**keep["network"], "data": {k: net[k] for k in ("requests", "misses", "mode") if k in net}}
    items = {}
    for iid, spec in all_scorers().items():
        if iid in report["items"] and spec.probes and all(p in keep for p in spec.probes):
            it = report["items"][iid]
            items[iid] = {"status": it["status"], "points": it["points"]}
    return {
        "fixture": fixture,
        "rubric_id": report["rubric_id"],
        "rubric_sha256": report.get("rubric_sha256"),
        "scenario": report["scenario"]["effective"],
        "probes": keep,
        "items": items,
    }


def write(report: dict, fixture: str) -> Path | None:
    g = golden_of(report, fixture)
    if g is None:
        return None
    p = GOLDEN_DIR / f"{fixture}.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(g, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n", encoding="utf-8")
    return p


def maybe_write(report: dict, fixture: str) -> None:
    if wanted():
        write(report, fixture)


def all_golden() -> list[Path]:
    return sorted(GOLDEN_DIR.rglob("*.json"))


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def as_report(g: dict):
    """A Report holding the golden evidence, ready for scoring.score_report."""
    from skycity_bench.reporting.run_report import Candidate, ProbeRecord, Report

    return Report(
        bench_version="golden",
        rubric_id=g["rubric_id"],
        candidate=Candidate(id="golden", sha256="0" * 64),
        scenario={"effective": g["scenario"]},
        probes={n: ProbeRecord.model_validate(r) for n, r in g["probes"].items()},
    )
