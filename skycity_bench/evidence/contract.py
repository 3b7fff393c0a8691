"""The base of every probe's evidence model, its version registry and its one error type.
Each model module of this package imports this one; the package itself loads the models."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError


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

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.__dict__.get("probe") and cls.__dict__.get("evidence_version"):
            _REGISTRY.setdefault(cls.probe, {})[cls.evidence_version] = cls


class Part(BaseModel):
    """A typed part of a probe's evidence (unknown fields forbidden, like the whole)."""

    model_config = ConfigDict(extra="forbid")


_REGISTRY: dict[str, dict[str, type[Evidence]]] = {}


class EvidenceError(ValueError):
    """Evidence that does not match its model: `field` is the dotted path inside the
    probe's data (empty: the record as a whole), `problem` what is wrong there."""

    def __init__(self, probe: str, field: str, problem: str):
        self.probe, self.field, self.problem = probe, field, problem
        where = f"probes.{probe}.data" + (f".{field}" if field else "")
        super().__init__(f"{where}: {problem}")


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
