"""The broken-page corpus: the bench's verdicts on every fixture of
tests/fixtures/broken/expected.json against that file's truth.

For each fixture it runs `skycity-bench run` end to end (the CLI in a fresh process, as an
operator runs it; default scenario and budget unless --probe narrows the run) and prints
one row per line:

  - the start diagnosis: report.json `start.class` (and `start.cause`, and whether the first
    error named in it mentions what the truth says) against the expected class;
  - every automated sheet item (rubric items with how: auto) the truth lists: the status
    got against the status expected (`also`: tolerated, marked `~`; a worse status on a pass
    the bench flagged as run on a noisy machine, evidence `machine_noise`, marked `~` too),
    plus any evidence field the truth names;
  - on an observable page, every automated item the truth does not list: `untested` there
    is a mismatch (the bench watched the page), unless the truth's `untested_reason`
    matches the item's reason (a budget that ran out, naming the page's frame cost);
  - the run itself: a report.json written, the exit code among the allowed ones, no Python
    traceback or `never awaited` warning in the terminal output, and its wall time within
    the run's budget (report.json environment.render_cost.run_budget_s) and BUDGET_SLACK_S.

Mismatches are marked `MISMATCH`; the exit code is 0 only when there are none. A fixture
whose page is not there (yet) is reported as missing and counts as a mismatch.

    .venv/bin/python benchmarks/broken_corpus.py [--only NAME ...] [--probe PROBE ...]
                                                 [--out DIR] [--reuse] [--timeout S]

--probe runs only those probes (faster); items whose probe did not run are not checked.
--out keeps the runs (DIR/NAME/report.json, DIR/NAME/output.txt); --reuse reads the reports
already in DIR instead of running again (to re-check after a scorer change, with `rescore`).
A full run per fixture takes minutes (real-time frame pacing and playback): run it on a
quiet machine, in the background.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from skycity_bench.inputs.rubric import load_rubric  # noqa: E402 (after the path set-up)
from skycity_bench.judging.scorers import all_scorers  # noqa: E402

BENCH = [str(ROOT / ".venv" / "bin" / "python"), "-m", "skycity_bench"]
BROKEN = ROOT / "tests" / "fixtures" / "broken"
EXPECTED = BROKEN / "expected.json"
# Starting the process and writing the report around the budgeted run (Python, the imports).
BUDGET_SLACK_S = 30.0
NOISE = re.compile(r"Traceback \(most recent call last\)|was never awaited|Task exception was never retrieved")


def auto_items() -> list[str]:
    """The rubric's automated items, in sheet order."""
    return [i.id for i in load_rubric().items if i.how == "auto"]


def item_probe() -> dict[str, str]:
    """The probe each item's scorer reads first (the one that must run for it)."""
    import skycity_bench.judging.score_items  # noqa: F401 (registers every scorer)

    return {k: v.probes[0] for k, v in all_scorers().items()}


def run_fixture(name: str, page: Path, out: Path, probes: list[str], timeout_s: float) -> tuple[int | None, str, float]:
    """Run the bench on `page` into `out`; its exit code (None when it had to be killed),
    its whole terminal output and its wall time."""
    cmd = [*BENCH, "run", str(page), "--out", str(out), "--quiet"]
    for probe in probes:
        cmd += ["--probe", probe]
    print(f"-- {name}: running ({' '.join(cmd[3:])})", flush=True)
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s)
        rc, text = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc, text = None, f"{_text(e.stdout)}{_text(e.stderr)}\n[killed after {timeout_s:.0f} s]"
    wall = time.monotonic() - t
    out.mkdir(parents=True, exist_ok=True)
    (out / "output.txt").write_text(text, encoding="utf-8")
    (out / "run.json").write_text(json.dumps({"rc": rc, "wall_s": round(wall, 1)}), encoding="utf-8")
    return rc, text, wall


def _text(b: bytes | str | None) -> str:
    return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")


