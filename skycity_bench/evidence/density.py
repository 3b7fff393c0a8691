"""Evidence of probes/density.py (items density.count, density.categories, density.behavior):
fake-clock frame pairs t, t + Δ across the dense window, each analysed by the vision layer
(skycity_bench/analysis/vision/analyse.py: analyse_pair), and the hook's claims checked against the
pixels. Judged only in scorers/density.py.

The analysis' own records (regions, camera model, the hook claims' verdicts, the hookless
object figures) are kept as the vision layer writes them; their shape is documented where
they are made (vision/segment.py Region.to_json, vision/camera.py CameraModel.to_json,
vision/verify.py, vision/objects.py plain_objects). Fields with a default of None are
written only when the probe has them (the hook fields only with an answering hook, `objects`
only without); `to_data` leaves the unwritten ones out.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import Field

from skycity_bench.evidence.contract import Evidence, Part

# `locator.kind` of claims located by the three.js scene graph (probes/_scene_graph.py)
SCENE_GRAPH_LOCATOR = "three_scene_graph"


class DensityHook(Part):
    present: bool = Field(
        description="describe() answered: the hook's claims are read and checked at every sample "
        "(without it, `locator` says what located claims, if anything)"
    )
    describe: Any = Field(description="what describe() returned")
    error: Optional[str] = Field(description="why describe() failed")


class DensityLocator(Part):
    """What located the claims checked at each sample (probes/_scene_graph.py)."""

    kind: Literal["hook", "three_scene_graph", "none"] = Field(
        description="the hook's getDynamicObjects(), the three.js scene graph (no answering hook), or nothing "
        "(the visual count alone)"
    )
    scene_graph: Optional[dict[str, Any]] = Field(
        None,
        description="what the page's scene graph watch had seen when it was chosen (renderers wrapped, "
        "scenes rendered, failures, armed); null where it was not asked",
    )


class DensitySample(Part):
    """One frame pair: frame A at t, the hook's visible claims at t, frame B at t + Δ."""

    t: float = Field(description="demo seconds of frame A")
    t_b: float = Field(description="demo seconds of frame B")
    densified: bool = Field(description="an extra sample where the count dropped (a second, fresh page)")
    visual_count: int = Field(description="moving regions the pixels show, camera motion removed")
    regions: list[dict[str, Any]] = Field(
        description="regions found (bbox, area, kind, counted, reason; without a hook plain / doubt), first 400"
    )
    excluded: dict[str, int] = Field(description="regions not counted, by reason")
    camera: dict[str, Any] = Field(description="the camera model fitted between A and B")
    changed_frac: float = Field(description="share of the frame's pixels that changed")
    full_screen_effect: bool = Field(description="most of the frame changed (not counted as objects)")
    timing_ms: dict[str, float] = Field(
        description="ms spent: seek, capture, camera, segment, recheck, far, still_point, total"
    )
    # with a hook (getDynamicObjects answered)
    claims: Optional[list[dict[str, Any]]] = Field(
        None, description="each visible claim with its verdict ('moved' = verified) and own displacement dx, dy"
    )
    claimed_count: Optional[int] = Field(None, description="visible objects the hook claimed")
    verified_count: Optional[int] = Field(None, description="claims whose own pixels moved")
    categories: Optional[list[str]] = Field(None, description="categories of the verified claims")
    claimed_categories: Optional[list[str]] = Field(None, description="categories of all claims")
    rechecked_by_other_pairs: Optional[int] = Field(None, description="claims turned into movers by the other pairs")
    other_pairs_frames: Optional[list[int]] = Field(None, description="the other pairs used (frames from t)")
    # optional: version 4 evidence without the far pair stays valid as it is
    rechecked_by_far_pair: Optional[int] = Field(
        None,
        description="claims turned into movers by the far pair (t ± far_pair_frames, 3D scenes; claims' shift_far)",
    )
    rechecked_by_still_point: Optional[int] = Field(
        None,
        description="claims turned into movers by the still-point test over the views t + still_point_frames "
        "(3D scenes, claims no pair verified; each tested claim's record says why in still_point)",
    )
    # optional: version 4 evidence has neither
    rechecked_by_track: Optional[int] = Field(
        None,
        description="claims turned into movers by following their content outwards through the pairs up to "
        "the longest baseline (vision/settle.py; each such claim's record has its track and baseline_s)",
    )
    undecided_count: Optional[int] = Field(
        None,
        description="claims the bench could neither confirm nor reject: their box changed over the longest "
        "baseline, yet no shift of their own content explained it (vision/settle.py); many of them send "
        "density.count to review",
    )
    still_by_own_account: Optional[int] = Field(
        None,
        description="claims the pixels matched that the locator's own positions over the longest baseline show "
        "moving on screen only as the camera moves the background there (under min_speed_px_s): not verified",
    )
    hook_error: Optional[str] = Field(None, description="getDynamicObjects failed here: the visual count stands in")
    # without a hook
    objects: Optional[dict[str, Any]] = Field(
        None,
        description="which counted regions are plainly objects: "
        "plain_count, counted, doubtful {why: n}, "
        "largest_alike_group ...",
    )
    evidence: Optional[str] = Field(None, description="the annotated frame A (rubric sample points and the lowest)")


