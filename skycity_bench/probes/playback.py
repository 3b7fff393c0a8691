"""Playback (items packaging.autoplay and packaging.pause_resume_replay).

Autoplay — REAL time, on purpose: "plays by itself within 3 s" is a claim about the wall
clock a screen recorder sees, and real time also moves what the fake clock cannot drive
(CSS animations, video). No input of any kind is sent. browser/js/media_probe.js, injected
before any page script, records media elements asked to play, audio contexts and what feeds
their destination; the key and click handlers the page registered are read from the
browser's own listener table after the last frame (browser/input_handlers.py). Frames are
taken at `autoplay_times_s` after t = 0 (the first animation frame after load); the scorer judges how much changed and how far a
change travelled (evidence/playback.py scene_moves with `moving_scene`, the autoplay
scorer's rule: a sparse scene's one mover travels, a spinner does not).

When the scene stood still by that rule, two arms of the same length say whether it waits
for a click: the control goes on watching the same page without input, and a second page,
loaded fresh and left alone for as long, has its centre clicked and is watched at the same
offsets. Only a scene that moved after the click and not in the control is click-to-start;
one that began to move by itself is a late start. (Diagnostic only: the verdict comes from
the no-input frames.)

Pause / resume / replay — fake clock (deterministic frames for the SSIM comparison, and
fast). Driven through the hook when it has pause, resume and replay, and by keyboard when the
scenario enables it (`keyboard: true`), each on its own fresh page (probes/_cycle.py). The
keyboard way is not tried on a page that registered no key handler but click handlers by the
end of its load (browser/input_handlers.py, the browser's own listener table): keys cannot
pause it, and its controls may. A way that cannot be tried is recorded as untested with the reason.
"""

from __future__ import annotations

import asyncio

import cv2
from pydantic import BaseModel, ConfigDict, Field

from skycity_bench.browser.input_handlers import CLICK_EVENTS, KEY_EVENTS, input_handlers
from skycity_bench.browser.session import js
from skycity_bench.common.errors import Cause, DemoHang, DemoSlow
from skycity_bench.evidence.playback import PlaybackEvidence, scene_moves
from skycity_bench.inputs.scenario import Viewport
from skycity_bench.probes import probe
from skycity_bench.probes._cycle import run_cycles
from skycity_bench.probes._pixel_compare import change_stats, changed_mask, travel_stats


class MovingScene(BaseModel):
    """The thresholds of a scene that plays by itself (evidence/playback.py scene_moves, the
    rule the autoplay scorer judges with, from its own `scorers.playback` fields of the same
    values; the scenario file writes them once)."""

    model_config = ConfigDict(extra="forbid")

    min_changed_cells: int = Field(ge=1, description="grid cells (16x9) that must change")
    min_changed_share: float = Field(ge=0, le=1, description="share of pixels that must change")
    min_travel_px: int = Field(
        ge=1, description="or: a change travelled this far (CSS px; _pixel_compare.travel_stats)"
    )


class Settings(BaseModel):
    """What steers collection (the scenario's probes.playback); the thresholds the frames are
    judged with are scorers.playback. The click diagnostic's rule and which replay frames are
    kept are the probe's own settings, of the same values as the scorer's rules."""

    model_config = ConfigDict(extra="forbid")

    width: int = Field(ge=320, description="viewport of this probe, CSS px")
    height: int = Field(ge=240)
    # autoplay (real time)
    autoplay_times_s: list[float] = Field(min_length=2, description="frames at these seconds after t = 0, no input")
    travel_link_px: int = Field(
        ge=0, description="changes this close (CSS px) are one spot when travel is measured (travel_stats)"
    )
    click_diagnostic: bool = Field(description="when the scene stood still, a no-input control and a clicked arm")
    moving_scene: MovingScene = Field(description="below this the scene stood still (the click diagnostic)")
    arm_times_s: list[float] = Field(
        min_length=1, description="both arms' frames, real seconds after the last no-input frame (and the click)"
    )
    # pause / resume / replay (fake clock)
    keyboard: bool = Field(description="also drive pause/resume/replay by keyboard")
    pause_key: str
    resume_key: str
    replay_key: str
    first_play_times_s: list[float]
    keep_replay_below_ssim: float = Field(ge=0, le=1, description="replay frames this unlike the first play are kept")
    cycles: int = Field(ge=1, le=5)
    settle_s: float = Field(ge=0, description="demo time for a pause to take effect before the hold starts")
    pause_hold_s: float = Field(gt=0)
    resume_s: float = Field(gt=0)
    ssim_width: int = Field(ge=64)


