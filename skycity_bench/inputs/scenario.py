"""The scenario file: how the bench drives a demo (viewport, timing windows, hook names,
thresholds). Validated by pydantic; every error is turned into one line that names the
field and the problem (`UserError`), for the file and for CLI overrides alike.

Each probe may declare a `Settings` model for its own section under `probes:` (what steers
collection), and each scorer module one for its section under `scorers:` (the thresholds
it judges with, owned by the scorers: `rescore` re-judges stored evidence under them). The
models are registered in inputs/settings_registry.py by the probes and the scorers
themselves; the loader validates every section against its model, so a typo or a missing
setting is caught before any browser starts; the models have no defaults for what the file
must say.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from skycity_bench.common.errors import UserError
from skycity_bench.inputs.settings_registry import PROBE_SETTINGS, SCORER_SETTINGS, Sections

DEFAULT_SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "skycity.yaml"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Viewport(Strict):
    """The page's viewport in CSS pixels and its device scale factor."""

    width: int = Field(1920, ge=320, le=7680, description="CSS pixels")
    height: int = Field(1080, ge=240, le=4320, description="CSS pixels")
    device_scale_factor: float = Field(1.0, gt=0, le=4)

    @property
    def label(self) -> str:
        return f"{self.width}x{self.height}@{self.device_scale_factor:g}"


class HookNames(Strict):
    """Name of the hook object on window and of each of its methods (test-hook.md)."""

    object: str = Field("skyCityTest", pattern=r"^[A-Za-z_$][A-Za-z0-9_$]*$")
    methods: dict[str, str] = Field(
        default_factory=lambda: {
            m: m for m in ("getState", "pause", "resume", "replay", "getDynamicObjects", "getShops", "getActiveCard")
        }
    )
    call_timeout_s: float = Field(2.0, gt=0, le=60)

    @model_validator(mode="after")
    def _known_methods(self) -> HookNames:
        known = {"getState", "pause", "resume", "replay", "getDynamicObjects", "getShops", "getActiveCard"}
        unknown = set(self.methods) - known
        if unknown:
            raise ValueError(f"unknown hook method(s) {sorted(unknown)}; known: {sorted(known)}")
        for k in known - set(self.methods):
            self.methods[k] = k
        return self


class Timeouts(Strict):
    load_s: float = Field(20, gt=0, le=600)
    busy_wall_cap: float = Field(4, ge=1, le=30)
    probe_grace_s: float = Field(25, gt=0, le=600)
    # Fake-clock budgets from the measured frame cost (browser/clock_budget.py);
    # the reasons for the values are in scenarios/skycity.yaml.
    run_s: float = Field(900, gt=0, description="wall seconds a whole run may take, report written (`run --budget`)")
    finish_reserve_s: float = Field(25, ge=0, le=600, description="of run_s, kept for scoring and writing the report")
    min_share_s: float = Field(
        5, ge=0, le=600, description="a probe with less than this left of the run is not started"
    )
    frame_cost_frames: int = Field(5, ge=1, le=60)
    frame_cost_margin: float = Field(3.0, ge=1)
    advance_base_s: float = Field(10, gt=0, le=600)
    hang_s: float = Field(20, gt=0, le=600)
    hang_frames: float = Field(40, ge=1)
    gpu_drain_min_share: float = Field(0.5, gt=0, le=64)
    answer_margin: float = Field(3, ge=1)
    poll_s: float = Field(1.0, gt=0, le=60)
    clock_first_read_max_s: float = Field(5.0, gt=0, le=60)
    clock_read_min_s: float = Field(0.5, gt=0, le=60)
    advance_call_slack_s: float = Field(30, gt=0, le=600)
    coarse_above_ms: float = Field(50, gt=0)
    coarse_step_ms: int = Field(100, ge=17, le=1000)
    clock_keepup: float = Field(0.9, gt=0, le=1)
    coarse_checked_fast: bool = True


class Calibration(Strict):
    duration_s: float = Field(2, gt=0, le=30)
    expected_interval_ms: float = Field(16.667, gt=0)
    tolerance_ms: float = Field(0.5, gt=0)
    # rendering headroom (browser/render_headroom.py); defaults for scenarios stored in
    # reports written before it
    headroom_s: float = Field(3, gt=0, le=30)
    headroom_p95_ms: float = Field(20, gt=0)
    headroom_late_share: float = Field(0.02, ge=0, le=1)
    headroom_viewports: list[tuple[int, int]] = Field(
        default_factory=lambda: [(640, 360), (1280, 720), (1920, 1080), (2560, 1440)], min_length=1
    )


class Overlap(Strict):
    """`run --overlap pinned` (inputs/cpu_pinning.py): the fake-clock probes run during
    the real-time pacing run, on other cores than the pacing browser. What steers it; the
    perturbation thresholds it is judged with are `scorers.overlap`. No defaults: the
    reasons for the values are in scenarios/skycity.yaml."""

    pacing_cpus: int = Field(ge=1, le=64, description="cores of the pacing browser's own")
    min_cpus: int = Field(ge=2, le=1024, description="fewer CPUs in this process's mask: refused")
    calibration_s: float = Field(gt=0, le=30, description="blank-page rAF alone and beside the probes")
    repin_every_s: float = Field(gt=0, le=10, description="new processes and threads are pinned this often")


