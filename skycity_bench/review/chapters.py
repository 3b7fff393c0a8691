"""Chapter marks on the reviewers' recording: the moments a reviewer wants
to jump to, read from the (blind) report.json only — nothing here judges anything.

- the tour's phases: where the hook's getState said the phase changed (camera.phases'
  evidence, else the timeline probe's raw `phases`): the demo's claim, sampled at the
  timeline's rate;
- the dense window (动态密度 "第 20–35 秒"): the scenario's `dense_window_s` as run;
- each automatic shop card: the intervals the shops probe saw without input
  (shops.auto_display's evidence, else the probe's raw `auto.intervals`);
- the city name's first appearance: the first of the closing-shot checks at which the
  city-name scorer found it (camera.ending's `city_name_check`: seen_at_s / drawn_at_s).
  The bench looks for the name only in the last seconds of the tour, so "first" means the
  first check that saw it, and the page says where the checks began.

Every moment is in demo seconds under the fake clock. The recording's frame i is the demo at
i / fps (probes/recording.py), so a demo second is the same second of the video. Shop cards
come from the shops probe's own fake-clock pass over the same demo (no input in that window),
not from the recording's pass: the caption says so.

A moment the report does not give (its probe untested, failed, or not run) is not guessed:
it is left out and listed under `unknown` with the report's reason, for the page to show.
Each item's evidence links to its moments through `item_moments`.
"""

from __future__ import annotations

from typing import Any, Optional

PHASES_ITEM = "camera.phases"
MOTION_ITEM = "camera.motion"
ENDING_ITEM = "camera.ending"
AUTO_ITEM = "shops.auto_display"
MANUAL_ITEM = "shops.manual_priority"
MAX_NAME = 40  # a demo's phase or shop name as shown on a mark (the demo wrote it: kept short)


def _num(v: Any) -> Optional[float]:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if f == f and f >= 0 else None  # NaN and negative times are no moment


def _item(report: dict, iid: str) -> dict:
    return (report.get("items") or {}).get(iid) or {}


def _ev(report: dict, iid: str) -> dict:
    return _item(report, iid).get("evidence") or {}


def _probe_data(report: dict, name: str) -> dict:
    rec = (report.get("probes") or {}).get(name) or {}
    return (rec.get("data") or {}) if isinstance(rec, dict) else {}


def _why(report: dict, iid: str, probe: str) -> str:
    """Why a moment is unknown: the item's status and reason, or the probe's error."""
    it = _item(report, iid)
    rec = (report.get("probes") or {}).get(probe) or {}
    reason = (it.get("evidence") or {}).get("reason") or (rec.get("error") if isinstance(rec, dict) else None)
    status = it.get("status") or ("not run" if not rec else rec.get("status") or "no data")
    if not reason and status not in ("untested", "not run"):
        return f"{iid} {status}, but the report gives no time for it"
    return f"{iid} {status}" + (f": {reason}" if reason else "")


def _mark(
    t: float,
    kind: str,
    label: str,
    label_en: str,
    *,
    end: Optional[float] = None,
    items: tuple[str, ...] = (),
    key: str = "",
) -> dict:
    return {
        "t_s": round(t, 3),
        "end_s": round(end, 3) if end is not None else None,
        "kind": kind,
        "label": label,
        "label_en": label_en,
        "items": list(items),
        "key": key or f"{kind}-{t:g}",
    }


def _phases(report: dict) -> tuple[Optional[list[dict]], Optional[float]]:
    """(marks, reached_s): the scored item's phases; else those a stopped timeline pass saw
    before it stopped (`reached_s`: later phase changes are unknown)."""
    ph, reached = _ev(report, PHASES_ITEM).get("phases"), None
    if not ph:
        data = _probe_data(report, "timeline")
        ph, reached = data.get("phases"), _num(data.get("reached_s"))
    out = []
    for i, p in enumerate(ph or []):
        t = _num((p or {}).get("start_s")) if isinstance(p, dict) else None
        if t is not None:
            name = str(p.get("phase"))[:MAX_NAME]
            out.append(
                _mark(
                    t,
                    "phase",
                    f"阶段 {name}",
                    f"phase {name} begins (the demo's claim)",
                    items=(PHASES_ITEM,),
                    key=f"phase-{i}",
                )
            )
    return out or None, reached


def _dense_window(report: dict) -> Optional[dict]:
    w = ((report.get("scenario") or {}).get("effective") or {}).get("dense_window_s")
    if not (isinstance(w, (list, tuple)) and len(w) == 2):
        return None
    a, b = _num(w[0]), _num(w[1])
    if a is None or b is None or b < a:
        return None
    return _mark(
        a,
        "density",
        f"密度窗口 {a:g}–{b:g} 秒",
        f"the density window, {a:g}–{b:g} s",
        end=b,
        items=("density.count", "density.categories", "density.behavior"),
        key="density",
    )


def _shop_cards(report: dict) -> Optional[list[dict]]:
    ev = _ev(report, AUTO_ITEM)
    intervals = ev.get("intervals")
    if intervals is None:
        intervals = (_probe_data(report, "shops").get("auto") or {}).get("intervals")
    if intervals is None:
        return None
    out = []
    for i, iv in enumerate(intervals):
        t = _num((iv or {}).get("start_s"))
        if t is None:
            continue
        shop = str(iv.get("shop_id") or "?")[:MAX_NAME]
        end = _num(iv.get("end_s"))
        out.append(
            _mark(
                t,
                "shop",
                f"自动卡片 {shop}",
                f"automatic card: {shop}"
                + (f", until {end:g} s" if end is not None else "")
                + " (the shops probe's pass)",
                end=end,
                items=(AUTO_ITEM,),
                key=f"shop-{i}",
            )
        )
    return out


