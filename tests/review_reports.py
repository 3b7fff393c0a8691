"""Run folders for the review tests, built with the real report model (no browser needed):
a report.json whose automated items carry points computed from the rubric, graded items
waiting for reviewers, plus a keyframe, a plot and a short WebM beside it.

The label (the demo's file name) is a fake model name that the blindness tests look for;
it is also written into the run folder's name and into one evidence string on purpose.
"""

from __future__ import annotations

import hashlib
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import cv2
import numpy as np

from skycity_bench.inputs.rubric import load_rubric
from skycity_bench.reporting.run_report import Candidate, ItemResult, ProbeRecord, Report, save

ENV = {
    "browser": "chromium",
    "browser_version": "120.0",
    "webgl_renderer": "SwiftShader",
    "viewport": "1920x1080",
    "device_scale_factor": 1.0,
    "cpu_model": "test cpu",
    "cpu_cores": 2,
    "os": "Linux 6",
    "scenario_sha256": "ab",
    "refresh_interval_ms": 16.667,
    "calibration": {"within_tolerance": True, "refresh_interval_ms": 16.667},
}


def make_run(
    root: Path,
    label: str,
    *,
    seed: str,
    untested: tuple[str, ...] = (),
    partial: tuple[str, ...] = (),
    env: Optional[dict] = None,
    started_at: str = "2026-12-02T10:00:00+00:00",
) -> Path:
    """Write a run folder under root and return it. Auto items pass with full points except
    those named `partial` (the rubric's partial share) and `untested` (null points)."""
    rubric = load_rubric()
    sha = hashlib.sha256(seed.encode()).hexdigest()
    run_dir = root / f"{Path(label).stem}-run-{seed}"
    run_dir.mkdir(parents=True, exist_ok=True)
    frame = np.zeros((90, 160, 3), np.uint8)
    cv2.putText(frame, seed[:6], (5, 50), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (255, 255, 255), 2)
    (run_dir / "keyframes").mkdir(exist_ok=True)
    cv2.imwrite(str(run_dir / "keyframes" / "t20.png"), frame)
    cv2.imwrite(str(run_dir / "frame_pacing.png"), frame)
    w = cv2.VideoWriter(str(run_dir / "recording.webm"), cv2.VideoWriter_fourcc(*"VP80"), 10, (160, 90))
    for i in range(10):
        w.write(np.roll(frame, i * 8, axis=1))
    w.release()
    items = {}
    for it in rubric.items:
        if it.graded:
            items[it.id] = ItemResult(
                points=None, max=it.points, status="review", how=it.how, evidence={"reason": "scored by reviewers"}
            )
        elif it.id in untested:
            items[it.id] = ItemResult(
                points=None,
                max=it.points,
                status="untested",
                how=it.how,
                evidence={"reason": f"probe(s) not run: test data for {label}"},
            )
        elif it.id in partial:
            items[it.id] = ItemResult(
                points=it.points * rubric.objective_partial_share,
                max=it.points,
                status="partial",
                how=it.how,
                evidence={"reason": "partly passed"},
            )
        else:
            items[it.id] = ItemResult(
                points=it.points,
                max=it.points,
                status="pass",
                how=it.how,
                evidence={"summary": f"passed while serving {label}", "files": ["frame_pacing.png"]},
            )
    report = Report(
        bench_version="0.1.0",
        rubric_id=rubric.id,
        candidate=Candidate(id="c-" + sha[:12], sha256=sha, size_bytes=1000, label=label),
        environment=dict(env or ENV),
        started_at=started_at,
        items=items,
        measurements={"timeline": {"phases": [{"phase": "intro", "start_s": 0}], "reset_after_60s": False}},
        probes={"frame_pacing": ProbeRecord(name="frame_pacing", data={"frames": 10})},
    )
    save(report, run_dir)
    return run_dir


def expected_auto_points(untested=(), partial=()) -> float:
    rubric = load_rubric()
    return sum(
        it.points * (rubric.objective_partial_share if it.id in partial else 1)
        for it in rubric.items
        if not it.graded and it.id not in untested
    )


# --- signed-in clients (accounts; skycity_bench/review/auth.py) ----------------------------------
@dataclass
class SignedIn:
    """An account with a live session cookie (and its CSRF token) and a personal API token."""

    name: str
    role: str
    cookie: str
    csrf: str
    token: str

    @property
    def cookies(self) -> dict:
        from skycity_bench.review.auth import SESSION_COOKIE

        return {SESSION_COOKIE: self.cookie}

    @property
    def bearer(self) -> dict:
        return {"Authorization": f"Bearer {self.token}"}

    def form(self, **fields) -> dict:
        """Form fields with this session's CSRF token (what the page's form sends)."""
        return {"csrf": self.csrf, **fields}


def sign_in(store, name: str, role: str = "reviewer") -> SignedIn:
    """Create the account if new (as an admin invitation would) and give it a session and an
    API token, made by the app's own code with the store's secret (no HTTP round trip)."""
    from skycity_bench.review.auth import API_TOKEN_TTL_S, Auth
    from skycity_bench.store import accounts

    acc = accounts.create_account(store, name, role, by="test")
    cookie, csrf = Auth(store).new_session(acc["id"])
    token = accounts.issue(store, acc["id"], "api", by="test", ttl_s=API_TOKEN_TTL_S)
    return SignedIn(acc["name"], acc["role"], cookie, csrf, token)


def client(
    app,
    store,
    name: Optional[str] = None,
    role: str = "reviewer",
    *,
    api: bool = False,
    base_url: str = "http://127.0.0.1",
):
    """A TestClient signed in as `name` (session cookie; with api=True also the bearer token,
    which then decides who it is). name=None: anonymous. `.signed` is the SignedIn (or None)."""
    from fastapi.testclient import TestClient

    c = TestClient(app, base_url=base_url, follow_redirects=False)
    c.signed = sign_in(store, name, role) if name else None
    if c.signed:
        c.cookies.update(c.signed.cookies)
        if api:
            c.headers.update(c.signed.bearer)
    return c


def http_client(base: str, store, name: Optional[str] = None, role: str = "reviewer", *, api: bool = False, **kw):
    """The same over real HTTP (httpx, a served app)."""
    import httpx

    signed = sign_in(store, name, role) if name else None
    c = httpx.Client(
        base_url=base,
        cookies=signed.cookies if signed else None,
        headers=signed.bearer if signed and api else None,
        **kw,
    )
    c.signed = signed
    return c


def signed_in_page(browser, base: str, store, name: str, role: str = "reviewer", **context_kw):
    """A Playwright (context, page) with the account's session cookie (for tests whose subject
    is not the sign-in itself; tests/e2e/test_review_signin.py signs in by invitation)."""
    from skycity_bench.review.auth import SESSION_COOKIE

    signed = sign_in(store, name, role)
    ctx = browser.new_context(**context_kw)
    ctx.add_cookies(
        [{"name": SESSION_COOKIE, "value": signed.cookie, "url": base, "httpOnly": True, "sameSite": "Lax"}]
    )
    return ctx, ctx.new_page()


@contextmanager
def serving(app, *, log_level: str = "warning", ready_path: str = "/api/candidates"):
    """Serve an ASGI app (the review app) over real HTTP on a free loopback port: uvicorn on a
    thread, ready once `ready_path` answers at all (any status: the app is up). Yields the
    base URL; the server stops when the block ends."""
    import httpx
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level=log_level))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            httpx.get(base + ready_path, timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.05)
    try:
        yield base
    finally:
        server.should_exit = True
        t.join(timeout=10)
