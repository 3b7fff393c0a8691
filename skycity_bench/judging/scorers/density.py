"""density.count, density.categories (auto) and density.behavior (assisted), as the rubric's
动态密度 section says:
- N: the lowest verified count of visible dynamic objects over every sample in 20–35 s
  (the rubric's four points, one per second across the segment, and the densified points
  where the count dropped). Verified = a hook claim whose own image region moved against
  the camera-compensated background. Without an answering hook, N is the lowest count of
  moving regions that are plainly objects (vision/objects.py: not a member of a field of
  near-identical primitives, own motion shown by their content, not within what parallax
  explains, fragments of one surface counted once), and only when the pixels separate
  objects with confidence: where, at any sample, more of what the visual count saw is not
  plainly an object than `hookless_doubt_share` of it (and more than `hookless_doubt_min`),
  density.count and density.categories go to `review` with the counts and evidence as the
  reviewer's hint (never auto points from blobs; a missing hook is not penalised).
  A demo without a hook that renders a three.js scene has its claims located by the scene
  graph instead (probes/_scene_graph.py: the nodes that move on their own), verified by the
  same pixel checks; since the scene graph can miss what moves by other means (a shader,
  instance buffers, one merged geometry), its N stands only where, at every sample, the
  pixels' own plainly-object count exceeds the verified claims by no more than the
  disagreement allowance (`claim_disagreement` of it and `disagreement_min_objects`); else
  density.count goes to `review` with both counts as the hint.
  With claims (hook or scene graph), where at some sample more claims stayed *undecided*
  than the disagreement allowance of the verified ones (vision/settle.py: their boxes
  changed over the longest baseline, yet no shift of their own content explained it), or
  any stayed undecided where N is 0, density.count goes to `review` with the counts
  (claimed, verified, rejected by reason, undecided): never a confident count or zero.
- count points = item.points × min(N / item.full_at, 1).
- C: categories among the verified objects of one sample, the minimum over samples;
  points = min(C, item.full_at) × item.points / item.full_at. Without the hook, categories
  cannot be verified from pixels, and the scene graph names none: `untested` (points null),
  never a silent zero.
- density.behavior stays `review`: reviewers score it with the speed / direction / route /
  lockstep evidence and the plot.

The evidence read is the probe's model, skycity_bench/evidence/density.py (DensityEvidence,
evidence versions 4 and 5); the thresholds are the scenario's `scorers: density:` section
(DensityScorerSettings: no defaults, a missing one is a load-time error); point values and
full_at come from the rubric item.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.analysis.vision.behavior import summarise
from skycity_bench.analysis.vision.settle import UNDECIDED
from skycity_bench.common.errors import Cause
from skycity_bench.evidence.density import SCENE_GRAPH_LOCATOR as SCENE_GRAPH
from skycity_bench.evidence.density import DensityEvidence, DensitySample
from skycity_bench.judging.scorers import ItemScore, ScoreInput, scorer, scorer_settings

ACCEPTS = {"density": ("4", "5")}  # the evidence versions these scorers read (evidence/density.py)


@scorer_settings("density")
class DensityScorerSettings(BaseModel):
    """What the density items are judged with: the scenario's `scorers: density:` section
    (the reasons for the values are comments there). Every field is required."""

    model_config = ConfigDict(extra="forbid")

    claim_disagreement: float = Field(
        ge=0, le=10, description="claimed vs verified (or pixels vs verified) share beyond which a note calls it out"
    )
    disagreement_min_objects: int = Field(ge=0, description="... pixels vs verified: and more objects apart than this")
    lockstep_speed_px_s: float = Field(ge=0, description="two objects' velocities this close move in lockstep")
    lockstep_min_samples: int = Field(ge=2, description="... at every one of at least this many common samples")
    hookless_doubt_share: float = Field(
        ge=0,
        le=1,
        description="no hook: a sample with more of the visual count not plainly objects than this share ...",
    )
    hookless_doubt_min: int = Field(ge=0, description="... and more regions than this goes to review")


def _settings(inp: ScoreInput) -> DensityScorerSettings:
    st: DensityScorerSettings = inp.settings("density")
    return st


def _samples_json(d: DensityEvidence) -> list[dict[str, Any]]:
    """The samples as the probe wrote them, for the behaviour summary and its plot
    (vision/behavior.py, vision/plot.py read the vision layer's records)."""
    return [s.model_dump(mode="json", exclude_unset=True) for s in d.samples]


def _sample_notes(s: DensitySample, who: str, st: DensityScorerSettings) -> list[str]:
    """What a reviewer should know about one sample: claims that did not move, pixels that
    disagree with the verified claims, a full-screen effect, a failed hook call."""
    notes = []
    v = s.verified_count
    limit = st.claim_disagreement
    claimed = s.claimed_count
    if v is not None and claimed is not None and abs(claimed - v) > limit * max(claimed, v, 1):
        notes.append(
            f"at {s.t:.2f} s {who} claimed {claimed} visible dynamic objects, but only {v} of them "
            f"moved on screen ({_why(s)})"
        )
    if (
        v is not None
        and abs(s.visual_count - v) > limit * max(v, 1)
        and abs(s.visual_count - v) > st.disagreement_min_objects
    ):
        notes.append(
            f"at {s.t:.2f} s the pixels show {s.visual_count} moving objects and {who}'s "
            f"verified claims {v}: reviewers should look at {s.evidence or 'the samples'}"
        )
    if s.full_screen_effect:
        notes.append(f"at {s.t:.2f} s most of the frame changed (a full-screen effect): not counted as objects")
    if s.hook_error:
        notes.append(f"at {s.t:.2f} s getDynamicObjects failed ({s.hook_error}): the visual count stands in")
    return notes


def _lowest(rows: list[dict[str, Any]], hook_used: bool) -> dict[str, Any]:
    """N (the lowest count, earliest first) and C (the fewest categories) over the samples,
    and the visual count's range."""
    out: dict[str, Any] = {}
    counts = [
        (r["verified_count"] if r["verified_count"] is not None else r.get("plain_count", r["visual_count"]), r["t"])
        for r in rows
    ]
    counts = [c for c in counts if c[0] is not None]
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


def summary(inp: ScoreInput) -> dict[str, Any]:
    """The samples as rows, the notes for reviewers, what located the claims, N and C."""
    d: DensityEvidence = inp.evidence("density")
    samples = d.samples
    st = _settings(inp)
    hook_used = any(s.verified_count is not None for s in samples)
    # what located the claims: evidence written before the scene graph had the hook alone
    located = d.locator.kind if d.locator is not None else ("hook" if hook_used else "none")
    who = "the three.js scene graph" if located == SCENE_GRAPH else "the hook"
    rows, notes = [], []
    for s in samples:
        v = s.verified_count
        rows.append(
            {
                "t": s.t,
                "visual_count": s.visual_count,
                "verified_count": v,
                # the scene graph names no categories (its claims' category is null)
                "categories": s.categories if v is not None and located != SCENE_GRAPH else None,
                "claimed_count": s.claimed_count,
                "densified": s.densified,
                "evidence": s.evidence,
            }
        )
        notes += _sample_notes(s, who, st)
    out_extra: dict[str, Any] = {}
    if not hook_used:
        _hookless(samples, rows, out_extra, st)
    elif located == SCENE_GRAPH:
        _unaccounted(samples, rows, out_extra, st)
    if hook_used:
        _undecided(samples, rows, out_extra, st)
    lowest = _lowest(rows, hook_used)
    out = {
        "samples": rows,
        "hook_used": hook_used,
        "located_by": located,
        "notes": notes[:12],
        "notes_total": len(notes),
    }
    out.update(out_extra)
    out.update(lowest)
    return out


def _hookless(
    samples: list[DensitySample], rows: list[dict[str, Any]], out: dict[str, Any], st: DensityScorerSettings
) -> None:
    """Without the hook: each row's plain count, and whether the pixels separate objects with
    confidence (`out["doubt"]`: the samples where they did not, for the reviewer)."""
    doubt, fields = [], 0
    for s, r in zip(samples, rows):
        ob = s.objects
        if ob is None:
            continue
        r["plain_count"] = ob.get("plain_count")
        why = ob.get("doubtful") or {}
        fields = max(fields, int(ob.get("largest_alike_group") or 0) if any("field" in k for k in why) else 0)
        # what the visual count saw that is not plainly an object (fragments merged into
        # their surface are settled, not in doubt)
        unsure = sum(n for k, n in why.items() if "fragment" not in k)
        if unsure > max(st.hookless_doubt_min, st.hookless_doubt_share * r["visual_count"]):
            doubt.append(
                {
                    "t": r["t"],
                    "visual_count": r["visual_count"],
                    "plain_count": ob.get("plain_count"),
                    "not_plainly_objects": why,
                    "evidence": r.get("evidence"),
                }
            )
    out["doubt"] = doubt
    out["largest_field"] = fields


def _unaccounted(
    samples: list[DensitySample], rows: list[dict[str, Any]], out: dict[str, Any], st: DensityScorerSettings
) -> None:
    """Claims located by the scene graph: the samples where the pixels show more moving
    regions that are plainly objects than the verified claims, beyond the disagreement
    allowance (`out["unaccounted"]`): what moved there was not a scene node of its own."""
    miss = []
    for s, r in zip(samples, rows):
        plain = (s.objects or {}).get("plain_count")
        r["plain_count"] = plain
        v = r["verified_count"]
        if plain is None or v is None:
            continue
        more = plain - v
        if more > st.disagreement_min_objects and more > st.claim_disagreement * max(plain, 1):
            miss.append({"t": r["t"], "verified_count": v, "plain_count": plain, "evidence": r.get("evidence")})
    out["unaccounted"] = miss


def _undecided(
    samples: list[DensitySample], rows: list[dict[str, Any]], out: dict[str, Any], st: DensityScorerSettings
) -> None:
    """The samples where the claims the bench could neither confirm nor reject over the
    longest baseline (vision/settle.py) are more than the disagreement allowance of the
    verified ones (`out["undecided"]`), and at every sample how many were undecided
    (`out["undecided_any"]`). Evidence without the figure (version 4) has none."""
    many, any_ = [], False
    for s, r in zip(samples, rows):
        u = s.undecided_count
        if not u:
            continue
        any_ = True
        v = r["verified_count"] or 0
        if u > st.disagreement_min_objects and u > st.claim_disagreement * max(v, 1):
            many.append(
                {
                    "t": r["t"],
                    "claimed_count": s.claimed_count,
                    "verified_count": v,
                    "undecided_count": u,
                    "rejected": dict(Counter(_kind(c.get("verdict", "?")) for c in s.claims or [] if _rejected(c))),
                    "evidence": r.get("evidence"),
                }
            )
    out["undecided"] = many
    out["undecided_any"] = any_


def _rejected(c: dict[str, Any]) -> bool:
    v = str(c.get("verdict", ""))
    return v != "moved" and not v.startswith(UNDECIDED)


def _review_hint(sm: dict[str, Any]) -> dict[str, Any]:
    d = sm["doubt"]
    kinds: Counter[str] = Counter()
    for x in d:
        kinds.update(x["not_plainly_objects"])
    return {
        "reason": (
            "no answering getDynamicObjects(), and the pixels do not separate objects with confidence "
            f"at {len(d)} of {len(sm['samples'])} samples: a person decides (never auto points from blobs; "
            "a missing hook is not itself penalised)"
        ),
        "hint": {
            "visual_count_range": [sm.get("visual_min"), sm.get("visual_max")],
            "plainly_objects_lowest": sm.get("N"),
            "not_plainly_objects": dict(kinds.most_common()),
            "largest_group_of_near_identical_moving_primitives": sm.get("largest_field"),
            "samples_in_doubt": d[:8],
        },
    }


def _kind(verdict: str) -> str:
    """A claim's verdict in a few words: 'part or duplicate of car-3' -> 'part or duplicate'."""
    if "on screen (covered" in verdict:
        return "covered or fixed to the screen"
    if verdict.startswith("no own motion ("):
        # settled over the longest baseline (vision/settle.py): the kind in brackets
        return verdict[len("no own motion (") :].split(" over ")[0].split(")")[0]
    if verdict.startswith("no own motion seen (covered)"):
        return "covered"
    if "moving region is" in verdict:
        return "sharing another object's motion"
    return verdict.split(" of ")[0].split(":")[0]


def _why(s: DensitySample) -> str:
    v = Counter(_kind(c.get("verdict", "?")) for c in s.claims or [] if c.get("verdict") != "moved")
    return ", ".join(f"{n} {k}" for k, n in v.most_common()) or "no details"


def _measurements(sm: dict[str, Any]) -> dict[str, Any]:
    m = {
        "density.samples": [
            {k: r[k] for k in ("t", "visual_count", "verified_count", "categories")} for r in sm["samples"]
        ],
        "density.N": sm.get("N"),
        "density.C": sm.get("C"),
    }
    for k in ("visual_min", "visual_max", "hook_used", "largest_field"):
        if k in sm:
            m[f"density.{k}"] = sm[k]
    return m


@scorer("density.count", probes=("density",), accepts=ACCEPTS)
def density_count(inp: ScoreInput) -> ItemScore:
    sm = summary(inp)
    full_at = float(inp.item.require("full_at"))
    ev = {
        "basis": "verified hook claims (own pixels moved)"
        if sm["located_by"] == "hook"
        else "verified claims located by the three.js scene graph (no answering hook: the scene nodes that moved on "
        "their own, each checked against the pixels as a hook's claim is)"
        if sm["located_by"] == SCENE_GRAPH
        else "visual count of plain objects (no answering hook: moving regions found in the pixels, camera motion "
        "removed, particle fields, camera-explained motion and fragments of one surface not counted)",
        "N": sm.get("N"),
        "N_at_s": sm.get("N_at"),
        "full_at": full_at,
        "samples": len(sm["samples"]),
        "notes": sm["notes"],
        "evidence_files": [r["evidence"] for r in sm["samples"] if r.get("evidence")],
    }
    if "N" not in sm:
        ev["reason"] = "no sample could be taken"
        # the probe samples every instant it keeps: none kept means the run's budget left none
        # (its `sampling` says so), else the bench's own failure
        cause = Cause.BUDGET if inp.evidence("density").sampling else Cause.BENCH
        return ItemScore("untested", None, ev, _measurements(sm), cause=cause)
    if not sm["hook_used"] and sm.get("doubt"):
        ev.update(_review_hint(sm))
        return ItemScore("review", None, ev, _measurements(sm))
    if sm.get("unaccounted"):
        u = sm["unaccounted"]
        ev["reason"] = (
            f"the three.js scene graph located objects, but at {len(u)} of {len(sm['samples'])} samples "
            "the pixels show more moving objects than its verified claims: something moves by other "
            "means (a shader, instance buffers, one merged geometry), so a person decides"
        )
        ev["hint"] = {"verified_lowest": sm.get("N"), "samples_unaccounted": u[:8]}
        return ItemScore("review", None, ev, _measurements(sm))
    if sm.get("undecided") or (sm["N"] == 0 and sm.get("undecided_any")):
        u = sm["undecided"]
        who = "the three.js scene graph" if sm["located_by"] == SCENE_GRAPH else "the hook"
        ev["reason"] = (
            f"{who} claimed movers that the bench could neither confirm nor reject"
            + (f" at {len(u)} of {len(sm['samples'])} samples" if u else " where it verified none")
            + ": their boxes changed over the longest baseline, yet no shift of their own content explained "
            "it (covered now and then, turning, or too alike to follow), so a person decides (never a "
            "confident count, never a confident zero)"
        )
        ev["hint"] = {"verified_lowest": sm.get("N"), "samples_undecided": u[:8]}
        return ItemScore("review", None, ev, _measurements(sm))
    n = sm["N"]
    pts = inp.item.points * min(n / full_at, 1.0)
    status = "pass" if n >= full_at else ("fail" if n == 0 else "partial")
    ev["formula"] = f"{inp.item.points:g} × min({n} / {full_at:g}, 1) = {pts:.2f}"
    return ItemScore(status, pts, ev, _measurements(sm))


@scorer("density.categories", probes=("density",), accepts=ACCEPTS)
def density_categories(inp: ScoreInput) -> ItemScore:
    sm = summary(inp)
    full_at = float(inp.item.require("full_at"))
    ev = {"C": sm.get("C"), "C_at_s": sm.get("C_at"), "categories_then": sm.get("C_names"), "full_at": full_at}
    if not sm["hook_used"] and sm.get("doubt"):
        ev.update(_review_hint(sm))
        return ItemScore("review", None, ev, {"density.C": None})
    if not sm["hook_used"] or sm["located_by"] == SCENE_GRAPH:
        ev["reason"] = (
            "no answering getDynamicObjects(): categories cannot be verified from pixels alone"
            + (
                " and the three.js scene graph that located the objects names none"
                if sm["located_by"] == SCENE_GRAPH
                else ""
            )
            + ", so this item is untested (not zero)"
        )
        return ItemScore("untested", None, ev, {"density.C": None}, cause=Cause.PAGE)
    c = sm.get("C", 0)
    pts = min(c, full_at) * inp.item.points / full_at
    status = "pass" if c >= full_at else ("fail" if c == 0 else "partial")
    ev["formula"] = f"min({c}, {full_at:g}) × {inp.item.points:g}/{full_at:g} = {pts:.2f}"
    return ItemScore(status, pts, ev, {"density.C": c})


def _render_behavior(inp: ScoreInput, score: ItemScore, out_dir: Path) -> list[str]:
    from skycity_bench.media.density_figure import behavior_plot

    name = "density_behavior.png"
    d = inp.evidence("density")
    behavior_plot(out_dir / name, _samples_json(d), score.evidence, summary(inp)["samples"])
    return [name]


@scorer("density.behavior", probes=("density",), render=_render_behavior, accepts=ACCEPTS)
def density_behavior(inp: ScoreInput) -> ItemScore:
    d: DensityEvidence = inp.evidence("density")
    s = _settings(inp)
    b = summarise(_samples_json(d), d.delta_ms / 1000.0, s.lockstep_speed_px_s, s.lockstep_min_samples)
    ev = dict(b)
    ev["how"] = (
        "speeds and headings from each verified object's own pixel displacement (camera removed) "
        "between t and t + Δ; tracks, routes and lockstep from the hook's positions of verified objects"
    )
    if b.get("synchronised"):
        ev["flag"] = (
            f"{b['lockstep']['objects_in_lockstep']} of {b['objects_tracked']} tracked objects move in "
            "lockstep (运动同步): the rubric names synchronised motion as a failure"
        )
    if not b["objects_tracked"]:
        ev["note"] = "no verified objects to track (no answering hook, or nothing it claimed moved)"
    ev["reason"] = "assisted item: reviewers score it with this evidence"
    return ItemScore("review", None, ev, {"density.behavior": b})