def _city_name(report: dict) -> tuple[Optional[dict], Optional[str]]:
    """(mark, None) or (None, why it is unknown / not seen)."""
    ev = _ev(report, ENDING_ITEM)
    check = ev.get("city_name_check") or {}
    checks = ev.get("name_checks") or _probe_data(report, "timeline").get("name_checks") or []
    first_check = min(
        (t for t in (_num(c.get("t_s")) for c in checks if isinstance(c, dict)) if t is not None), default=None
    )
    from_s = f"; the bench looks for it from {first_check:g} s" if first_check is not None else ""
    if not check:
        return None, _why(report, ENDING_ITEM, "timeline")
    times = check.get("seen_at_s") or check.get("drawn_at_s") or []
    ts = sorted(t for t in (_num(x) for x in times) if t is not None)
    if not ts:
        return None, f"{ENDING_ITEM}: {check.get('reason') or check.get('code') or 'the city name was not seen'}"
    how = "page text" if check.get("seen_at_s") else "drawn on a canvas"
    return _mark(
        ts[0], "city", "城市名首次出现", f"the city name first seen ({how}{from_s})", items=(ENDING_ITEM,), key="city"
    ), None


def recording_duration(report: dict) -> Optional[float]:
    """Seconds the recording holds (a truncated pass holds 0–at_s only); None when unknown."""
    rec = _probe_data(report, "recording")
    cut = rec.get("truncated") or {}
    return _num(cut.get("at_s")) if cut else _num(rec.get("duration_s"))


def chapters(report: dict) -> dict:
    """{marks: [...] by time, unknown: [{what, what_en, why}], duration_s, recording}.
    A mark: {t_s, end_s, kind (phase|density|shop|city), label, label_en, items, key,
    beyond (past the end of the recording)}."""
    marks: list[dict] = []
    unknown: list[dict] = []
    ph, reached = _phases(report)
    if ph:
        marks += ph
    if not ph or reached is not None:
        unknown.append(
            {
                "what": "阶段" if not ph else f"{reached:g} 秒后的阶段",
                "what_en": "the tour's phases" if not ph else f"phase changes after {reached:g} s",
                "why": _why(report, PHASES_ITEM, "timeline"),
            }
        )
    dw = _dense_window(report)
    if dw:
        marks.append(dw)
    else:
        unknown.append(
            {
                "what": "密度窗口",
                "what_en": "the density window",
                "why": "the report's scenario names no dense_window_s",
            }
        )
    cards = _shop_cards(report)
    if cards:
        marks += cards
    else:
        unknown.append(
            {
                "what": "自动卡片",
                "what_en": "the automatic shop cards",
                "why": (
                    f"{AUTO_ITEM}: no card was seen in the window without input"
                    if cards == []
                    else _why(report, AUTO_ITEM, "shops")
                ),
            }
        )
    city, why = _city_name(report)
    if city:
        marks.append(city)
    else:
        unknown.append({"what": "城市名", "what_en": "the city name's first appearance", "why": why})
    dur = recording_duration(report)
    for m in marks:
        m["beyond"] = dur is not None and m["t_s"] > dur
    marks.sort(key=lambda m: (m["t_s"], m["key"]))
    return {
        "marks": marks,
        "unknown": unknown,
        "duration_s": dur,
        "recording": _probe_data(report, "recording").get("file"),
    }


def item_moments(report: dict, marks: list[dict]) -> dict[str, list[dict]]:
    """item id → the moments its evidence names ({t_s, label, beyond}): the chapter marks it
    is tied to, and the times its own evidence gives (a cut, the density sample N was read
    at, the automatic card a manual hover was tried during)."""
    out: dict[str, list[dict]] = {}

    def add(iid: str, t: Optional[float], label: str, beyond: bool) -> None:
        if t is None:
            return
        lst = out.setdefault(iid, [])
        if all(abs(m["t_s"] - t) > 1e-6 for m in lst):
            lst.append({"t_s": round(t, 3), "label": label, "beyond": beyond})

    dur = recording_duration(report)
    past = lambda t: dur is not None and t > dur
    for m in marks:
        for iid in m["items"]:
            add(iid, m["t_s"], m["label_en"], m["beyond"])
    for c in _ev(report, MOTION_ITEM).get("cuts") or []:
        t = _num((c or {}).get("t_s"))
        add(MOTION_ITEM, t, f"cut ({c.get('kind') or 'cut'})", t is not None and past(t))
    for iid, key, label in (
        ("density.count", "N_at_s", "the sample N was read at"),
        ("density.categories", "C_at_s", "the sample C was read at"),
    ):
        t = _num(_ev(report, iid).get(key))
        add(iid, t, label, t is not None and past(t))
    ai = _ev(report, MANUAL_ITEM).get("auto_interval") or {}
    t = _num(ai.get("start_s"))
    add(
        MANUAL_ITEM,
        t,
        f"the automatic card ({ai.get('shop_id')}) the hover was tried during; the hover itself "
        "is not in the recording",
        t is not None and past(t),
    )
    for lst in out.values():
        lst.sort(key=lambda m: m["t_s"])
    return out


__all__ = ["chapters", "item_moments", "recording_duration"]
