"""Did it start? The start diagnosis every report opens with, read from the evidence the run
recorded (no browser): the errors the demo threw (the `page_events` pseudo-probe), the
requests it made (`network`), whether it ever painted and how its picture looked
(frame_pacing), whether anything on screen changed (playback's autoplay frames).

Classes, each with a one-line reason naming the observation:

- `started`: it drew a scene, nothing thrown.
- `throws`: it started but its code throws (how often, the first error, when, where). A
  loop that throws in every frame is here even when it never drew: it runs.
- `never_drew`: it never painted, and why (`cause`): `module_resolution` (a module
  specifier the browser could not resolve), `blocked_request` (a script it asked for was
  blocked or failed), `exception_at_load` (an error at load, at most once a page), `unknown`.
- `blank`: it painted, but its scene stayed one flat colour and nothing on screen changed.
- `not_observed`: the run recorded too little to say (a bench failure, or a profile that
  watched no page).

Beside the class: `drew` and `moved` (True, False or None: not observed), which decide the
items the bench could observe had nothing in them (`nothing_to_observe`, score_items.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from skycity_bench.reporting.run_report import ProbeRecord

CLASSES = ("started", "throws", "never_drew", "blank", "not_observed")
CAUSES = ("module_resolution", "blocked_request", "exception_at_load", "unknown")

# What the browser says when an import cannot be resolved (Chromium's wording; the generic
# one of a dynamic import's failed fetch too).
_MODULE_WORDS = ("Failed to resolve module specifier", "Failed to fetch dynamically imported module")


@dataclass
class StartDiagnosis:
    """One run's start diagnosis; `to_json` is the report's `start`."""

    klass: str
    reason: str
    cause: Optional[str] = None
    drew: Optional[bool] = None
    moved: Optional[bool] = None
    thrown: Optional[dict[str, Any]] = None
    observed: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"class": self.klass, "reason": self.reason}
        if self.cause is not None:
            out["cause"] = self.cause
        out["drew"], out["moved"] = self.drew, self.moved
        if self.thrown is not None:
            out["thrown"] = self.thrown
        out["observed"] = self.observed
        return out

    @property
    def nothing_to_observe(self) -> Optional[str]:
        """What the bench observed that leaves the page's items nothing to show ('never drew',
        'blank', 'never moved'), or None when it drew a scene, or that is not known."""
        if self.drew is False:
            return "never drew"
        if self.klass == "blank":
            return "blank"
        if self.moved is False:
            return "never moved"
        return None


def _ok(records: Mapping[str, ProbeRecord], name: str) -> Optional[dict[str, Any]]:
    rec = records.get(name)
    if rec is None or rec.status != "ok" or not isinstance(rec.data, dict):
        return None
    return rec.data


def _thrown(pe: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """{count, first: {message, at_s, frame}, last_message} of the page_events evidence (a
    version-1 record: from its list of page errors); None when page events were not recorded."""
    if pe is None:
        return None
    t = pe.get("thrown")
    if isinstance(t, dict):
        return {"count": int(t.get("count") or 0), "first": t.get("first"), "last_message": t.get("last_message")}
    errors = [str(e) for e in pe.get("page_errors") or []]
    first = {"message": errors[0].splitlines()[0], "at_s": None, "frame": None} if errors else None
    return {"count": len(errors), "first": first, "last_message": errors[-1] if errors else None}


def is_flat(picture: Any, blank_flat_share: float) -> bool:
    """A recorded picture (frame_pacing's `picture`) that is one flat colour: a blank, when at
    least `blank_flat_share` of it is one colour (scorers.frame_pacing.blank_flat_share)."""
    return isinstance(picture, dict) and float(picture.get("flat_share") or 0) >= blank_flat_share


def _drew(fp: Optional[dict[str, Any]], moved: Optional[bool], flat: float) -> tuple[Optional[bool], list[str]]:
    """Whether the page ever drew: a picture that changed on screen, a canvas / WebGL draw
    call from load on, or a picture that is more than one flat colour (a DOM scene). A DOM
    change alone is no drawing (a page sizing its canvas changes an attribute)."""
    if moved:
        return True, ["the picture changed on screen (autoplay frames)"]
    if fp is None:
        return None, []
    painted, pic = fp.get("painted_frames"), fp.get("picture")
    frames = int(fp.get("frames") or 0)
    if isinstance(painted, int):
        if painted > 0:
            return True, [f"{painted} frame(s) made a canvas or WebGL draw call"]
        if pic is not None and not is_flat(pic, flat):
            return True, ["no canvas or WebGL draw call, but the page shows more than one colour (its DOM)"]
        return False, [f"no canvas or WebGL draw call from load on in {frames} frame(s), the picture one colour"]
    # evidence without the draw-call count: the pacing pass's draw signal (a DOM change counts)
    drew_frames = sum(1 for d in fp.get("drew") or [] if d)
    if drew_frames:
        return True, [f"{drew_frames} frame(s) of the pacing pass drew or changed the DOM"]
    if is_flat(pic, flat):
        return False, [f"nothing drawn in {frames} frame(s), the picture one colour"]
    return None, []


def _changed(watch: Any) -> Optional[bool]:
    if not isinstance(watch, dict):
        return None
    union = watch.get("union") or {}
    travel = watch.get("travel") or {}
    return bool(union.get("changed_share", 0) > 0 or travel.get("travel_px", 0) > 0)


def _moved(pb: Optional[dict[str, Any]]) -> Optional[bool]:
    """Whether anything on screen ever changed in the autoplay frames (the page alone, the
    control arm, the clicked arm); None where no autoplay frames were taken."""
    auto = (pb or {}).get("autoplay")
    arms = [_changed(auto)] + ([_changed(auto.get(k)) for k in ("control", "clicked")] if auto else [])
    seen = [a for a in arms if a is not None]
    return any(seen) if seen else None


def _blocked_scripts(net: Optional[dict[str, Any]]) -> list[str]:
    """Scripts (and module imports) a page asked for that the bench's network blocked."""
    out = []
    for r in (net or {}).get("requests") or []:
        if isinstance(r, dict) and r.get("outcome") == "blocked" and r.get("resource_type") in ("script", "fetch"):
            out.append(str(r.get("url")))
    return out


def _said(thrown: Optional[dict[str, Any]]) -> str:
    """'TypeError: … (at frame, 1.2 s)' of the first error."""
    first = (thrown or {}).get("first") or {}
    where = [str(first["frame"])] if first.get("frame") else []
    if first.get("at_s") is not None:
        where.append(f"{first['at_s']:g} s")
    return f"'{first.get('message') or 'error'}'" + (f" ({', '.join(where)})" if where else "")


def _never_drew(d: StartDiagnosis, net: Optional[dict[str, Any]]) -> StartDiagnosis:
    """Why a page that never painted did not: its first error, or a blocked script."""
    msg = str(((d.thrown or {}).get("first") or {}).get("message") or "")
    blocked = _blocked_scripts(net)
    d.klass = "never_drew"
    if any(w in msg for w in _MODULE_WORDS):
        d.cause, d.reason = "module_resolution", f"never drew: a module could not be resolved: {_said(d.thrown)}"
    elif blocked:
        d.cause = "blocked_request"
        d.reason = f"never drew: {len(blocked)} script request(s) blocked, first {blocked[0]}"
        if msg:
            d.reason += f"; then it threw {_said(d.thrown)}"
    elif msg:
        d.cause, d.reason = "exception_at_load", f"never drew: it threw at load {_said(d.thrown)}"
    else:
        d.cause, d.reason = "unknown", "never drew: no draw call and no picture change, and no error recorded"
    return d


def diagnose(records: Mapping[str, ProbeRecord], blank_flat_share: float) -> StartDiagnosis:
    """The start diagnosis of a run from its probe records (report.probes); a picture counts
    as one flat colour from `blank_flat_share` of it on (scorers.frame_pacing)."""
    pe, net, fp, pb = (_ok(records, n) for n in ("page_events", "network", "frame_pacing", "playback"))
    thrown = _thrown(pe)
    moved = _moved(pb)
    drew, seen = _drew(fp, moved, blank_flat_share)
    d = StartDiagnosis("started", "", drew=drew, moved=moved, thrown=thrown, observed=seen)
    if pe is None:
        d.observed.append("no page events recorded: errors the page threw are not known")
    if drew is None and pe is None:
        d.klass, d.reason = "not_observed", "not observed: no page events and no probe that watches the page ran"
        return d
    count, pages = (thrown or {}).get("count", 0), int((pe or {}).get("pages") or 0)
    crashes = int((pe or {}).get("renderer_crashes") or 0)
    if crashes:
        d.observed.append(f"the renderer crashed on {crashes} page(s)")
    if drew is False and count <= max(pages, 1):
        return _never_drew(d, net)
    if count:
        d.klass = "throws"
        d.reason = f"started but throws: {count} error(s) on {pages} page(s), first {_said(thrown)}"
        if drew is False:
            d.reason += "; it never drew"
        return d
    if drew is None:
        d.klass, d.reason = "not_observed", "not observed: no probe that watches the page ran (frame_pacing, playback)"
        return d
    return _drew_what(d, fp, blank_flat_share)


def _drew_what(d: StartDiagnosis, fp: Optional[dict[str, Any]], flat: float) -> StartDiagnosis:
    """A page that painted and threw nothing: a scene, or a blank (flat and still)."""
    pic = (fp or {}).get("picture")
    if isinstance(pic, dict) and is_flat(pic, flat) and d.moved is False:
        d.klass = "blank"
        d.reason = (
            f"blank: it drew, but {pic['flat_share']:.1%} of the {pic.get('region', 'picture')} is one colour "
            f"(BGR {pic.get('colour_bgr')}) and nothing on screen changed"
        )
        return d
    d.reason = "started and drew: " + "; ".join(d.observed[:1] or ["it drew"])
    return d
