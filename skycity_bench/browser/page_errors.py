"""Errors the demo's own code throws, told apart from the bench's failures.

Under the fake clock a timer or animation-frame callback that throws does not reach the
page's `pageerror` event: Playwright's clock runs every due callback up to the end of the
advance, moves its time there, and then rethrows the first exception to the caller as
`Clock.run_for: TypeError: ...`. A browser keeps running a page whose callbacks throw, so
the bench does too: the advance completed, the error is the demo's, and it is recorded
(how often, the first and last message, when it first came, the first frame of its stack)
instead of ending the probe. What is not the demo's own error (the page closed or crashed,
the call timed out) still ends the probe as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# Playwright's clock calls name themselves in the error they rethrow.
_CLOCK_CALL = re.compile(r"^(?:Clock\.(?:run_for|fast_forward|runFor|fastForward)): (?P<rest>.*)$", re.S)
# What the browser or the driver says when the page itself is gone: never the demo's error.
_BENCH_SIDE = (
    "has been closed",
    "Target closed",
    "Target crashed",
    "Execution context was destroyed",
    "Browser has been disconnected",
)
_MESSAGE_CHARS = 300


def page_thrown(message: str) -> str | None:
    """The demo's own error text in a failed clock call's message, or None when the failure
    is not an error the page's code threw."""
    m = _CLOCK_CALL.match(message.strip())
    if m is None:
        return None
    rest = m.group("rest").strip()
    if not rest or any(s in rest for s in _BENCH_SIDE):
        return None
    return rest


def first_frame(error_text: str) -> str | None:
    """The first `at ...` line of a JavaScript stack, without the `at`."""
    for line in error_text.splitlines()[1:]:
        line = line.strip()
        if line.startswith("at "):
            return line[3:][:_MESSAGE_CHARS]
    return None


@dataclass
class ThrownLog:
    """Every error the demo's callbacks threw on one page (the fake clock's and the real
    loop's alike): a count and its ends, so a page that throws 3,600 times a minute costs
    a few fields, not a list of 3,600 messages."""

    count: int = 0
    first: dict[str, Any] | None = None  # {message, at_s, frame}
    last_message: str | None = None

    def add(self, error_text: str, at_s: float | None) -> None:
        self.count += 1
        message = error_text.splitlines()[0][:_MESSAGE_CHARS] if error_text else "error"
        if self.first is None:
            self.first = {
                "message": message,
                "at_s": None if at_s is None else round(at_s, 3),
                "frame": first_frame(error_text),
            }
        self.last_message = message

    def merged(self, other: ThrownLog) -> ThrownLog:
        """This log and another page's, as one (the first error by time, the last of `other`
        when it threw any)."""
        out = ThrownLog(self.count + other.count, self.first, self.last_message)
        if other.first is not None and (out.first is None or _earlier(other.first, out.first)):
            out.first = other.first
        if other.last_message is not None:
            out.last_message = other.last_message
        return out

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "first": self.first, "last_message": self.last_message}


def _earlier(a: dict[str, Any], b: dict[str, Any]) -> bool:
    ta, tb = a.get("at_s"), b.get("at_s")
    return ta is not None and (tb is None or ta < tb)
