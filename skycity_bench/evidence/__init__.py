"""The evidence contract between probes and scorers (issue 17).

A probe returns one `Evidence` model; the report stores it as JSON under
`probes.<name>.data` with its version under `probes.<name>.evidence_version`
(../shared/spec/report.md); a scorer receives the model back (`ScoreInput.evidence`),
never a bare dict, and declares which versions of it it accepts. `rescore` refuses, in one
line naming the file and the field, evidence whose version no scorer accepts or that does
not match its model (an unknown field: a hand edit), instead of scoring it wrongly.

Every model forbids unknown fields and documents each of its own. Raise `evidence_version`
whenever a field is added, removed or changes meaning, and say in the scorers which
versions they read.

The runner's two pseudo-probes, `network` and `page_events`, which no probe module
returns, have their models here too (network.py, page_events.py).
"""

from __future__ import annotations

from typing import Any, ClassVar, Optional

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = ["Evidence", "EvidenceError", "model_for", "parse", "known_probes",
           "current_version", "first_error"]


class Evidence(BaseModel):
    """Base of every probe's evidence: unknown fields are an error (a hand-edited report,
    or a probe that changed its output without changing its model and version)."""

    model_config = ConfigDict(extra="forbid")

    # The probe this evidence belongs to, and this model's version (report.md:
    # probes.<name>.evidence_version). Class constants, not stored fields: the version is
    # written beside the data by the report.
    probe: ClassVar[str] = ""
    evidence_version: ClassVar[str] = ""

    def to_data(self) -> dict[str, Any]:
        """The JSON that goes into report.json (field aliases as the probe wrote them)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.__dict__.get("probe") and cls.__dict__.get("evidence_version"):
            _REGISTRY.setdefault(cls.probe, {})[cls.evidence_version] = cls


class Part(BaseModel):
    """A typed part of a probe's evidence (unknown fields forbidden, like the whole)."""

    model_config = ConfigDict(extra="forbid")


_REGISTRY: dict[str, dict[str, type]] = {}


class EvidenceError(ValueError):
    """Evidence that does not match its model: `field` is the dotted path inside the
    probe's data (empty: the record as a whole), `problem` what is wrong there."""

    def __init__(self, probe: str, field: str, problem: str):
        self.probe, self.field, self.problem = probe, field, problem
        where = f"probes.{probe}.data" + (f".{field}" if field else "")
        super().__init__(f"{where}: {problem}")


def _load_models() -> None:
    # The models live one per probe in this package; importing them registers them.
    from skycity_bench.evidence import density, frame_pacing, framing, network, packaging, page_events, playback, realtime_capture, recording, shops, timeline


def known_probes() -> list[str]:
    _load_models()
    return sorted(_REGISTRY)


def model_for(probe: str, version: Optional[str] = None):
    """The model of this probe's evidence at `version` (None: the current one), or None
    when no such version exists."""
    _load_models()
    versions = _REGISTRY.get(probe) or {}
    if version is None:
        return versions[current_version(probe)] if versions else None
    return versions.get(str(version))


def current_version(probe: str) -> Optional[str]:
    _load_models()
    versions = _REGISTRY.get(probe) or {}
    if not versions:
        return None
    return max(versions, key=lambda v: (len(v), v))


def first_error(err: ValidationError) -> tuple[str, str]:
    """(dotted field, problem) of a pydantic error's first entry."""
    e = err.errors()[0]
    loc = ".".join(str(p) for p in e["loc"])
    msg = e["msg"]
    if e["type"] == "extra_forbidden":
        msg = "unknown field (not in this evidence version's model: hand-edited, or written by another bench)"
    elif e["type"] == "missing":
        msg = "missing"
    return loc, msg


def parse(probe: str, data: Any, version: Optional[str] = None):
    """`data` (a dict from a report, or a model a probe returned) as this probe's model at
    `version` (None: current). Raises EvidenceError naming the field."""
    if isinstance(data, Evidence):
        return data
    model = model_for(probe, version)
    if model is None:
        raise EvidenceError(probe, "", f"no evidence model for version {version!r} of probe {probe!r}")
    if not isinstance(data, dict):
        raise EvidenceError(probe, "", f"expected an object, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as e:
        field, problem = first_error(e)
        raise EvidenceError(probe, field, problem) from None
