"""density.count, density.categories (auto) and density.behavior (assisted), as the rubric's
动态密度 section says:
- N: the lowest verified count of visible dynamic objects over every sample in 20–35 s
  (the rubric's four points, one per second across the segment, and the densified points
  where the count dropped). Verified = a hook claim whose own image region moved against
  the camera-compensated background. Without an answering hook, N is the visual count.
- count points = item.points × min(N / item.full_at, 1).
- C: categories among the verified objects of one sample, the minimum over samples;
  points = min(C, item.full_at) × item.points / item.full_at. Without the hook, categories
  cannot be verified from pixels: `untested` (points null), never a silent zero.
- density.behavior stays `review`: reviewers score it with the speed / direction / route /
  lockstep evidence and the plot.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ..vision.behavior import summarise
from . import ItemScore, ScoreInput, scorer


def _settings(inp: ScoreInput):
    return inp.scenario.probe_settings("density")


def summary(inp: ScoreInput) -> dict:
    d = inp.data("density")
    samples = d.get("samples") or []
    hook_used = any(s.get("verified_count") is not None for s in samples)
    rows, notes = [], []
    limit = _settings(inp).claim_disagreement
    for s in samples:
        v = s.get("verified_count")
        rows.append({"t": s["t"], "visual_count": s.get("visual_count"), "verified_count": v,
                     "categories": s.get("categories") if v is not None else None,
                     "claimed_count": s.get("claimed_count"), "densified": bool(s.get("densified")),
                     "evidence": s.get("evidence")})
        claimed = s.get("claimed_count")
        if v is not None and claimed is not None and abs(claimed - v) > limit * max(claimed, v, 1):
            notes.append(f"at {s['t']:.2f} s the hook claimed {claimed} visible dynamic objects, but only {v} of them "
                         f"moved on screen ({_why(s)})")
        if v is not None and s.get("visual_count") is not None and abs(s["visual_count"] - v) > limit * max(v, 1) \
                and abs(s["visual_count"] - v) > 2:
            notes.append(f"at {s['t']:.2f} s the pixels show {s['visual_count']} moving objects and the hook's "
                         f"verified claims {v}: reviewers should look at {s.get('evidence') or 'the samples'}")
        if s.get("full_screen_effect"):
            notes.append(f"at {s['t']:.2f} s most of the frame changed (a full-screen effect): not counted as objects")
        if s.get("hook_error"):
            notes.append(f"at {s['t']:.2f} s getDynamicObjects failed ({s['hook_error']}): the visual count stands in")
    counts = [(r["verified_count"] if r["verified_count"] is not None else r["visual_count"], r["t"]) for r in rows]
    counts = [c for c in counts if c[0] is not None]
    out = {"samples": rows, "hook_used": hook_used, "notes": notes[:12], "notes_total": len(notes)}
    if counts:
        n, t_n = min(counts, key=lambda c: (c[0], c[1]))
        out.update(N=n, N_at=t_n)
    vis = [r["visual_count"] for r in rows if r["visual_count"] is not None]
    if vis:
        out.update(visual_min=min(vis), visual_max=max(vis))
    cats = [(len(r["categories"]), r["t"], r["categories"]) for r in rows if r["categories"] is not None]
    if hook_used and cats:
        c, t_c, names = min(cats, key=lambda c: (c[0], c[1]))
        out.update(C=c, C_at=t_c, C_names=names)
    return out


def _kind(verdict: str) -> str:
    """A claim's verdict in a few words: 'part or duplicate of car-3' -> 'part or duplicate'."""
    if "on screen (covered" in verdict:
        return "covered or fixed to the screen"
    if "moving region is" in verdict:
        return "sharing another object's motion"
    return verdict.split(" of ")[0].split(":")[0]


def _why(s: dict) -> str:
    v = Counter(_kind(c.get("verdict", "?")) for c in s.get("claims") or [] if c.get("verdict") != "moved")
    return ", ".join(f"{n} {k}" for k, n in v.most_common()) or "no details"


