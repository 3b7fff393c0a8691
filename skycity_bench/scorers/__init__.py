"""Scorer registry: every module in this package registers its scorers with `@scorer`.

    @scorer("smoothness.frame_pacing", probes=("frame_pacing",))
    def frame_pacing(inp: ScoreInput) -> ItemScore: ...
"""

from __future__ import annotations

import importlib
import pkgutil
import threading

from .base import ItemScore, ScoreInput, ScorerSpec

_REGISTRY: dict[str, ScorerSpec] = {}
_loaded = False
_lock = threading.Lock()


def scorer(item_id: str, *, probes: tuple[str, ...], render=None):
    def deco(fn):
        _REGISTRY[item_id] = ScorerSpec(item_id=item_id, fn=fn, probes=tuple(probes), render=render)
        return fn
    return deco


def all_scorers() -> dict[str, ScorerSpec]:
    global _loaded
    if not _loaded:
        with _lock:
            if not _loaded:
                for m in pkgutil.iter_modules(__path__):
                    if m.name != "base" and not m.name.startswith("_"):
                        importlib.import_module(f"{__name__}.{m.name}")
                _loaded = True
    return dict(_REGISTRY)


__all__ = ["scorer", "all_scorers", "ItemScore", "ScoreInput", "ScorerSpec"]
