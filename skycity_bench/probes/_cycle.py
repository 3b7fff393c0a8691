"""The pause / resume / replay cycle of the playback probe, driven one way ("hook" or
"keyboard") on a fresh page under the fake clock (deterministic: the same demo at the same
demo time gives the same frame, so a replayed frame can be compared with the first play's).

Per cycle it records figures only; the scorer (scorers/pause_resume_replay.py) applies the
scenario's thresholds:
  pause   frames `settle_s` after pausing and `pause_hold_s` later: changed share/cells
          (identical frames = everything stopped: camera AND objects), the hook's time
          before and after (when getState exists);
  resume  `resume_s` later: changed share (frames move again), hook time advance;
  replay  at replay + each first-play time: SSIM against the first play's frames at that
          time and one frame either side (the replay may start up to a frame off t = 0).
Only pictures at given times count here, so on a slow renderer the clock moves in coarse
steps (DemoPage.run_for(picture_only=True)), and in its seeks on a fast page too
where the demo's clock is checked (DemoPage.seek); `clock` in the evidence says how slow the
page was, how it was stepped and whether the demo's own clock kept up.
"""

from __future__ import annotations

from skycity_bench.probes._pixel_compare import change_stats, changed_mask, ssim

FRAME_MS = 1000 / 60


async def _state_time(dp, use_hook: bool):
    if not use_hook:
        return None
    st = await dp.hook.call("getState")
    if st.ok and isinstance(st.value, dict) and isinstance(st.value.get("time"), (int, float)):
        return float(st.value["time"])
    return None


class Driver:
    """Sends pause / resume / replay by hook calls or key presses; records what answered."""

    def __init__(self, dp, way: str, settings):
        self.dp, self.way, self.s = dp, way, settings
        self.calls: list[dict] = []

    async def send(self, action: str) -> None:
        if self.way == "hook":
            r = await self.dp.hook.call(action)
            if not r.ok:
                self.calls.append({"action": action, "error": r.error})
        else:
            key = {"pause": self.s.pause_key, "resume": self.s.resume_key, "replay": self.s.replay_key}[action]
            await self.dp.call(self.dp.page.keyboard.press(key), 5, f"pressing {key}")


async def first_play(dp, settings) -> dict[float, list]:
    """Frames of the first play at each of settings.first_play_times_s, with a frame either side."""
    frames: dict[float, list] = {}
    for t in settings.first_play_times_s:
        await dp.seek(t - FRAME_MS / 1000, picture_only=True)
        shots = [await dp.frame()]
        for _ in range(2):
            await dp.run_for(FRAME_MS, picture_only=True)
            shots.append(await dp.frame())
        frames[t] = shots
    return frames


def _best_match(shot, refs, width: int) -> dict:
    scores = [ssim(r, shot, width) for r in refs]
    best = max(range(len(scores)), key=lambda i: (scores[i]["ssim"], scores[i]["worst_block"]))
    return {**scores[best], "offset_frames": best - 1}


async def run_cycles(dp, way: str, settings, use_hook_time: bool, save, keep_below: float) -> dict:
    """Play first, then `cycles` x (pause, hold, resume, replay). `save(name, img)` stores an
    evidence frame and returns its file name; replay frames under `keep_below` SSIM
    (probes.playback.keep_replay_below_ssim) are saved in every cycle, the others in the
    first only."""
    drv = Driver(dp, way, settings)
    ref = await first_play(dp, settings)
    times = sorted(ref)
    base = change_stats(changed_mask(ref[times[0]][1], ref[times[-1]][1]))
    out: dict = {"way": way, "first_play_times_s": times, "first_play_change": base, "cycles": []}
    for k in range(settings.cycles):
        cyc: dict = {}
        t_before = await _state_time(dp, use_hook_time)
        await drv.send("pause")
        await dp.run_for(settings.settle_s * 1000, picture_only=True)
        p0, t0 = await dp.frame(), await _state_time(dp, use_hook_time)
        await dp.run_for(settings.pause_hold_s * 1000, picture_only=True)
        p1, t1 = await dp.frame(), await _state_time(dp, use_hook_time)
        cyc["pause"] = {**change_stats(changed_mask(p0, p1)), "hook_time": [t_before, t0, t1]}
        await drv.send("resume")
        await dp.run_for(settings.resume_s * 1000, picture_only=True)
        r1, t2 = await dp.frame(), await _state_time(dp, use_hook_time)
        cyc["resume"] = {**change_stats(changed_mask(p1, r1)), "hook_time": [t1, t2]}
        await drv.send("replay")
        start = await dp.now_s()
        rep = []
        for t in times:
            await dp.seek(start + t, picture_only=True)
            shot = await dp.frame()
            m = _best_match(shot, ref[t], settings.ssim_width)
            m.update({"t_s": t, "hook_time": await _state_time(dp, use_hook_time)})
            if k == 0 or m["ssim"] < keep_below:  # frames the scorer will call different: kept
                m["files"] = [save(f"{way}-first-{t:g}s", ref[t][1]), save(f"{way}-replay{k + 1}-{t:g}s", shot)]
            rep.append(m)
        cyc["replay"] = rep
        out["cycles"].append(cyc)
        if k == 0:
            out["pause_frames"] = [save(f"{way}-pause1-start", p0), save(f"{way}-pause1-end", p1)]
    if drv.calls:
        out["hook_errors"] = drv.calls[:10]
    out["clock"] = dp.clock.to_json()
    return out
