"""Probe registry: every module in this package registers its probe with `@probe`.

from skycity_bench.probes import probe

@probe("frame_pacing", order=10, settings=Settings)
async def collect(ctx): ...

The probe's `Settings` (its section `probes.<name>` of the scenario) is registered with
inputs/settings_registry.py at the same time, and this package's discovery with it, so the
scenario validates its `probes:` sections against every probe's model once this package is
imported.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading

from skycity_bench.common.errors import UserError
from skycity_bench.inputs.settings_registry import PROBE_SETTINGS
from skycity_bench.probes.probe_api import NoSettings, ProbeContext, ProbeSpec

_REGISTRY: dict[str, ProbeSpec] = {}
_loaded = False
_lock = threading.Lock()  # tests load the registry from several threads at once


def probe(name: str, **kw):
    def deco(fn):
        spec = ProbeSpec(name=name, collect=fn, **kw)
        _REGISTRY[name] = spec
        PROBE_SETTINGS.register(name, spec.settings)
        return fn

    return deco


class _Registry:
    def _load(self) -> None:
        global _loaded
        if _loaded:
            return
        with _lock:
            if _loaded:
                return
            for m in pkgutil.iter_modules(__path__):
                if m.name != "base" and not m.name.startswith("_"):
                    importlib.import_module(f"{__name__}.{m.name}")
            _loaded = True

    def names(self) -> list[str]:
        self._load()
        return [s.name for s in sorted(_REGISTRY.values(), key=lambda s: (s.order, s.name))]

    def get(self, name: str) -> ProbeSpec:
        self._load()
        if name not in _REGISTRY:
            raise UserError(f"unknown probe {name!r}; known probes: {', '.join(self.names())}")
        return _REGISTRY[name]

    def select(self, names: list[str] | None) -> list[ProbeSpec]:
        """The probes to run, in run order; `names` None means all."""
        self._load()
        if not names:
            return [self.get(n) for n in self.names()]
        chosen = {self.get(n).name for n in names}
        chosen |= {s.name for s in _REGISTRY.values() if set(s.companion_of) & chosen}
        return [self.get(n) for n in self.names() if n in chosen]


registry = _Registry()
PROBE_SETTINGS.set_discovery(registry._load)

__all__ = ["probe", "registry", "ProbeContext", "ProbeSpec", "NoSettings"]