def close_stopped(ctx, why: str) -> PlaybackEvidence:
    """The autoplay part it finished, when the budget stopped the probe after it: autoplay
    keeps its verdict, pause/resume/replay is untested with the reason."""
    s = ctx.settings
    stopped = {"untested": f"{why}: stopped before pause/resume/replay was tried", "cause": Cause.BUDGET.value}
    ways = {w: {"way": w, **stopped} for w in ("hook", "keyboard")}
    if not s.keyboard:
        ways["keyboard"] = _keyboard_off()
    return PlaybackEvidence.model_validate(
        {
            "viewport": [s.width, s.height],
            "autoplay": ctx.kept["autoplay"],
            "pause_resume_replay": {"hook_methods": [], "hook_has_time": False, "ways": ways},
        }
    )


def _keyboard_off() -> dict:
    return {
        "way": "keyboard",
        "untested": "the scenario does not enable keyboard control (probes.playback.keyboard)",
        "cause": Cause.NOT_RUN.value,
    }


def _deaf_with_controls(heard: list[dict]) -> bool:
    """The page hears no key but has click or tap handlers: keys cannot pause it, and its
    controls (buttons, a click on the scene) may, which the bench does not press. A page with
    neither is still tried by keyboard: nothing it has can pause it, and the frames show so."""
    types = {h["type"] for h in heard}
    return not types & KEY_EVENTS and bool(types & CLICK_EVENTS)


def _deaf(heard: list[dict]) -> dict:
    clicks = sorted({f"{h['target']}:{h['type']}" for h in heard})
    return {
        "way": "keyboard",
        "untested": "the page listens to no key (no keydown, keyup or keypress handler on the window or in "
        f"the document after load); its click handlers ({', '.join(clicks[:6])}) may pause it, which the "
        "bench does not press",
        "cause": Cause.PAGE.value,
        "input_handlers": heard[:20],
    }


def _budget(sc) -> float:
    return 90 + 3 * sc.timeouts.load_s + sc.timeouts.probe_grace_s


@probe(
    "playback",
    realtime=True,
    order=30,
    settings=Settings,
    evidence=PlaybackEvidence,
    description="autoplay without input (real time, sound instrumentation); pause/resume/replay (fake clock)",
    budget=_budget,
    close_stopped=close_stopped,
)
async def collect(ctx) -> PlaybackEvidence:
    s = ctx.settings
    vp = Viewport(width=s.width, height=s.height)
    data = {"viewport": [s.width, s.height], "autoplay": await _autoplay(ctx, vp)}
    data["pause_resume_replay"] = await _cycles(ctx, vp)
    return PlaybackEvidence.model_validate(data)


def _save(ctx, stem: str, img) -> str:
    """An evidence frame for people to look at (JPEG: the measurements come from the
    lossless screenshots, never from these files)."""
    p, rel = ctx.file(f"playback/{stem}.jpg")
    cv2.imwrite(str(p), img, [cv2.IMWRITE_JPEG_QUALITY, 85])
    return rel


async def _look(dp, times_s: list[float]) -> tuple[list[dict], list]:
    """Screenshots at these real seconds of the page's clock, and when each was asked for."""
    frames, shots = [], []
    for t in times_s:
        await asyncio.sleep(max(0.0, t - await dp.now_s()))  # real time, see the module docstring
        frames.append({"t_s": round(await dp.now_s(), 3)})
        shots.append(await dp.frame())
    return frames, shots


def _watched(frames: list[dict], shots: list, link_px: int) -> dict:
    """What changed from the first of these frames (the union against it) and how far a
    change travelled from frame to frame (changes `link_px` apart joined)."""
    first = shots[0]
    union = changed_mask(first, shots[1])
    for img in shots[2:]:
        union |= changed_mask(first, img)
    pairs = [changed_mask(a, b) for a, b in zip(shots, shots[1:])]
    return {"frames": frames, "union": change_stats(union), "travel": travel_stats(pairs, link_px)}


async def _autoplay(ctx, vp) -> dict:
    s = ctx.settings
    dp = await ctx.open_page(viewport=vp, init_scripts=[js("media_probe.js")])
    try:
        frames, shots = await _look(dp, s.autoplay_times_s)
        out = _watched(frames, shots, s.travel_link_px)
        out["changes"] = [change_stats(changed_mask(shots[0], img)) for img in shots[1:]]
        out["sound"] = await dp.evaluate(
            "__SKYCITY__.media ? __SKYCITY__.media.report() : null", what="reading the media probe"
        )
        out["input_handlers"] = (await input_handlers(dp))[:50]
        out["dialogs"], out["page_errors"] = dp.events.dialogs[:10], dp.events.page_errors[:10]
        out["files"] = [_save(ctx, "autoplay-first", shots[0]), _save(ctx, "autoplay-last", shots[-1])]
        ctx.keep("autoplay", out)  # the verdict's frames: the arms below are diagnostics
        if not s.click_diagnostic or scene_moves(out, s.moving_scene):
            return out
        end = s.autoplay_times_s[-1]
        look = [end + x for x in s.arm_times_s]
        frames, more = await _look(dp, look)  # the control: the same page, still no input
        out["control"] = _watched([out["frames"][-1], *frames], [shots[-1], *more], s.travel_link_px)
    finally:
        await dp.close()
    out["clicked"] = await _clicked_arm(ctx, vp, end, look)
    return out