def reused(out: Path) -> tuple[int | None, str, float]:
    """A run kept by an earlier --out: its exit code, output and wall time."""
    meta = json.loads((out / "run.json").read_text()) if (out / "run.json").exists() else {}
    text = (out / "output.txt").read_text() if (out / "output.txt").exists() else ""
    return meta.get("rc"), text, float(meta.get("wall_s") or 0.0)


def matches(expected: Any, got: Any) -> bool:
    """A plain value must be equal; {"in": [...]} one of a set (a missing field reads null)."""
    if isinstance(expected, dict) and "in" in expected:
        return got in expected["in"]
    return bool(expected == got)


class Table:
    """The rows printed for one fixture, and how many of them are mismatches."""

    def __init__(self, name: str) -> None:
        self.name, self.bad = name, 0

    def row(self, what: str, want: Any, got: Any, verdict: str, note: str = "") -> None:
        if verdict == "MISMATCH":
            self.bad += 1
        tail = f"  {note}" if note else ""
        print(f"  {what:32s} want {_show(want):28s} got {_show(got):28s} {verdict}{tail}", flush=True)


def _show(v: Any) -> str:
    if isinstance(v, dict) and "in" in v:
        return "one of " + "/".join(str(x) for x in v["in"])
    return str(v)


def _first_line(s: Any) -> str:
    return str(s or "").strip().splitlines()[0][:110] if str(s or "").strip() else ""


def check_start(t: Table, want: dict[str, Any], report: dict[str, Any]) -> None:
    start = report.get("start") or {}
    got = start.get("class")
    t.row(
        "start.class",
        want["class"],
        got,
        "ok" if got == want["class"] else "MISMATCH",
        _first_line(start.get("reason")),
    )
    if "cause" in want:
        c = start.get("cause")
        t.row("start.cause", want["cause"], c, "ok" if c == want["cause"] else "MISMATCH")
    if "mentions" in want:
        found = want["mentions"] in json.dumps(start, ensure_ascii=False)
        t.row("start names the error", want["mentions"], found, "ok" if found else "MISMATCH")


def check_item(t: Table, item: str, want: dict[str, Any], got: dict[str, Any]) -> None:
    status = got.get("status")
    ev = got.get("evidence") or {}
    reason = _first_line(ev.get("reason") if isinstance(ev, dict) else "")
    if status == want["status"]:
        verdict = "ok"
    elif status in want.get("also", []):
        verdict = "~ tolerated"
    elif _noise_explains(want["status"], status, ev):
        verdict = "~ noisy machine"
        reason = _first_line(ev.get("machine_noise"))
    else:
        verdict = "MISMATCH"
    t.row(item, want["status"], status, verdict, "" if verdict == "ok" else reason)
    for key, value in (want.get("evidence") or {}).items():
        g = ev.get(key) if isinstance(ev, dict) else None
        t.row(f"  {item}.evidence.{key}", value, g, "ok" if matches(value, g) else "MISMATCH")


_RANK = {"fail": 0, "partial": 1, "pass": 2}


def _noise_explains(want: str, got: Any, ev: Any) -> bool:
    """A worse verdict than the truth's on a pass the bench itself flagged as run on a noisy
    machine (evidence `machine_noise`): the figure says nothing of the page there. Noise only
    makes a page look worse, so it never explains a better verdict."""
    noisy = isinstance(ev, dict) and bool(ev.get("machine_noise"))
    return noisy and want in _RANK and got in _RANK and _RANK[got] < _RANK[want]


def check_unlisted(t: Table, item: str, got: dict[str, Any], untested_reason: str | None) -> None:
    """An automated item the truth does not list, on an observable page: any verdict will
    do, `untested` only where the truth allows it and the reason says so."""
    status = got.get("status")
    ev = got.get("evidence") or {}
    reason = str(ev.get("reason") if isinstance(ev, dict) else "")
    if status != "untested":
        t.row(item, "a verdict", status, "ok")
    elif untested_reason and re.search(untested_reason, reason, re.I):
        t.row(item, "a verdict", status, "ok (allowed)", _first_line(reason))
    else:
        t.row(item, "a verdict", status, "MISMATCH", _first_line(reason))


