"""Keeping candidates blind: what reviewers are served never carries the operator's label
(the demo's file name, which usually names the model) or the run folder's path.

The report's `candidate.label` is dropped, and every string anywhere in the served data
that contains the label (or its stem, "gpt-x" of "gpt-x.html") is masked: a probe that
wrote the file name into its evidence must not unblind the review by accident.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePath
from typing import Any

MASK = "‹hidden›"
MIN_SECRET = 3  # shorter stems ("a.html") would mask ordinary words; the full label still is


def secrets_of(label: str | None) -> list[str]:
    if not label:
        return []
    out = {label}
    stem = PurePath(label).stem
    if len(stem) >= MIN_SECRET:
        out.add(stem)
    return sorted(out, key=len, reverse=True)


def mask_text(text: str, secrets: Iterable[str]) -> str:
    for s in secrets:
        if s and s.lower() in text.lower():
            text = re.sub(re.escape(s), MASK, text, flags=re.I)
    return text


def mask(value: Any, secrets: list[str]) -> Any:
    """A deep copy of JSON-like data with every secret masked in its string values. Keys are
    the report's structure (item ids, measurement names), not text a probe copied: kept."""
    if not secrets:
        return value
    if isinstance(value, str):
        return mask_text(value, secrets)
    if isinstance(value, dict):
        return {k: mask(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [mask(v, secrets) for v in value]
    return value


def blind_report(report: dict, secrets: list[str]) -> dict:
    doc = dict(report)
    cand = dict(doc.get("candidate") or {})
    cand.pop("label", None)
    doc["candidate"] = cand
    return mask(doc, secrets)
