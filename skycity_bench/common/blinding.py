"""Keeping a candidate blind: the one rule for everything that shows a candidate (the review
app's pages, API and served files, the store's masked reports, the static report.html).

What is shown must not carry the operator's label (the demo's file name, which usually
names the model) nor anything that matches the candidate's file. The rule:

- only the candidate's OWN label(s) are masked (the file name and its stem, "gpt-x" of
  "gpt-x.html", when the stem has at least MIN_SECRET characters): masking every
  candidate's label in every text would turn "no external references" into "no external
  ‹hidden›s" when another candidate is called reference.html, and the hole itself would
  tell reviewers that some candidate has that name;
- as whole words: a match may not touch a letter or a digit on either side, so "reference"
  leaves "references" alone, while "model_a" is still masked in "model_a_run1" or
  "model_a.html" (underscore, dash, dot and slash separate);
- in values, never in keys: keys are the report's structure (item ids, measurement names);
- the candidate's full sha256 is masked wherever a value carries it, and the report's
  candidate block keeps only the anonymous id: label, full hash and byte size go, since
  anyone holding the demo files could match those. The bench's own id is a 12-hex prefix of
  the hash, so it too can be matched by hashing the files: the review store gives each
  candidate a random id of its own (`public_id`), puts that in the candidate block, and masks
  the bench's id like the hash (`ids`).

Cheap: a label's pattern is compiled once (one alternation, one pass over each string), and
a blinded report can be kept in a bounded LRU (BlindCache) under a key the caller names (a
run id with its report's hash). The store masks each run once, at import, with its own
candidate's label(s) and hash (store/artefacts.py: runs.masked_json); serving reads that and
never masks a report again.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from functools import lru_cache
from pathlib import PurePath
from typing import Any, Optional, Union

MASK = "‹hidden›"
MIN_SECRET = 3  # shorter stems ("a.html") would mask ordinary words; the full label still is
CANDIDATE_KEEP = ("id",)  # what of report["candidate"] a reviewer may see
Labels = Union[str, Iterable[Optional[str]], None]  # one candidate's label(s): the same file may have two names


def _labels(labels: Labels) -> tuple[str, ...]:
    if labels is None or isinstance(labels, str):
        labels = (labels,)
    return tuple(sorted({lb for lb in labels if lb}))


def secrets_of(labels: Labels, sha256: Optional[str] = None, ids: Iterable[str] = ()) -> tuple[str, ...]:
    """The strings to mask for one candidate, longest first (a label before its stem);
    `ids`: identifiers derived from its file (the bench's hash-prefix id)."""
    out = {i for i in ids if i}
    for label in _labels(labels):
        out.add(label)
        stem = PurePath(label).stem
        if len(stem) >= MIN_SECRET:
            out.add(stem)
    if sha256:
        out.add(sha256)
    return tuple(sorted(out, key=lambda s: (-len(s), s)))


_SCALARS = frozenset({int, float, bool, type(None)})


class Masker:
    """Masks one candidate's secrets as whole words in string values."""

    def __init__(self, labels: Labels, sha256: Optional[str] = None, ids: Iterable[str] = ()):
        self.secrets = secrets_of(labels, sha256, ids)
        # (?<![^\W_]) / (?![^\W_]): not preceded / followed by a letter or digit ([^\W_] is
        # \w without the underscore), so separators such as _ - . / still end a word
        self.pattern = (
            re.compile(r"(?<![^\W_])(?:" + "|".join(map(re.escape, self.secrets)) + r")(?![^\W_])", re.I)
            if self.secrets
            else None
        )

    def text(self, s: str) -> str:
        return self.pattern.sub(MASK, s) if self.pattern is not None else s

    def value(self, v: Any) -> Any:
        """A copy of JSON-like data with the secrets masked in every string value (not keys)."""
        if self.pattern is None:
            return v
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, dict):
            return {k: x if type(x) in _SCALARS else self.value(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            # a report is mostly long lists of numbers: pass those without a call each
            return [x if type(x) in _SCALARS else self.value(x) for x in v]
        return v

    def report(self, report: dict, public_id: Optional[str] = None) -> dict:
        """A blind copy of a report: the candidate block reduced to its id (`public_id` in
        place of the bench's when given), the rest masked."""
        doc = dict(report)
        block = candidate_block(report.get("candidate") or {})
        doc["candidate"] = {**block, "id": public_id} if public_id else block
        out: dict = self.value(doc)
        out["candidate"] = doc["candidate"]  # the id given is not a secret (never masked)
        return out


def candidate_block(candidate: dict) -> dict:
    """What may be shown of a report's candidate block: its anonymous id (CANDIDATE_KEEP)."""
    return {k: candidate[k] for k in CANDIDATE_KEEP if k in candidate}


def masker(labels: Labels, sha256: Optional[str] = None, ids: Iterable[str] = ()) -> Masker:
    return _masker(_labels(labels), sha256, tuple(sorted({i for i in ids if i})))


@lru_cache(maxsize=1024)
def _masker(labels: tuple[str, ...], sha256: Optional[str], ids: tuple[str, ...] = ()) -> Masker:
    return Masker(labels, sha256, ids)


def blind_report(
    report: dict, labels: Labels = None, sha256: Optional[str] = None, public_id: Optional[str] = None
) -> dict:
    """The report as reviewers may see it: its own label and hash are always masked, with
    the labels and hash given (the store's name for the same candidate). With `public_id`
    (the review store's random id) the bench's hash-derived id is replaced by it in the
    candidate block and masked everywhere else."""
    cand = report.get("candidate") or {}
    own = (cand.get("label"), *_labels(labels))
    bench = (str(cand["id"]),) if public_id and cand.get("id") and cand.get("id") != public_id else ()
    return masker(own, sha256 or cand.get("sha256"), bench).report(report, public_id)


class BlindCache:
    """Blinded reports by key, least recently used dropped beyond `size`. `load()` runs only
    on a miss and returns the report (dict). The cached dicts are shared: read-only."""

    def __init__(self, size: int = 64):
        self.size = size
        self._items: OrderedDict[Hashable, dict] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: Hashable, load: Callable[[], dict], labels: Labels = None, sha256: Optional[str] = None) -> dict:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                self.hits += 1
                return self._items[key]
        doc = blind_report(load(), labels, sha256)
        with self._lock:
            self.misses += 1
            self._items[key] = doc
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return doc
