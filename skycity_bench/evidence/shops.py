"""Evidence of probes/shops/ (items shops.hover, shops.auto_display, shops.manual_priority,
shops.card_placement, shops.touch): raw figures of four fake-clock phases, judged only in
scorers/shops.py and scorers/_shop_manual_priority.py.

Fields with a default of None are written only when the probe has them (a shop that opened
a card has `placement`, one that did not has `canvas_card`; the first follow step has no
`step_ms`); `to_data` leaves the unwritten ones out, so the report holds what the probe
wrote. The check profile (check_steps.shops_step) runs the hover phase only: `auto`,
`manual` and `touch` are then absent.
"""

from __future__ import annotations

from typing import Any, Optional, Union

from pydantic import Field

from skycity_bench.common.errors import Cause
from skycity_bench.evidence.contract import Evidence, Part


class ShopPoint(Part):
    """A usable entry of the hook's getShops() (probes/shops/page.valid_shops)."""

    id: str
    name: str
    x: float = Field(description="CSS px in the viewport")
    y: float


class HookAnswer(Part):
    """One getActiveCard() call, read beside a decision as a cross-check only."""

    value: Any = Field(None, description="what it returned (written when the call succeeded)")
    error: Optional[str] = Field(None, description="why the call failed (written instead of value)")


class Point(Part):
    x: float
    y: float
    t_s: float = Field(description="demo seconds when the pointer (or finger) arrived")


class HoverPoint(Point):
    away: list[float] = Field(
        description="[x, y] where the pointer went to leave (the edge point furthest from every shop)"
    )


class Contrast(Part):
    ratio: float = Field(description="WCAG contrast ratio")
    method: str = Field(description="computed styles | pixels")
    fg: Optional[list[float]] = Field(None, description="text colour, RGB")
    bg: Optional[list[float]] = Field(None, description="backdrop colour, RGB")


class TextFigure(Part):
    text: str = Field(description="the text (first 40 characters)")
    font_px: Optional[float] = Field(description="computed font size, CSS px")
    contrast: Optional[Contrast]


class Placement(Part):
    """Where an opened DOM card sits and how readable it is (hover_touch.placement)."""

    rect: list[float] = Field(description="[x, y, w, h] of the card's elements together, CSS px")
    viewport: list[int] = Field(description="[width, height] CSS px")
    distance_px: float = Field(description="shop point to the nearest point of the card")
    distance_ratio: float = Field(description="distance_px over the viewport diagonal")
    min_font_px: Optional[float] = Field(description="smallest text size in the card")
    min_contrast: Optional[float] = Field(description="lowest contrast of its texts")
    texts: list[TextFigure] = Field(description="the card's texts (first 12)")


class ChangedBlob(Part):
    """The largest compact changed region between two frames (pixels.changed_blob)."""

    area: int = Field(description="changed px in it")
    rect: Optional[list[float]] = Field(description="[x, y, w, h] viewport px; None when nothing changed")
    fill: float = Field(description="area over its box")
    changed_share: float = Field(description="share of all compared pixels that changed")


class CanvasCard(Part):
    """No DOM card after a hover: what changed around the shop across the hover against an
    equal stretch without it (hover_touch._canvas_check)."""

    compared: bool = Field(description="false: no pixels to compare (see note)")
    note: Optional[str] = None
    scene_motion: Optional[ChangedBlob] = Field(None, description="change over an equal stretch, no input")
    across_hover: Optional[ChangedBlob] = Field(None, description="change between the hovered frame and after leaving")
    diff_level: Optional[int] = Field(None, description="a pixel changed when a channel moved more than this")
    distance_ratio: Optional[float] = Field(None, description="the changed box's centre to the shop, over the diagonal")
    screenshot: Optional[str] = Field(None, description="crop of the hovered frame at the changed box")


class FollowSummary(Part):
    """The pointer that followed the shop (follow.Follow.summary)."""

    steps: int
    max_lag_px: Optional[float] = Field(description="largest distance the shop got from the pointer in a step")
    path: list[list[Optional[float]]] = Field(description="[t_s, x, y] where the pointer went after each step")


class HoverShop(Part):
    """One shop's hover: pointer on its point, the card awaited, the pointer away, the card
    watched going (hover_touch.hover_phase)."""

    id: str
    name: str
    opened: Optional[bool] = Field(description="a card naming a shop showed; None: never on screen, not tried")
    reason: Optional[str] = Field(None, description="why it was not tried")
    opened_within_ms: Optional[float] = Field(
        None, description="ms after arriving at which the card was read; None: no card"
    )
    follow: Optional[FollowSummary] = None
    hovered: Optional[HoverPoint] = None
    hook_active_card_open: Optional[HookAnswer] = None
    text: Optional[str] = Field(None, description="the card's text")
    names_in_card: Optional[list[str]] = Field(None, description="shop ids the card's text names")
    placement: Optional[Placement] = None
    screenshot_open: Optional[str] = None
    unnamed_changes: Optional[list[str]] = Field(None, description="no card named a shop: texts that appeared")
    closed_after_css_transition: Optional[bool] = Field(
        None, description="the card was gone only after its CSS fade ran in real time"
    )
    hook_active_card_closed: Optional[HookAnswer] = None
    closed_after_ms: Optional[float] = Field(
        None, description="ms after leaving when the card was gone; None: still there after close_watched_ms"
    )
    close_watched_ms: Optional[float] = None
    canvas_card: Optional[CanvasCard] = None
    screenshot_stayed_open: Optional[str] = None


