"""The run report: report.json, the single source of truth of a run
(docs/spec/report.md names the paths others read; they keep their names).

Probe evidence is stored whole under `probes`, so `skycity-bench rescore RUN_DIR` can
recompute every item without a browser. Writing is atomic (temp file + rename): a report is
either whole or absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from skycity_bench.common.atomic_write import write_atomic
from skycity_bench.common.errors import Cause

SCHEMA = "skycity-bench/report@1"
Status = Literal["pass", "partial", "fail", "untested", "review"]


class Model(BaseModel):
    model_config = ConfigDict(extra="allow")


class Candidate(Model):
    id: str = Field(description="anonymous id derived from the file's hash (never the model's name)")
    sha256: str = Field(description="SHA-256 of the HTML file")
    size_bytes: int = 0
    # The operator's own label (file name). The review store keeps it apart from the anonymous
    # id and shows it only when unblinding.
    label: Optional[str] = None


class ItemResult(Model):
    points: Optional[float] = Field(None, description="points, or null while untested / waiting for reviewers")
    max: float = Field(description="the item's value from the rubric")
    status: Status
    how: str = Field("auto", description="auto | assisted | manual (rubric)")
    evidence: dict[str, Any] = Field(default_factory=dict, description="what was seen: figures, files, reasons")
    scorer: Optional[str] = None
    cause: Optional[Cause] = Field(
        None,
        description="why an untested item could not be observed (common/errors.py Cause), from its scorer's "
        "outcome or its probes' causes; null for every other status",
    )


class ProbeRecord(Model):
    """One probe's section of the report. A probe returns its evidence model
    (skycity_bench/evidence/); assigning it to `data` stores it as JSON and writes its
    `evidence_version` beside it (report.md: probes.<name>.evidence_version)."""

    name: str
    version: str = "1"
    status: Literal["ok", "error", "skipped"] = "ok"
    error: Optional[str] = None
    cause: Optional[Cause] = Field(
        None,
        description="why a probe in error could not collect (common/errors.py Cause: page, hang, crash, budget, "
        "not_run, bench), set where the error was raised; null when it collected, and in reports from before it",
    )
    duration_s: float = 0.0
    evidence_version: Optional[str] = Field(None, description="the evidence schema version the probe wrote")
    data: dict[str, Any] = Field(default_factory=dict)
    _evidence: Any = PrivateAttr(None)  # the model `data` was written from (or parsed into)

    @model_validator(mode="before")
    @classmethod
    def _from_model(cls, v: Any) -> Any:
        if isinstance(v, dict) and _is_evidence(v.get("data")):
            m = v["data"]
            v = {**v, "data": m.to_data(), "evidence_version": m.evidence_version}
        return v

    def model_post_init(self, _ctx: Any) -> None:
        self._evidence = None

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "data":
            self._evidence = None
            if _is_evidence(value):
                super().__setattr__("evidence_version", value.evidence_version)
                super().__setattr__("data", value.to_data())
                self._evidence = value
                return
        super().__setattr__(name, value)

    def evidence(self, version: Optional[str] = None):
        """This record's evidence as its model (skycity_bench/evidence/), at the version
        it was written with; raises evidence.EvidenceError naming the field that does not
        match. A record built in-process from a plain dict (no version) is read as the
        current version."""
        from skycity_bench import evidence

        want = version or self.evidence_version
        if self._evidence is not None and (want is None or want == self._evidence.evidence_version):
            return self._evidence
        m = evidence.parse(self.name, self.data, want)
        self._evidence = m
        return m


def _is_evidence(v: Any) -> bool:
    return hasattr(v, "to_data") and isinstance(getattr(type(v), "evidence_version", None), str)


class Report(Model):
    schema_: str = Field(SCHEMA, alias="schema")
    bench_version: str
    rubric_id: str
    rubric_sha256: Optional[str] = Field(None, description="SHA-256 of the rubric file the items were scored with")
    candidate: Candidate
    start: Optional[dict[str, Any]] = Field(
        None,
        description="the start diagnosis (judging/start_diagnosis.py): {class, reason, cause, drew, moved, "
        "thrown, observed}; null in reports scored before it",
    )
    scenario: dict[str, Any] = Field(default_factory=dict)
    environment: dict[str, Any] = Field(default_factory=dict)
    started_at: str = ""
    finished_at: str = ""
    duration_s: float = 0.0
    items: dict[str, ItemResult] = Field(default_factory=dict)
    measurements: dict[str, Any] = Field(default_factory=dict)
    probes: dict[str, ProbeRecord] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    exit_reason: Optional[str] = None

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def to_json(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)

    def total(self) -> Optional[float]:
        """The total, only when no item is untested or waiting for review."""
        points = [i.points for i in self.items.values() if i.points is not None]
        if len(points) < len(self.items):
            return None
        return round(sum(points), 1)

    def auto_points(self) -> tuple[float, float]:
        """(points, max) over the items the bench scored itself."""
        got = sum(i.points or 0 for i in self.items.values() if i.points is not None)
        mx = sum(i.max for i in self.items.values() if i.points is not None)
        return got, mx


def save(report: Report, out_dir: Path) -> Path:
    p = Path(out_dir) / "report.json"
    write_atomic(p, report.to_json())
    return p


def load(path: Path) -> Report:
    path = Path(path)
    if path.is_dir():
        path = path / "report.json"
    return Report.model_validate(json.loads(path.read_text(encoding="utf-8")))


def get_path(doc: dict, dotted: str) -> Any:
    """Read a report.md path such as 'measurements.smoothness.full.p95_ms' or
    'items.shops.hover.points' (item ids contain dots: they are matched whole)."""
    cur: Any = doc
    parts = dotted.split(".")
    i = 0
    while i < len(parts):
        if isinstance(cur, dict):
            # longest key match first, so "items.shops.hover.points" finds item "shops.hover"
            for j in range(len(parts), i, -1):
                key = ".".join(parts[i:j])
                if key in cur:
                    cur = cur[key]
                    i = j
                    break
            else:
                raise KeyError(dotted)
        elif isinstance(cur, list):
            cur = cur[int(parts[i])]
            i += 1
        else:
            raise KeyError(dotted)
    return cur


def set_path(doc: dict, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    cur = doc
    for p in parts[:-1]:
        cur = cur.setdefault(p, {})
    cur[parts[-1]] = value