def _measurements(sm: dict) -> dict:
    m = {"density.samples": [{k: r[k] for k in ("t", "visual_count", "verified_count", "categories")}
                             for r in sm["samples"]],
         "density.N": sm.get("N"), "density.C": sm.get("C")}
    for k in ("visual_min", "visual_max", "hook_used"):
        if k in sm:
            m[f"density.{k}"] = sm[k]
    return m


@scorer("density.count", probes=("density",))
def density_count(inp: ScoreInput) -> ItemScore:
    sm = summary(inp)
    full_at = float(inp.item.get("full_at", 50))
    ev = {"basis": "verified hook claims (own pixels moved)" if sm["hook_used"] else
          "visual count (no answering hook: objects found in the pixels, camera motion removed)",
          "N": sm.get("N"), "N_at_s": sm.get("N_at"), "full_at": full_at, "samples": len(sm["samples"]),
          "notes": sm["notes"], "evidence_files": [r["evidence"] for r in sm["samples"] if r.get("evidence")]}
    if "N" not in sm:
        ev["reason"] = "no sample could be taken"
        return ItemScore("untested", None, ev, _measurements(sm))
    n = sm["N"]
    pts = inp.item.points * min(n / full_at, 1.0)
    status = "pass" if n >= full_at else ("fail" if n == 0 else "partial")
    ev["formula"] = f"{inp.item.points:g} × min({n} / {full_at:g}, 1) = {pts:.2f}"
    return ItemScore(status, pts, ev, _measurements(sm))


@scorer("density.categories", probes=("density",))
def density_categories(inp: ScoreInput) -> ItemScore:
    sm = summary(inp)
    full_at = float(inp.item.get("full_at", 4))
    ev = {"C": sm.get("C"), "C_at_s": sm.get("C_at"), "categories_then": sm.get("C_names"), "full_at": full_at}
    if not sm["hook_used"]:
        ev["reason"] = ("no answering getDynamicObjects(): categories cannot be verified from pixels alone, "
                        "so this item is untested (not zero)")
        return ItemScore("untested", None, ev, {"density.C": None})
    c = sm.get("C", 0)
    pts = min(c, full_at) * inp.item.points / full_at
    status = "pass" if c >= full_at else ("fail" if c == 0 else "partial")
    ev["formula"] = f"min({c}, {full_at:g}) × {inp.item.points:g}/{full_at:g} = {pts:.2f}"
    return ItemScore(status, pts, ev, {"density.C": c})


def _render_behavior(inp: ScoreInput, score: ItemScore, out_dir: Path) -> list[str]:
    from ..vision.plot import behavior_plot

    name = "density_behavior.png"
    d = inp.data("density")
    behavior_plot(out_dir / name, d.get("samples") or [], score.evidence, summary(inp)["samples"])
    return [name]


@scorer("density.behavior", probes=("density",), render=_render_behavior)
def density_behavior(inp: ScoreInput) -> ItemScore:
    d = inp.data("density")
    s = _settings(inp)
    b = summarise(d.get("samples") or [], d.get("delta_ms", 100) / 1000.0, s.lockstep_speed_px_s, s.lockstep_min_samples)
    ev = dict(b)
    ev["how"] = ("speeds and headings from each verified object's own pixel displacement (camera removed) "
                 "between t and t + Δ; tracks, routes and lockstep from the hook's positions of verified objects")
    if b.get("synchronised"):
        ev["flag"] = (f"{b['lockstep']['objects_in_lockstep']} of {b['objects_tracked']} tracked objects move in "
                      "lockstep (运动同步): the rubric names synchronised motion as a failure")
    if not b["objects_tracked"]:
        ev["note"] = "no verified objects to track (no answering hook, or nothing it claimed moved)"
    ev["reason"] = "assisted item: reviewers score it with this evidence"
    return ItemScore("review", None, ev, {"density.behavior": b})
