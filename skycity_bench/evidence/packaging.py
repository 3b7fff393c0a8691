"""Evidence of probes/packaging.py (item packaging.single_file): the static audit of the
HTML (probes/_html_audit.py) and one short load. The network log itself is the runner's
pseudo-probe `network`."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from skycity_bench.evidence.contract import Evidence, Part


class Reference(Part):
    line: int = Field(description="line of the HTML file")
    where: str = Field(description="the position that loads it (markup attribute, CSS, import, call ...)")
    url: str


class Embedded(Part):
    line: int
    kind: str = Field(description="what the asset is (image, font, audio ...)")
    mime: str
    how: str = Field(description="how it is embedded (data: URL, base64 string ...)")
    bytes: int = Field(description="decoded size")


class PageLoad(Part):
    watched_s: float = Field(description="demo seconds the page ran on the fake clock")
    bench_errors: list[Any] = Field(default_factory=list, description="errors the bench's page scripts saw (first 20)")
    page_errors: list[Any] = Field(default_factory=list, description="errors the page threw (first 20)")
    navigations: list[Any] = Field(default_factory=list, description="navigations of the page (first 20)")


class PackagingEvidence(Evidence):
    probe = "packaging"
    evidence_version = "2"  # 2: typed; fields as in probe version 1

    file_bytes: int = Field(description="size of the HTML file")
    lines: int
    references: list[Reference] = Field(description="literal URLs in positions that load something")
    dynamic: list[dict[str, Any]] = Field(description="loading calls with a non-literal URL (line, call, code)")
    embedded: list[Embedded] = Field(description="binary assets embedded as base64")
    page: PageLoad
