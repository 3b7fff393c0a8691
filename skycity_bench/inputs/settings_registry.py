"""The settings models of the scenario's `probes:` and `scorers:` sections, by section name.

The scenario (inputs/scenario.py) validates those sections, but their models belong to the
phases above it: each probe's `Settings` is registered by the `@probe` decorator
(probes/__init__.py) and each scorer module's thresholds by `scorer_settings`
(judging/scorers/__init__.py), when their modules are imported. Each of those two packages
also registers, when it is imported, its discovery: the function that imports all of its
modules, so a lookup here sees every model of the package and not only those of the
modules imported so far. The inputs layer thus never imports the probes or the judging.

Whatever runs probes or scorers has imported their package (the runner imports both, and
the command line imports the runner), so a scenario loaded there has every section checked
(`loaded`). A process that imported neither (a unit test of the analysis, a benchmark that
drives a page) checks the sections it reads when it reads them; a model can be registered
below the probes for a reader that must not import them (evidence/timeline.py: the
timeline probe's settings, which the camera scorer reads).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from pydantic import BaseModel


class SectionsNotLoaded(RuntimeError):
    """A section's models were asked for before the package that registers them was imported
    (a programming error: the caller imports skycity_bench.probes and
    skycity_bench.judging.scorers before loading a scenario)."""


class Sections:
    """The models of one kind of scenario section (`probes` or `scorers`), by name."""

    def __init__(self, kind: str, noun: str, package: str):
        self.kind = kind  # the scenario's key: "probes" or "scorers"
        self.noun = noun  # what one section is, for messages: "probe", "scorer settings section"
        self.package = package  # the package that registers them, for the not-loaded message
        self._models: dict[str, type[BaseModel]] = {}
        self._discover: Callable[[], object] | None = None
        self._lock = threading.Lock()

    def register(self, name: str, model: type[BaseModel]) -> None:
        """The model of section `name`; a second, different model for the same name is refused."""
        with self._lock:
            known = self._models.get(name)
            if known is not None and known is not model:
                raise ValueError(f"{self.kind}.{name}: settings registered twice ({known.__name__}, {model.__name__})")
            self._models[name] = model

    def set_discovery(self, discover: Callable[[], object]) -> None:
        """The function that imports every module of the registering package (idempotent)."""
        self._discover = discover

    def loaded(self) -> bool:
        """Whether the registering package is imported (its discovery known): then `models`
        holds every section's model."""
        return self._discover is not None

    def models(self) -> dict[str, type[BaseModel]]:
        """Every section's model, after the registering package's discovery ran."""
        if self._discover is None:
            raise SectionsNotLoaded(
                f"the scenario's {self.kind} sections cannot be listed: {self.package} is not imported"
            )
        self._discover()
        return dict(self._models)

    def get(self, name: str) -> type[BaseModel] | None:
        """Section `name`'s model (registered already, or found by the discovery), or None
        when there is no such section."""
        model = self._models.get(name)
        return model if model is not None else self.models().get(name)


PROBE_SETTINGS = Sections("probes", "probe", "skycity_bench.probes")
SCORER_SETTINGS = Sections("scorers", "scorer settings section", "skycity_bench.judging.scorers")

__all__ = ["PROBE_SETTINGS", "SCORER_SETTINGS", "Sections", "SectionsNotLoaded"]
