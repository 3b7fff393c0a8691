"""The review app at a real round's size (50 candidates, 3 reviewers), each figure beside its target:

  - server time per route, median <= 150 ms and worst <= 300 ms: every route the app serves as
    `skycity-bench review` serves it (Auth.iter_routes: pages, the JSON API and the routers other
    modules register, so a new route is timed as soon as it exists), each GET called as its
    role rule says (public: anonymous; reviewer: ann's session; admin: boss's session), plus
    the writes a reviewer and an admin make while reviewing (scores by API and by the page's
    form, a run picked by API and by form); per call first, best and worst, per route the
    median and the worst of all its calls;
  - the sheet's first paint in a real browser (Chromium, the reviewer's and the admin's
    session), target <= 1 s;
  - blind: no reviewer's or anonymous answer carries any candidate's file hash, its 12-hex
    prefix (the bench's id) or label; no admin answer a label (the unblinded sheet excepted,
    by design; admins do see the file hash, in the runs overview);
  - the run choice: the candidates re-run with two probes still show their full run;
  - import: one run's masking and thumbnails (made once, at import); the masking step alone,
    per report (common/blinding.py: the candidate's own label and hash).

It builds a 50-candidate store from ONE real run (the newest recordings/*/report.json, or
--run DIR; with neither, a small synthetic run from tests/review_reports.py, said so in the
output: its report is kilobytes, not megabytes): the report is copied 50 times under other labels (the original label replaced
by model-NN.html in the report's text), each copy with its own anonymous id and hash; the
run's files are hard-linked beside each copy (files over 5 MB skipped: hashing 50 videos
would only time the import). The first copies also get a partial re-run (most automated
items untested, started later). Accounts sign in as the app requires (review/auth.py): an
admin (boss) and three reviewers (ann, bob, dan) who score half the candidates (bob two
levels from ann on some items, so a third reviewer is wanted there); a few sheets are
finalised, one anchor is set, one run is picked, and a manifest places the candidates in the
round (5 systems x 5 prompts: the leaderboard ranks what is finalised). The app is served on
loopback by uvicorn and called over real HTTP.

    .venv/bin/python benchmarks/review_50.py [--run RUN_DIR] [--repeat 2] [--candidates 50] [--work DIR] [--postgres]

Figures on a busy machine are slower than on a quiet one (the load average is printed before
and after): run it alone for the record.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from starlette.routing import Mount  # noqa: E402

from skycity_bench.commands.review import web_app  # noqa: E402
from skycity_bench.common import blinding as masking  # noqa: E402
from skycity_bench.inputs.rubric import load_rubric  # noqa: E402
from skycity_bench.review.app import settle_before_serving  # noqa: E402
from skycity_bench.review.auth import API_TOKEN_TTL_S, SESSION_COOKIE, Auth  # noqa: E402
from skycity_bench.store import accounts  # noqa: E402
from skycity_bench.store.manifests import Manifest, apply_manifest  # noqa: E402
from skycity_bench.store.review_store import ReviewStore  # noqa: E402
from tests.review_reports import serving  # noqa: E402

TARGET_MS = 300  # worst server time of any call
MEDIAN_MS = 150  # median server time per route
PAINT_MS = 1000  # the sheet's first contentful paint in Chromium
BIG_FILE = 5 << 20
PARTIAL_RERUNS = 5  # candidates re-run with two probes (the run choice must keep their full run)
FINALISED = 3  # sheets finalised (reviewers then see everyone's values there)
SYSTEMS, PROMPTS = 5, 5  # the round's manifest: candidate k answers prompt k % PROMPTS
# writes a session makes while reviewing: timed. Other writes change accounts, tokens or
# finalisation (invite, disable, revoke, finalise...): listed, not timed.
TIMED_WRITES = {
    ("POST", "/api/candidates/{cid}/reviews"),
    ("POST", "/c/{cid}"),
    ("PUT", "/api/admin/candidates/{cid}/run"),
    ("POST", "/admin/runs/{cid}"),
}


def newest_run() -> Path | None:
    runs = sorted((ROOT / "recordings").glob("*/report.json"), key=lambda p: p.stat().st_mtime)
    return runs[-1].parent if runs else None


def _link_files(src: Path, run: Path) -> None:
    for f in src.rglob("*"):
        rel = f.relative_to(src)
        if (
            not f.is_file()
            or f.is_symlink()
            or f.name == "report.json"
            or f.stat().st_size > BIG_FILE
            or any(s.startswith(".") for s in rel.parts)
        ):
            continue
        dst = run / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.link(f, dst)


def build_runs(src: Path, root: Path, n: int) -> tuple[list[Path], list[Path]]:
    """n full runs under other labels, and a partial re-run of the first PARTIAL_RERUNS."""
    raw = (src / "report.json").read_text(encoding="utf-8")
    label = json.loads(raw)["candidate"].get("label") or "reference.html"
    full, partial = [], []
    for k in range(n):
        new_label = f"model-{k:02d}.html"
        sha = hashlib.sha256(f"review-50:{k}".encode()).hexdigest()
        d = json.loads(raw.replace(label, new_label))
        d["candidate"].update(id="c-" + sha[:12], sha256=sha, label=new_label)
        run = root / f"{Path(new_label).stem}-run"
        _link_files(src, run)
        (run / "report.json").write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
        full.append(run)
        if k < PARTIAL_RERUNS:  # the same candidate again, two probes' items only, later
            autos = [i for i, it in d["items"].items() if it.get("how") == "auto"]
            for iid in autos[2:]:
                d["items"][iid].update(
                    points=None, status="untested", evidence={"reason": "probe(s) not run: a two-probe re-run"}
                )
            d["started_at"] = "2099-01-01T00:00:00+00:00"
            again = root / f"{Path(new_label).stem}-rerun"
            _link_files(src, again)
            (again / "report.json").write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
            partial.append(again)
    return full, partial


def session(base: str, store: ReviewStore, name: str) -> httpx.Client:
    """A client with the account's signed session cookie and its CSRF token (as its
    invitation link would give it; review/auth.py)."""
    cookie, csrf = Auth(store).new_session(accounts.account(store, name)["id"])
    c = httpx.Client(base_url=base, cookies={SESSION_COOKIE: cookie}, headers={"x-csrf-token": csrf}, timeout=600)
    c.csrf = csrf
    return c


def masking_figures(src: Path, labels: list[str]) -> list[tuple[str, float]]:
    raw = (src / "report.json").read_text(encoding="utf-8")
    out = []
    t = time.perf_counter()
    doc = json.loads(raw)
    out.append(("parse report.json (json.loads)", (time.perf_counter() - t) * 1000))
    t = time.perf_counter()
    masking.blind_report(doc)
    out.append(("blinding.py: own label and hash, whole words", (time.perf_counter() - t) * 1000))
    return out


def route_table(by_route: dict[tuple[str, str, str], list[float]]) -> int:
    """Per route: calls, median and worst server time against the targets; the number over."""
    print(f"\nper route: median <= {MEDIAN_MS} ms, worst <= {TARGET_MS} ms (all its calls, first ones included)")
    print(f"    {'route':58s} {'rule':8s} {'calls':>5s} {'median':>8s} {'worst':>8s}")
    over = 0
    for (method, path, rule), ms in sorted(by_route.items(), key=lambda kv: -statistics.median(kv[1])):
        med, worst = statistics.median(ms), max(ms)
        ok = med <= MEDIAN_MS and worst <= TARGET_MS
        over += not ok
        print(
            f"{'ok ' if ok else 'BAD'} {method:4s} {path[:53]:53s} {rule:8s} {len(ms):5d} {med:6.0f}ms {worst:6.0f}ms"
        )
    return over


# the first contentful paint is recorded when its frame is presented, which can come after
# the load event: waited for (buffered observer), 5 s at most (then null: no paint seen)
FIRST_PAINT_JS = """() => new Promise(done => {
  const seen = list => (list.getEntriesByName('first-contentful-paint')[0] || {}).startTime;
  const now = seen(performance);
  if (now !== undefined) return done(now);
  new PerformanceObserver(l => { const t = seen(l); if (t !== undefined) done(t); })
    .observe({type: 'paint', buffered: true});
  setTimeout(() => done(null), 5000);
})"""


def first_paints(base: str, store: ReviewStore) -> dict[str, float | None]:
    """The sheet's first contentful paint in Chromium (ms after navigation start), for the
    reviewer's and the admin's session, each the best of three loads (the first warms up)."""
    from playwright.sync_api import sync_playwright

    from skycity_bench.browser.launch import BASE_ARGS

    out: dict[str, float | None] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=BASE_ARGS)
        for name in ("ann", "boss"):
            cookie, _csrf = Auth(store).new_session(accounts.account(store, name)["id"])
            ctx = browser.new_context(viewport={"width": 1366, "height": 800})
            ctx.add_cookies([{"name": SESSION_COOKIE, "value": cookie, "url": base}])
            page = ctx.new_page()
            got = []
            for _ in range(3):
                page.goto(base + "/sheet", wait_until="load")
                got.append(page.evaluate(FIRST_PAINT_JS))
            seen = [g for g in got if g is not None]
            out[name] = min(seen) if seen else None
            ctx.close()
        browser.close()
    print(f"\nthe sheet's first contentful paint in Chromium (best of 3 loads), target <= {PAINT_MS} ms:")
    for name, ms in out.items():
        print(
            f"    {'ok ' if ms is not None and ms <= PAINT_MS else 'BAD'} {name:8s} {ms if ms is None else round(ms)} ms"
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--run", type=Path, default=None, help="a run folder with report.json (default: newest in recordings/)"
    )
    ap.add_argument("--repeat", type=int, default=2, help="calls per URL after the first (best one reported)")
    ap.add_argument("--candidates", type=int, default=50)
    ap.add_argument(
        "--postgres",
        action="store_true",
        help="serve from a PostgreSQL store on a throw-away local server (tests/pg.py) instead of SQLite",
    )
    ap.add_argument(
        "--work",
        type=Path,
        default=None,
        help="work folder; when it holds a store this script built, its imported runs are reused "
        "(accounts, scores and picks are made again on a copy)",
    )
    a = ap.parse_args()
    tmp = a.work or Path(tempfile.mkdtemp(prefix="review-50-"))
    tmp.mkdir(parents=True, exist_ok=True)
    src = a.run or newest_run()
    if a.run is not None and not (a.run / "report.json").is_file():
        print(f"{a.run}: no report.json", file=sys.stderr)
        return 2
    if src is None:
        from tests.review_reports import make_run

        src = make_run(tmp / "source", "reference.html", seed="review-50-source")
        print(
            "no real run in recordings/ (make one with `.venv/bin/skycity-bench run scenarios/demos/reference.html` "
            "or pass --run DIR): a SYNTHETIC run stands in (a small report: page figures are lighter than a real round's)"
        )
    print(f"source run: {src} ({(src / 'report.json').stat().st_size / 1e6:.1f} MB report) · work dir {tmp}")
    load_before = os.getloadavg()
    print(f"load average {load_before[0]:.1f} on {os.cpu_count()} CPUs (figures on a busy machine are slower)")

    # --- the store ---------------------------------------------------------------------------
    t = time.perf_counter()
    runs_dir = tmp / "runs"
    full = [runs_dir / f"model-{k:02d}-run" for k in range(a.candidates)]
    partial = [runs_dir / f"model-{k:02d}-rerun" for k in range(min(PARTIAL_RERUNS, a.candidates))]
    if not all((r / "report.json").is_file() for r in full + partial):
        shutil.rmtree(runs_dir, ignore_errors=True)
        full, partial = build_runs(src, runs_dir, a.candidates)

    def build(target) -> None:
        store = ReviewStore(target, seed=1)
        t1 = time.perf_counter()
        prep = store.prepare_run(full[0])  # masking and thumbnails, outside the write lock
        t2 = time.perf_counter()
        with store.db.write() as con:
            store.insert_run(con, prep)
        t3 = time.perf_counter()
        for r in full[1:] + partial:
            store.import_run(r)
        store.close()
        print(
            f"imported {len(full)} candidates and {len(partial)} partial re-runs in "
            f"{time.perf_counter() - t:.1f} s (the same images' thumbnails are made once: kept by file hash)"
        )
        print(
            f"import of one run: prepare (hash, mask, {len(prep.thumbs)} thumbnails) {(t2 - t1) * 1000:.0f} ms, "
            f"store {(t3 - t2) * 1000:.0f} ms; masked report {len(prep.blind.masked_json) / 1e6:.1f} MB, "
            f"sheet summary {len(prep.blind.sheet_json) / 1e3:.0f} kB"
        )

    pg = None
    if a.postgres:  # a throw-away server (tests/pg.py: Debian's binaries, loopback)
        from tests.pg import start_server

        pg = start_server()
        imported = pg.new_db()
        build(pg.url(imported))
        target = pg.url(pg.new_db(template=imported))
        print(f"store: PostgreSQL on 127.0.0.1:{pg.port}")
    else:
        built = tmp / f"imported-{a.candidates}.sqlite"
        if not built.is_file():
            build(tmp / "building.sqlite")
            os.replace(tmp / "building.sqlite", built)
        else:
            print(f"reusing the runs imported in {built}")
        shutil.copy(built, tmp / "reviews.sqlite")
        target = tmp / "reviews.sqlite"
        print(f"store: SQLite {target}")
    store = ReviewStore(target)
    # the store's ids are random: found by the bench's id (the hash prefix), an admin's look-up
    bench = ["c-" + hashlib.sha256(f"review-50:{k}".encode()).hexdigest()[:12] for k in range(a.candidates)]
    cids = [str(store.by_bench_id(b)) for b in bench]
    reruns = [max(store.runs_of(c)["runs"], key=lambda r: r["started_at"]) for c in cids[:PARTIAL_RERUNS]]

    rubric = load_rubric()
    graded = [i.id for i in rubric.items if i.graded]
    accounts.create_account(store, "boss", "admin", by="benchmark")
    for name, pct in (("ann", 75), ("bob", 25), ("dan", 50)):
        accounts.create_account(store, name, "reviewer", by="boss")
        for k, cid in enumerate(cids[: len(cids) // 2]):
            store.submit(
                cid,
                name,
                rubric.id,
                [{"item": i, "level": pct if (k + j) % 3 else 100} for j, i in enumerate(graded)],
                source="api",
            )
    for cid in cids[:FINALISED]:
        accounts.finalize(store, cid, by="boss", reason="benchmark")
    from skycity_bench.store.anchors import Calibration

    Calibration(store).set_by_hand(cids[FINALISED], graded[0], "good", "agreed in the benchmark", "boss")
    # the round's manifest (SYSTEMS systems x PROMPTS prompts, samples), so the leaderboard ranks
    # what is finalised instead of refusing: its routes are timed doing their work
    apply_manifest(
        store,
        {
            b: Manifest(f"system-{k // PROMPTS % SYSTEMS}", f"prompt-{k % PROMPTS}", str(k // (PROMPTS * SYSTEMS) + 1))
            for k, b in enumerate(bench)
        },
        by="boss",
    )
    picked = PARTIAL_RERUNS - 1  # re-run, not finalised: its re-run is picked
    store.choose_run(cids[picked], reruns[picked]["run_id"], "boss", "benchmark: the re-run picked")
    cat = accounts.create_account(store, "cat", "reviewer", by="boss")
    invite = accounts.issue(store, cat["id"], "invite", by="boss", ttl_s=3600)  # GET does not use it up
    ann_id = accounts.account(store, "ann")["id"]
    accounts.issue(store, ann_id, "api", by="ann", ttl_s=API_TOKEN_TTL_S)
    shown_full = [store.shown_run(c)["run_id"] for c in cids[:picked]]
    rerun_ids = {r["run_id"] for r in reruns}
    kept = (
        all(s not in rerun_ids for s in shown_full)
        and store.shown_run(cids[picked])["run_id"] == reruns[picked]["run_id"]
    )

    # --- the app ------------------------------------------------------------------------------
    app = web_app(store)  # as `skycity-bench review` serves it
    settle_before_serving(app)  # as the command does before serving
    served = ExitStack()
    base = served.enter_context(serving(app))  # tests/review_reports.py: uvicorn on a free loopback port
    auth: Auth = app.state.auth
    cid = cids[len(cids) // 2 - 1]  # scored by both reviewers
    run = store.shown_run(cid)
    image = next(f for f in run["files"] if f["thumb"] and f["mime"] == "image/png")
    params = {
        "cid": [cid],
        "file_id": [str(image["id"])],
        "name": ["ann"],
        "token": [invite],
        "tid": [str(accounts.tokens(store, ann_id)[-1]["id"])],
        "fmt": ["md", "csv", "json"],
        "format": ["json"],
    }
    anon = httpx.Client(base_url=base, timeout=600)
    anon.csrf = ""
    clients = {"public": anon, "reviewer": session(base, store, "ann"), "admin": session(base, store, "boss")}
    secrets = [hashlib.sha256(f"review-50:{k}".encode()).hexdigest() for k in range(a.candidates)]
    prefixes = [s_[:12] for s_ in secrets]
    by_route: dict[tuple[str, str, str], list[float]] = {}
    label_re = re.compile(r"model-\d\d")

    def urls(path: str) -> list[str]:
        """The path with each {parameter} filled with its sample values ([] when one has none)."""
        out = [path]
        for n in re.findall(r"\{([^}:]+)(?::[^}]*)?\}", path):
            if n not in params:
                return []
            pat = re.compile(r"\{" + re.escape(n) + r"(?::[^}]*)?\}")
            out = [pat.sub(lambda _m, v=v: v, u) for u in out for v in params[n]]
        return out

    writes = {
        ("POST", "/api/candidates/{cid}/reviews"): lambda k: {
            "json": {"rubric_id": rubric.id, "grades": [{"item": graded[0], "level": (25, 50, 75)[k % 3]}]}
        },
        ("POST", "/c/{cid}"): lambda k: {
            "data": {
                "csrf": clients["reviewer"].csrf,
                "candidate": cid,
                "rubric_id": rubric.id,
                f"grade:{graded[1]}": ("good", "fair", "poor")[k % 3],
            }
        },
        ("PUT", "/api/admin/candidates/{cid}/run"): lambda k: {
            "json": {"run_id": [run["run_id"], None][k % 2], "reason": f"benchmark pick {k}"}
        },
        ("POST", "/admin/runs/{cid}"): lambda k: {
            "data": {
                "csrf": clients["admin"].csrf,
                "run_id": [str(run["run_id"]), "auto"][k % 2],
                "reason": f"benchmark form {k}",
            }
        },
    }
    plan, untimed, unfilled = [], [], []
    for path, route in Auth.iter_routes(app):
        rule = auth.rule_of(route) or "admin"
        if isinstance(route, Mount):
            plan.append(("GET", path + "/style.css", rule, None, path))
            continue
        for m in sorted(getattr(route, "methods", set()) - {"HEAD"}):
            us = urls(path)
            if not us:
                unfilled.append(f"{m} {path}")
            elif m == "GET":
                plan += [("GET", u, rule, None, path) for u in us]
            elif (m, path) in TIMED_WRITES:
                plan += [(m, u, rule, writes[(m, path)], path) for u in us]
            else:
                untimed.append(f"{m} {path}")
    bad, bad_cpu, leaks = 0, 0, []
    print(
        f"\n{len(plan)} calls over {len({p[4] for p in plan})} routes, each {1 + a.repeat} times; rule: who calls; "
        f"wall: first, best, worst; cpu: the worst call's CPU time in this process (app and client: what the "
        f"machine's load does not inflate much; with --postgres the database server's own work is not in it)"
    )
    print(f"    {'call':58s} {'rule':8s} {'first':>8s} {'best':>8s} {'worst':>8s} {'cpu':>8s}   target (wall)")
    for method, url, rule, body, path in plan:
        c = clients[rule]
        ms, cpu, codes = [], [], set()
        for k in range(1 + a.repeat):
            kw = body(k) if body else {}
            t, tc = time.perf_counter(), time.process_time()
            r = c.request(method, url, **kw)
            ms.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - tc) * 1000)
            codes.add(r.status_code)
            if (
                k == 0
                and "unblind" not in path
                and r.headers.get("content-type", "").startswith(("text/", "application/json"))
            ):
                text = r.text
                hashes = rule != "admin" and any(p_ in text for p_ in prefixes)
                if hashes or label_re.search(text):
                    leaks.append(f"{method} {url} ({rule})")
        by_route.setdefault((method, path, rule), []).extend(ms)
        best = min(ms[1:]) if len(ms) > 1 else ms[0]
        ok = max(ms) < TARGET_MS and all(code < 400 for code in codes)
        bad += not ok
        bad_cpu += max(cpu) >= TARGET_MS
        print(
            f"{'ok ' if ok else 'BAD'} {method:4s} {url[:53]:53s} {rule:8s} {ms[0]:6.0f}ms {best:6.0f}ms "
            f"{max(ms):6.0f}ms {max(cpu):6.0f}ms   < {TARGET_MS} ms   HTTP {sorted(codes)}"
        )
    slow_routes = route_table(by_route)
    paints = first_paints(base, store)
    served.close()
    store.close()
    if pg is not None:
        from tests.pg import stop_server

        stop_server(pg)
    print(
        "\nblind: "
        + (
            "no answer carries a candidate's full file hash or label (the admin's unblinded sheet excepted, by design)"
            if not leaks
            else f"LEAK in {len(leaks)} answer(s): {', '.join(leaks[:8])}"
        )
    )
    print(
        f"run choice: the {PARTIAL_RERUNS - 1} candidates re-run with two probes still show their full run, the picked "
        f"one its pick: {'yes' if kept else 'NO'}"
    )
    if untimed:
        print(f"not timed (writes that change accounts, tokens, anchors or finalisation): {', '.join(untimed)}")
    if unfilled:
        print(f"BAD: no sample value for a path parameter of: {', '.join(unfilled)} (add one to params)")
    print("\nmasking one report (the step that took 96 % of a page at 50 candidates before it was done at import):")
    for name, el in masking_figures(src, [f"model-{k:02d}.html" for k in range(a.candidates)]):
        print(f"    {name:58s} {el:8.1f} ms")
    load_after = os.getloadavg()
    print(
        f"\nload average before {load_before[0]:.1f}, after {load_after[0]:.1f} on {os.cpu_count()} CPUs; "
        f"calls over {TARGET_MS} ms: {bad} by wall time, {bad_cpu} by CPU time"
    )
    slow_paint = [who for who, ms_ in paints.items() if ms_ is None or ms_ > PAINT_MS]
    failed = bad + len(unfilled) + bool(leaks) + (not kept) + slow_routes + len(slow_paint)
    print(
        "all under target"
        if not failed
        else f"{bad} call(s) over {TARGET_MS} ms or failing"
        + (", a leak" if leaks else "")
        + (", run choice wrong" if not kept else "")
        + (f", {len(unfilled)} route(s) not covered" if unfilled else "")
        + (f", {slow_routes} route(s) over the median or worst target" if slow_routes else "")
        + (f", the sheet's first paint over {PAINT_MS} ms for {', '.join(slow_paint)}" if slow_paint else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
