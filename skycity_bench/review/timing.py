"""The server's opening time of a candidate page, signed into the page's form (time
per candidate for the operator: store/timings.py keeps it).

A page gets `issue(reviewer, cid)`: the time the server rendered it, with the reviewer and
the candidate, signed by itsdangerous with the store's secret (the one session cookies use,
under another salt). A save from that page hands it back; `opened_at` returns the time only
when the signature holds, the token is for this reviewer and this candidate, and it is not
older than MAX_OPEN_S. Anything else (no token, forged, another candidate's, too old) gives
None and the save records no time — the scores are stored all the same.
"""

from __future__ import annotations

import datetime as dt
from typing import Optional

from itsdangerous import BadSignature, URLSafeTimedSerializer

MAX_OPEN_S = 24 * 3600  # a page open longer than a day is not timing anything
FIELD = "opened"  # the form field that carries the token


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


class OpenedStamp:
    def __init__(self, secret: str | bytes):
        self.signer = URLSafeTimedSerializer(secret, salt="skycity-review-opened")

    def issue(self, reviewer: str, cid: str, at: Optional[str] = None) -> str:
        return self.signer.dumps({"r": reviewer, "c": cid, "t": at or now()})

    def opened_at(self, token: object, reviewer: str, cid: str) -> Optional[str]:
        if not isinstance(token, str) or not token:
            return None
        try:
            d = self.signer.loads(token, max_age=MAX_OPEN_S)
        except BadSignature:  # forged, altered or expired (SignatureExpired is one)
            return None
        if not isinstance(d, dict) or d.get("r") != reviewer or d.get("c") != cid:
            return None
        return str(d.get("t"))


__all__ = ["OpenedStamp", "FIELD", "MAX_OPEN_S", "now"]