class DensityEvidence(Evidence):
    probe = "density"
    # 4: typed; fields as in probe version 3. 5: claims settled over the longest baseline
    # (undecided_count, rechecked_by_track; each claim's baseline_s), read as version 4 is.
    evidence_version = "5"

    hook: DensityHook
    delta_ms: float = Field(description="Δ between frames A and B, ms")
    delta_frames: int = Field(description="Δ in 60 Hz frames")
    other_pair_frames: list[int] = Field(description="frames from t of the other pairs for claims that did not move")
    times: list[float] = Field(description="the planned sample times")
    densified_times: list[float] = Field(description="extra sample times where the count dropped")
    densify_error: Optional[str] = Field(description="why the densifying page stopped")
    lowest_evidence: Optional[str] = Field(description="annotated frame of the lowest sample, when not a rubric point")
    samples: list[DensitySample] = Field(description="every sample, in time order")
    page_errors: list[Any] = Field(description="errors the page threw (first 20)")
    # Optional: version 4 evidence from before the tour's frames were read stays valid as it
    # is; no scorer reads it (where the frames came from changes no figure).
    frames_from: Optional[dict[str, Optional[str]]] = Field(
        None,
        description="where each pass's frames came from: {main, densified}: 'tour' (the recording's pass "
        "captured them, probes/_tour.py DensityFrames) or 'replay' (this probe played the window "
        "on a fresh page); densified null when no sample was densified",
    )
    # Optional: version 4 evidence without the still-point test stays valid as it is.
    still_point_frames: Optional[list[int]] = Field(
        None,
        description="frames from t of the still-point test's views (frames A and the hook's claims there; "
        "vision/multiview.py); null without a hook",
    )
    # Optional: version 4 evidence without it stays valid as it is (it was located by the
    # hook alone).
    locator: Optional[DensityLocator] = Field(None, description="what located the claims checked at each sample")
    # Optional: written only where the probe replayed the window on a slowly rendering page.
    sampling: Optional[dict[str, Any]] = Field(
        None,
        description="on a slowly rendering page, the probe's time (time_s: the earlier of its share of the "
        "run's budget, share_s, and its own budget, own_budget_s), the frame cost and the pace measured, and the "
        "instants and densified samples planned, kept and left out to fit it, with why (the rubric's instants "
        "first; probes/_density_time.py)",
    )
    note: str = Field(description="what the fake clock cannot show")


class DensityEvidenceV4(DensityEvidence):
    """Version 4, as stored before the longest baseline settled the claims: the same model
    (its fields are a subset of version 5's), kept so that stored runs still read."""

    probe = "density"
    evidence_version = "4"