async def _clicked_arm(ctx, vp, end: float, look: list[float]) -> dict:
    """A fresh page left alone until the control arm's start, its centre clicked, then
    watched at the control's offsets: the two arms differ only by the click."""
    dp = await ctx.open_page(viewport=vp, init_scripts=[js("media_probe.js")])
    try:
        frames, shots = await _look(dp, [end])
        await dp.call(dp.page.mouse.click(vp.width / 2, vp.height / 2), 5, "clicking the centre")
        more_frames, more = await _look(dp, look)
        out = _watched(frames + more_frames, shots + more, ctx.settings.travel_link_px)
        out["files"] = [_save(ctx, "autoplay-after-click", more[-1])]
        return out
    finally:
        await dp.close()


async def _way(dp, way: str, s, has_time: bool, saver, keep_below: float) -> dict:
    """One way's cycles; a page that was too slow for its budget or hung leaves that way
    untested with the reason and the page's clock log (slow and hung told apart),
    so the other way still counts."""
    try:
        heard = await input_handlers(dp) if way == "keyboard" else None
        if heard is not None and _deaf_with_controls(heard):
            return _deaf(heard)
        out = await run_cycles(dp, way, s, has_time, saver, keep_below)
        return out if heard is None else {**out, "input_handlers": heard[:20]}
    except (DemoSlow, DemoHang) as e:
        return {"way": way, "untested": str(e), "cause": e.cause.value, "clock": dp.clock.to_json()}


async def _open_pages(ctx, vp, n: int) -> tuple:
    """n fresh fake-clock pages, padded with None to two; when one cannot be opened the
    others are closed and its error raised. One after the other: a page's load ends with its
    first frame, and on software WebGL that frame compiles every shader; two pages compiling
    at once (three with another run beside) took the shadow-map room's first frame past the
    load timeout, where one page alone took a few seconds. A canvas demo loads in well under
    a second, so little is lost."""
    got: list = []
    try:
        for _ in range(n):
            got.append(await ctx.open_page(viewport=vp, fake_clock=True))
    except BaseException:
        for p in got:
            await p.close()
        raise
    return (*got, *[None] * (2 - n))


async def _cycles(ctx, vp) -> dict:
    """Both ways side by side, each on its own page: on the fake clock a page only works
    while the bench drives it, so the two hardly compete (the autoplay part, in real
    time, has finished before this starts)."""
    s = ctx.settings
    keep_below = s.keep_replay_below_ssim  # replay frames kept as evidence
    # Both ways' pages, loaded one after the other (_open_pages)
    dp, kp = await _open_pages(ctx, vp, 2 if s.keyboard else 1)
    try:
        desc = await dp.hook.describe()
    except BaseException:
        for p in (dp, kp):
            if p is not None:
                await p.close()
        raise
    methods = {k for k, v in (desc.value or {}).items() if v == "function"} if desc.ok else set()
    names = ctx.scenario.hook.methods
    missing = [m for m in ("pause", "resume", "replay") if names[m] not in methods]
    has_time = names["getState"] in methods

    def saver(name, img):
        return _save(ctx, name, img)

    async def by_hook() -> dict:
        try:
            if desc.ok and not missing:
                return await _way(dp, "hook", s, has_time, saver, keep_below)
            return {
                "way": "hook",
                "untested": (desc.error if not desc.ok else f"the hook has no {', '.join(missing)}()")
                + ": cannot drive pause/resume/replay by hook",
                "cause": (desc.cause or Cause.PAGE).value,
            }
        finally:
            await dp.close()

    async def by_keyboard() -> dict:
        if not s.keyboard:
            return _keyboard_off()
        try:
            return await _way(kp, "keyboard", s, has_time, saver, keep_below)
        finally:
            await kp.close()

    hook, keyboard = await asyncio.gather(by_hook(), by_keyboard())
    return {"hook_methods": sorted(methods), "hook_has_time": has_time, "ways": {"hook": hook, "keyboard": keyboard}}
