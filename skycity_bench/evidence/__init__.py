"""The evidence contract between probes and scorers.

A probe returns one `Evidence` model; the report stores it as JSON under
`probes.<name>.data` with its version under `probes.<name>.evidence_version`
(docs/spec/report.md); a scorer receives the model back (`ScoreInput.evidence`),
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

from typing import Any, Optional

from pydantic import ValidationError

from skycity_bench.evidence.contract import _REGISTRY, Evidence, EvidenceError, Part, first_error

__all__ = [
    "Evidence",
    "EvidenceError",
    "Part",
    "model_for",
    "parse",
    "known_probes",
    "current_version",
    "first_error",
]


def _load_models() -> None:
    # noqa: F401 below: importing each model module registers its models.
    # The models live one per probe in this package; importing them registers them.
    from skycity_bench.evidence import (  # noqa: F401
        density,
        frame_pacing,
        framing,
        network,
        packaging,
        page_events,
        playback,
        realtime_capture,
        recording,
        shops,
        timeline,
    )


def known_probes() -> list[str]:
    _load_models()
    return sorted(_REGISTRY)


def model_for(probe: str, version: Optional[str] = None) -> type[Evidence] | None:
    """The model of this probe's evidence at `version` (None: the current one), or None
    when no such version exists."""
    _load_models()
    versions = _REGISTRY.get(probe) or {}
    if version is None:
        version = current_version(probe)
    return versions.get(str(version)) if version is not None else None


def current_version(probe: str) -> Optional[str]:
    _load_models()
    versions = _REGISTRY.get(probe) or {}
    if not versions:
        return None
    return max(versions, key=lambda v: (len(v), v))


def parse(probe: str, data: Any, version: Optional[str] = None) -> Evidence:
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