class Scenario(Strict):
    """Everything that decides how a demo is driven. Its hash goes into every report."""

    name: str = "skycity"
    viewport: Viewport = Field(default_factory=Viewport)
    duration_s: float = Field(60, gt=0, le=600, description="demo seconds played in real time")
    dense_window_s: tuple[float, float] = (20, 35)
    density_sample_times_s: list[float] = Field(default_factory=lambda: [20.0, 25.0, 30.0, 35.0])
    hook: HookNames = Field(default_factory=HookNames)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    calibration: Calibration = Field(default_factory=Calibration)
    # `run --overlap pinned` only; None in a scenario without it (the mode is then refused)
    # and in reports written before it existed (rescore reads their scenario back).
    overlap: Optional[Overlap] = None
    probes: dict[str, dict[str, Any]] = Field(default_factory=dict)
    scorers: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _windows(self) -> Scenario:
        a, b = self.dense_window_s
        if not 0 <= a < b:
            raise ValueError(f"dense_window_s must be [start, end] with 0 <= start < end, got {[a, b]}")
        return self

    def sha256(self) -> str:
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def probe_settings(self, name: str) -> Any:
        """This probe's validated settings (its `Settings` model)."""
        model = PROBE_SETTINGS.get(name)
        if model is None:
            raise UserError(f"unknown probe {name!r}; known probes: {', '.join(sorted(PROBE_SETTINGS.models()))}")
        return _validated(model, self.probes, name, "scenario: probes")

    def scorer_settings(self, section: str) -> Any:
        """The thresholds of the scorers' section `scorers.<section>`, validated."""
        model = SCORER_SETTINGS.get(section)
        if model is None:
            known = ", ".join(sorted(SCORER_SETTINGS.models()))
            raise UserError(f"no scorer settings section {section!r}; known: {known}")
        return _validated(model, self.scorers, section, "scenario: scorers")


def _validated(model: type[BaseModel], sections: dict[str, dict[str, Any]], name: str, where: str) -> Any:
    """Section `name` of `sections` validated against its model; a mistake is one line."""
    try:
        return model.model_validate(sections.get(name) or {})
    except ValidationError as e:
        raise UserError(_one_line(e, f"{where}.{name}")) from None


def _one_line(err: ValidationError, source: str) -> str:
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
    msg = first["msg"].removeprefix("Value error, ")
    more = f" (and {err.error_count() - 1} more)" if err.error_count() > 1 else ""
    return f"{source}: {loc}: {msg}{more}"


def parse_viewport(text: str) -> dict[str, int]:
    m = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", text or "")
    if not m:
        raise UserError(f"--viewport: expected WIDTHxHEIGHT such as 1280x720, got {text!r}")
    return {"width": int(m.group(1)), "height": int(m.group(2))}


def load_scenario(path: Path | str | None = None, overrides: dict[str, Any] | None = None) -> Scenario:
    """Read and validate a scenario file, then apply CLI overrides (validated the same way).

    `overrides` keys: "viewport" ("WxH" text or dict), "duration_s" (number), "run_s"
    (the run's wall budget, timeouts.run_s),
    "probes" ({probe name: {setting: value}}, merged into that probe's section),
    "scorers" ({section: {threshold: value}}, merged the same way).
    """
    path = Path(path) if path else DEFAULT_SCENARIO
    if not path.is_file():
        raise UserError(f"scenario file not found: {path}")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise UserError(f"{path}:{where} not valid YAML: {getattr(e, 'problem', e)}") from None
    if not isinstance(raw, dict):
        raise UserError(f"{path}: expected a mapping at the top level")
    try:
        scenario = Scenario.model_validate(raw)
    except ValidationError as e:
        raise UserError(_one_line(e, str(path))) from None
    _check_sections(scenario, str(path))
    if overrides:
        data = scenario.model_dump()
        if overrides.get("viewport") is not None:
            vp = overrides["viewport"]
            data["viewport"].update(parse_viewport(vp) if isinstance(vp, str) else vp)
        if overrides.get("duration_s") is not None:
            data["duration_s"] = overrides["duration_s"]
        if overrides.get("run_s") is not None:  # `run --budget`
            data["timeouts"]["run_s"] = overrides["run_s"]
        # "probes": {NAME: {setting: value}} merges into each probe's section (tests run a
        # probe at a small rate or a short span through their truth files' scenario section).
        for name, section in (overrides.get("probes") or {}).items():
            data["probes"][name] = {**(data["probes"].get(name) or {}), **(section or {})}
        for name, section in (overrides.get("scorers") or {}).items():
            data["scorers"][name] = {**(data["scorers"].get(name) or {}), **(section or {})}
        try:
            scenario = Scenario.model_validate(data)
        except ValidationError as e:
            raise UserError(_one_line(e, "command line")) from None
        if overrides.get("probes") or overrides.get("scorers"):
            _check_sections(scenario, "command line")
    return scenario


def _check_sections(scenario: Scenario, source: str) -> None:
    """Every section names a known probe / scorer section and validates against its model;
    every model's section is validated even when absent (its required settings are missing).
    A kind whose package this process has not imported is checked section by section when
    it is read (probe_settings / scorer_settings; inputs/settings_registry.py)."""
    _check_kind(PROBE_SETTINGS, scenario.probes, source, "no such probe")
    _check_kind(SCORER_SETTINGS, scenario.scorers, source, "no such scorer settings section")


def _check_kind(kind: Sections, sections: dict[str, dict[str, Any]], source: str, unknown: str) -> None:
    if not kind.loaded():
        return
    models = kind.models()
    for name in sections:
        if name not in models:
            raise UserError(f"{source}: {kind.kind}.{name}: {unknown}; known: {', '.join(sorted(models))}")
    # The sections the file has first (a mistake there is what the author just wrote), then
    # those it lacks (their required settings are missing).
    for name in sorted(models, key=lambda n: n not in sections):
        _validated(models[name], sections, name, f"{source}: {kind.kind}")
