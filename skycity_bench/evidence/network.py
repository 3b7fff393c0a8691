"""Evidence of the runner's pseudo-probe `network` (runner.execute): every
request any page of the run made and what became of it, the offline library cache's
answers, and the releases fetched on demand for this run. packaging.single_file reads the
requests; the report's playback.external_requests measurement lists their URLs.

Version 1 is the runner's dict, typed with its shape unchanged (so every stored report
still reads)."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field

from skycity_bench.evidence.contract import Evidence, Part


class Request(Part):
    """One request a page made (browser/network.py RequestRecord)."""

    url: str
    method: str
    resource_type: str = Field(description="Chromium's resource type: document, script, image, fetch…")
    t_wall: float = Field(description="wall-clock time (s since the epoch) the request was seen")
    outcome: Literal["blocked", "served", "allowed"] = Field(
        description="blocked; served by one of the bench's resolvers (the demo file, the offline cache); "
        "allowed through to the network (--network allow)"
    )
    detail: str = Field("", description="who served it, or why it was blocked")


class ServedFile(Part):
    """One URL the offline library cache answered (cache/resolver.py)."""

    url: str
    cdn: str = Field(description="which CDN's URL scheme the request matched")
    package: str
    version: str
    path: str = Field(description="the file inside the package")
    sha256: str = Field(description="of the bytes served (after import rewriting)")
    file_sha256: str = Field(description="of the file as the registry's tarball holds it")
    bytes: int
    integrity: str = Field(description="the registry's integrity string of the release")
    requests: int = Field(description="how many times the run asked for this URL")
    rewritten_imports: Optional[list[str]] = Field(None, description="bare imports rewritten to cache URLs")
    cached_at: Optional[str] = Field(None, description="when the release entered the cache")
    fetched_for_this_run: Optional[bool] = Field(None, description="the release was fetched on demand for this run")


class Fetch(Part):
    """One release fetched (or not) on demand for this run (cache/ondemand.py)."""

    package: str
    spec: str = Field(description="the version or range the demo named")
    when: str = Field(description="before the run (named in the HTML) or after it (asked for at run time)")
    urls: list[str] = Field(description="the demo's URLs naming it (first 5)")
    outcome: Literal["fetched", "unreachable", "skipped", "integrity", "not_on_registry", "error"]
    detail: str = Field("", description="the one line said about it")
    version: Optional[str] = None
    integrity: Optional[str] = None
    tarball: Optional[str] = None
    files: Optional[int] = None
    bytes: Optional[int] = None
    seconds: Optional[float] = Field(None, description="time spent on it")


class NetworkEvidence(Evidence):
    probe = "network"
    evidence_version = "1"

    requests: list[Request] = Field(description="every request of every page of the run, in order")
    # The runner always writes misses and mode; golden evidence files written before this
    # model kept only the requests (what packaging.single_file reads), hence the defaults.
    misses: list[str] = Field(
        default_factory=list, description="libraries the demo asked for that the offline cache lacks, one line each"
    )
    mode: Optional[Literal["offline", "allow"]] = Field(
        None, description="--network: offline (only the bench's resolvers answer) or allow"
    )
    served_from_cache: list[ServedFile] = Field(default_factory=list)
    fetch_enabled: Optional[bool] = Field(None, description="whether missing releases could be fetched on demand")
    fetched: list[Fetch] = Field(default_factory=list)
    fetch_failed: list[Fetch] = Field(default_factory=list)
