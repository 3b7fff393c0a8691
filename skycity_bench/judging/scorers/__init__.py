"""Scorer registry: every module in this package registers its scorers with `@scorer`.

    @scorer("smoothness.frame_pacing", probes=("frame_pacing",), accepts={"frame_pacing": ("3",)})
    def frame_pacing(inp: ScoreInput) -> ItemScore: ...

A scorer module's thresholds are a pydantic model registered with
`scorer_settings("frame_pacing", Settings)`, in inputs/settings_registry.py (with this
package's discovery, when the package is imported): the scenario's `scorers.frame_pacing`
section is validated against it when the scenario is loaded (no defaults: a missing
threshold is an error there, never a literal fallback in code).
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar, overload

from pydantic import BaseModel

from skycity_bench.inputs.settings_registry import SCORER_SETTINGS
from skycity_bench.judging.scorers.scorer_api import ItemScore, ScoreInput, ScorerSpec

_REGISTRY: dict[str, ScorerSpec] = {}
_M = TypeVar("_M", bound=type[BaseModel])
_loaded = False
_lock = threading.Lock()


ScorerFn = Callable[[ScoreInput], ItemScore]
Renderer = Callable[[ScoreInput, ItemScore, Path], list[str]]


def scorer(
    item_id: str,
    *,
    probes: tuple[str, ...],
    render: Renderer | None = None,
    accepts: Mapping[str, Sequence[object]] | None = None,
) -> Callable[[ScorerFn], ScorerFn]:
    """Register `fn` as the scorer of rubric item `item_id`, reading the evidence of `probes`
    (in the versions `accepts` names), with an optional figure renderer."""

    def deco(fn: ScorerFn) -> ScorerFn:
        acc = {p: tuple(str(v) for v in vs) for p, vs in (accepts or {}).items()}
        unknown = set(acc) - set(probes)
        if unknown:
            raise ValueError(f"scorer {item_id}: accepts names probes it does not read: {sorted(unknown)}")
        _REGISTRY[item_id] = ScorerSpec(item_id=item_id, fn=fn, probes=tuple(probes), render=render, accepts=acc)
        return fn

    return deco


@overload
def scorer_settings(section: str) -> Callable[[_M], _M]: ...
@overload
def scorer_settings(section: str, model: _M) -> _M: ...
def scorer_settings(section: str, model: _M | None = None) -> Callable[[_M], _M] | _M:
    """Register the thresholds model of the scenario's `scorers.<section>`: called with the
    model, or as a class decorator `@scorer_settings("framing")`."""

    def register(m: _M) -> _M:
        SCORER_SETTINGS.register(section, m)
        return m

    return register if model is None else register(model)


def all_scorer_settings() -> dict[str, type[BaseModel]]:
    return SCORER_SETTINGS.models()


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


SCORER_SETTINGS.set_discovery(all_scorers)

__all__ = ["scorer", "scorer_settings", "all_scorers", "all_scorer_settings", "ItemScore", "ScoreInput", "ScorerSpec"]