def check_run(t: Table, spec: dict[str, Any], report: dict[str, Any], rc: int | None, text: str, wall: float) -> None:
    t.row("exit code", {"in": spec.get("exit", [0])}, rc, "ok" if rc in spec.get("exit", [0]) else "MISMATCH")
    noise = sorted({m.group(0) for m in NOISE.finditer(text)})
    t.row("terminal output", "clean", ", ".join(noise) or "clean", "MISMATCH" if noise else "ok")
    budget = ((report.get("environment") or {}).get("render_cost") or {}).get("run_budget_s")
    if budget is None:
        t.row("wall time", "-", f"{wall:.0f} s", "ok", "the report names no run budget")
    else:
        within = wall <= float(budget) + BUDGET_SLACK_S
        t.row("wall time", f"<= {float(budget):.0f} s", f"{wall:.0f} s", "ok" if within else "MISMATCH")


def check_fixture(
    name: str, spec: dict[str, Any], args: argparse.Namespace, items: list[str], probe_of: dict[str, str]
) -> int:
    """Run (or reuse) the bench on one fixture, print its rows; the number of mismatches."""
    t = Table(name)
    page = BROKEN / spec["page"]
    print(f"\n== {name} ({spec['page']})", flush=True)
    if not page.exists():
        t.row("page", "present", "missing", "MISMATCH", "not written yet")
        return t.bad
    out = args.out / name
    rc, text, wall = reused(out) if args.reuse else run_fixture(name, page, out, args.probe, args.timeout)
    rp = out / "report.json"
    if not rp.exists():
        t.row("report.json", "written", "missing", "MISMATCH", _first_line(text.strip().splitlines()[-1:]))
        return t.bad
    report = json.loads(rp.read_text(encoding="utf-8"))
    check_run(t, spec, report, rc, text, wall)
    check_start(t, spec["start"], report)
    ran = [i for i in items if not args.probe or probe_of.get(i) in args.probe]
    got = report.get("items") or {}
    for item in ran:
        if item in spec["items"]:
            check_item(t, item, spec["items"][item], got.get(item) or {})
        elif spec.get("observable"):
            check_unlisted(t, item, got.get(item) or {}, spec.get("untested_reason"))
    return t.bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--only", action="append", default=[], metavar="NAME", help="this fixture only (repeatable)")
    ap.add_argument("--probe", action="append", default=[], metavar="PROBE", help="run only this probe (repeatable)")
    ap.add_argument("--out", type=Path, default=None, help="keep the runs here (default: a temporary folder)")
    ap.add_argument("--reuse", action="store_true", help="read the reports already in --out instead of running")
    ap.add_argument("--timeout", type=float, default=1500.0, help="seconds before a run is killed (default 1500)")
    args = ap.parse_args(argv)
    if args.reuse and args.out is None:
        ap.error("--reuse needs --out")
    truth = json.loads(EXPECTED.read_text(encoding="utf-8"))["fixtures"]
    unknown = [n for n in args.only if n not in truth]
    if unknown:
        ap.error(f"not in {EXPECTED.name}: {', '.join(unknown)} (known: {', '.join(truth)})")
    names = args.only or list(truth)
    items, probe_of = auto_items(), item_probe()
    with tempfile.TemporaryDirectory(prefix="broken-corpus-") as tmp:
        args.out = args.out or Path(tmp)
        bad = {n: check_fixture(n, truth[n], args, items, probe_of) for n in names}
    print("\n== summary")
    for n, k in bad.items():
        print(f"  {n:24s} {'clean' if not k else f'{k} mismatch(es)'}")
    total = sum(bad.values())
    print(f"  {'all':24s} {'clean' if not total else f'{total} mismatch(es)'}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
