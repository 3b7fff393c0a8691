"""The bench's small error hierarchy, and why something could not be observed.

`UserError` is a mistake of the person running the bench (a missing file, a bad flag, a
broken scenario): the CLI prints its one-line message and exits 2, no traceback.
`ProbeError` is a probe that could not collect its evidence; the runner stores the message
as the probe's evidence, and its `cause` beside it, and every item depending on it becomes
`untested`.
"""

from __future__ import annotations

from enum import Enum
from typing import Optional


class Cause(str, Enum):
    """Why a probe or an item could not observe what it needed, said where that is found
    (the error raised, the scorer's outcome), so that nothing reads it back from the prose.
    Only PAGE is an observation of the page: on a page seen to be empty (it never drew,
    drew a blank, never moved) such an item gets that verdict (judging/score_items.py); the
    others say the bench could not look, and the item stays `untested`."""

    # the page lacks what the probe needs or gave it nothing to look at: no hook or an
    # unusable one, no frame after load, shops never on screen, a document it left
    PAGE = "page"
    HANG = "hang"  # the page's main thread stopped answering
    CRASH = "crash"  # the renderer crashed, the page closed, the memory watchdog killed it
    BUDGET = "budget"  # the run's time budget or the probe's share of it ran out (a slow page)
    # the run did not try it: a probe not run, the profile or the scenario left it out
    NOT_RUN = "not_run"
    # the bench's own failure: an unexpected exception, a screenshot it could not decode, the
    # video encoder, evidence it cannot read, a pointer it could not keep on a shop
    BENCH = "bench"


def combined(causes: list[Cause]) -> Cause:
    """One cause for what several parts left untested: PAGE only when every part stopped on
    the page, else the first cause that is not (the bench could not look at that part)."""
    return next((Cause(c) for c in causes if c != Cause.PAGE), Cause.PAGE if causes else Cause.BENCH)


class BenchError(Exception):
    """Base of every error the bench raises on purpose."""


class UserError(BenchError):
    """Bad input from the user: one clear line, exit code 2."""


class ProbeError(BenchError):
    """A probe could not collect its evidence (demo hung, crashed, hook missing ...).

    `data` keeps whatever the probe had gathered before it failed: partial evidence is still
    evidence, and reviewers see it. `cause` says why, where the error is raised; a class's
    `default_cause` stands when the raiser names none (a plain ProbeError: the bench's own
    failure).
    """

    default_cause = Cause.BENCH

    def __init__(self, message: str, data: dict | None = None, cause: Optional[Cause] = None):
        super().__init__(message)
        self.data = data or {}
        self.cause = cause or self.default_cause


class DemoHang(ProbeError):
    """The demo's main thread stopped answering."""

    default_cause = Cause.HANG


class DemoSlow(ProbeError):
    """The demo kept rendering frames, but too slowly for the budget sized from its measured
    frame cost (slow, not hung)."""

    default_cause = Cause.BUDGET


class DemoCrash(ProbeError):
    """The demo's renderer process crashed or the page closed itself."""

    default_cause = Cause.CRASH
