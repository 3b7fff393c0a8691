"""Evidence of the runner's pseudo-probe `page_events` (runner._page_events): what
the demo did to the pages the bench opened during the whole run, summed over them. No
scorer reads it; the report's warnings say the same in words, and a hostile demo's report
shows it here."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from skycity_bench.evidence.contract import Evidence


class PageEventsEvidenceV1(Evidence):
    """Version 1: what reports written before the thrown-error count hold."""

    probe = "page_events"
    evidence_version = "1"

    pages: int = Field(description="pages the bench opened")
    dialogs: list[dict[str, Any]] = Field(
        description="dialogs the demo opened, {type, message} (first 50); the bench dismissed them"
    )
    dialog_count: int
    popups: list[str] = Field(description="URLs of popup windows it opened (first 50); the bench closed them")
    popup_count: int
    left_document: list[str] = Field(description="where a page navigated away from the demo's document (first 20)")
    renderer_crashes: int
    page_errors: list[Any] = Field(description="errors the pages threw (first 20)")


class PageEventsEvidence(PageEventsEvidenceV1):
    """Version 2: with every error the demo's code threw counted (fake-clock callbacks
    included, which never reach the page's error event)."""

    probe = "page_events"
    evidence_version = "2"

    thrown: dict[str, Any] = Field(
        description=(
            "errors the demo's code threw on every page: {count (in real time every error; on the fake clock "
            "one per clock advance that threw, the clock rethrowing only an advance's first), first: {message, at_s (demo "
            "seconds on the fake clock by which it came; null in real time), frame (the stack's "
            "first frame)}, last_message}"
        )
    )