class HoverPhase(Part):
    per_shop: list[HoverShop]
    resets: int = Field(description="fresh pages opened (a card that stayed, or no free hover time left)")


class AutoInterval(Part):
    """A stretch of automatic-display samples showing cards that name one shop
    (auto_manual.intervals_from)."""

    shop_id: str = Field(description="the shop named, or 'ambiguous'")
    start_s: float = Field(description="first sample it was seen")
    end_s: float = Field(description="first sample it was no longer seen (the window's end + one step: clipped)")
    text: str
    rect: Optional[list[float]]
    names_in_card: list[str]
    duration_s: float
    clipped_start: bool = Field(description="showing at the window's first sample")
    clipped_end: bool = Field(description="still showing at its last")
    screenshot: Optional[str] = None
    hook_active_card: Optional[HookAnswer] = None
    screenshot_t_s: Optional[float] = None


class AutoPhase(Part):
    window_s: list[float] = Field(description="[start, end] demo seconds sampled without input")
    sample_interval_ms: float
    samples: int = Field(description="samples taken in the window")
    samples_expected: int
    intervals: list[AutoInterval]
    timeline: list[list[Any]] = Field(description="[t_s, shop id | 'ambiguous' | None] at each change (first 400)")


class CardSeen(Part):
    names: list[str] = Field(description="shop ids its text names")
    rect: list[float]


class PixelMatch(Part):
    """Where the look of the last step's hook point went (pixels.follow_residual)."""

    residual: Optional[list[float]] = Field(description="[dx, dy] where the pixels went minus where the hook says")
    score: Optional[float] = Field(description="normalised cross-correlation of the match (1 = identical)")
    texture: float = Field(description="grey std of the patch (a flat patch matches anywhere)")
    moved: Optional[list[float]] = Field(None, description="[dx, dy] the pixels moved")


class FollowStep(Part):
    """One fake-clock step of the pointer following the shop (follow.Follow.step)."""

    t_s: float
    step_ms: Optional[float] = Field(None, description="the step's length (absent on the first record)")
    pointer: Optional[list[float]] = Field(description="where the pointer was during the step")
    hook: Optional[list[float]] = Field(description="where getShops() says the shop is now; None: lost")
    lag_px: Optional[float] = Field(description="pointer to hook distance")
    on_screen: bool
    hook_error: Optional[str] = None
    cards: Optional[list[CardSeen]] = Field(None, description="shop cards showing now")
    under: Optional[dict[str, Any]] = Field(None, description="elementFromPoint at the pointer: {tag, id, cls}")
    pixels: Optional[PixelMatch] = None
    moved_to: Optional[list[float]] = Field(description="where the pointer went for the next step")


class AutoIntervalRef(Part):
    shop_id: str
    start_s: float
    end_s: float


class ManualPhase(Part):
    """A hover during an automatic card, the pointer following the shop for hold_s
    (auto_manual.manual_phase). `tested` false: `reason` says why nothing was tried."""

    tested: bool
    reason: Optional[str] = None
    auto_interval: Optional[AutoIntervalRef] = None
    user_shop: Optional[str] = None
    user_card_names: Optional[list[str]] = Field(None, description="shop ids the user's card may name")
    hold_s: Optional[float] = None
    auto_card_before_hover: Optional[list[str]] = None
    hovered: Optional[Point] = None
    hook_active_card: Optional[HookAnswer] = None
    text: Optional[str] = None
    steps: Optional[list[FollowStep]] = None
    follow: Optional[FollowSummary] = None
    screenshots: Optional[list[str]] = None


class TouchShop(Part):
    id: str
    opened: Optional[bool] = Field(description="a card naming a shop showed after the tap; None: not tried")
    reason: Optional[str] = None
    opened_within_ms: Optional[float] = None
    tapped: Optional[Point] = None
    text: Optional[str] = None
    names_in_card: Optional[list[str]] = None
    screenshot: Optional[str] = None
    hook_active_card: Optional[HookAnswer] = None


class TouchPage(Part):
    inner_size: list[int]
    ontouchstart: bool
    max_touch_points: int


class TouchPhase(Part):
    per_shop: list[TouchShop]
    resets: int
    page: TouchPage


class PhaseError(Part):
    """A later phase (manual, touch) that failed: the earlier phases' figures stand."""

    error: str
    cause: Optional[Cause] = Field(
        None, description="why it failed (common/errors.py Cause), set where the error was raised"
    )


class ShopsEvidence(Evidence):
    probe = "shops"
    # 3: typed; fields as in probe version 2
    evidence_version = "3"

    shops: list[ShopPoint] = Field(description="the hook's usable shops at load")
    hook_problems: list[str] = Field(description="why other entries of getShops() were not usable")
    hook_raw_count: Optional[int] = Field(description="entries getShops() returned")
    viewport: list[int] = Field(description="[width, height] CSS px")
    hover: HoverPhase
    auto: Optional[AutoPhase] = None
    manual: Optional[Union[ManualPhase, PhaseError]] = None
    touch: Optional[Union[TouchPhase, PhaseError]] = None
