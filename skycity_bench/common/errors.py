"""The bench's small error hierarchy.

`UserError` is a mistake of the person running the bench (a missing file, a bad flag, a
broken scenario): the CLI prints its one-line message and exits 2, no traceback.
`ProbeError` is a probe that could not collect its evidence; the runner stores the message
as the probe's evidence and every item depending on it becomes `untested`.
"""


class BenchError(Exception):
    """Base of every error the bench raises on purpose."""


class UserError(BenchError):
    """Bad input from the user: one clear line, exit code 2."""


class ProbeError(BenchError):
    """A probe could not collect its evidence (demo hung, crashed, hook missing ...).

    `data` keeps whatever the probe had gathered before it failed: partial evidence is still
    evidence, and reviewers see it.
    """

    def __init__(self, message: str, data: dict | None = None):
        super().__init__(message)
        self.data = data or {}


class DemoHang(ProbeError):
    """The demo's main thread stopped answering."""


class DemoSlow(ProbeError):
    """The demo kept rendering frames, but too slowly for the budget sized from its measured
    frame cost (slow, not hung)."""


class DemoCrash(ProbeError):
    """The demo's renderer process crashed or the page closed itself."""
