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
- in the candidate's own text (its phase and shop names, DOM text, URLs, file names) a label
  and its stem are masked as whole words; in the bench's own sentences (the values of
  BENCH_TEXT keys: reasons, summaries, hints, warnings) only the full label, and the stem
  only inside a file-like token (touching / . _ - or \\): "no external references" stays
  whole when a candidate is called references.html, so the hole never spells out the stem;
- a candidate's manifest (system, prompt, sample, tags: store/manifests.py) is never shown:
  it names the model outright, so only admin views and the leaderboard read it;
- facts that identify the file (FILE_FACTS: its byte size, line count, hash, path, run folder,
  label, model) are left out of the reviewer-facing report wherever they occur (`report`):
  anyone holding the demo files could match a size as well as a hash;
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
# keys whose values are the bench's own sentences, not the candidate's text
BENCH_TEXT = frozenset({"reason", "reasons", "summary", "note", "notes", "for_reviewers", "warnings", "why", "how"})
# keys whose values identify the candidate's file: never in the reviewer-facing report
FILE_FACTS = frozenset(
    {"file_bytes", "size_bytes", "html_bytes", "lines", "sha256", "label", "labels", "model", "run_dir", "demo_path"}
)
PATH_KEYS = frozenset({"path", "dir", "out", "out_dir", "demo", "file_path"})  # left out when a string (a path)
_FILE_TOKEN = r"[/\\._-]"


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
        self.bench_pattern = _bench_pattern(self.secrets, labels)

    def text(self, s: str) -> str:
        return self.pattern.sub(MASK, s) if self.pattern is not None else s

    def bench_text(self, s: str) -> str:
        """One of the bench's sentences: full labels, hashes and ids as whole words, a stem
        only inside a file-like token (see the module doc)."""
        return self.bench_pattern.sub(MASK, s) if self.bench_pattern is not None else s

    def _bench_value(self, v: Any) -> Any:
        if isinstance(v, str):
            return self.bench_text(v)
        if isinstance(v, (list, tuple)):
            return [self._bench_value(x) for x in v]
        return self.value(v)

    def value(self, v: Any) -> Any:
        """A copy of JSON-like data with the secrets masked in every string value (not keys)."""
        if self.pattern is None:
            return v
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, dict):
            return {
                k: x if type(x) in _SCALARS else self._bench_value(x) if k in BENCH_TEXT else self.value(x)
                for k, x in v.items()
            }
        if isinstance(v, (list, tuple)):
            # a report is mostly long lists of numbers: pass those without a call each
            return [x if type(x) in _SCALARS else self.value(x) for x in v]
        return v

    def report(self, report: dict, public_id: Optional[str] = None) -> dict:
        """A blind copy of a report: the candidate block reduced to its id (`public_id` in
        place of the bench's when given), the rest masked."""
        doc = without_file_facts(dict(report))
        block = candidate_block(report.get("candidate") or {})
        doc["candidate"] = {**block, "id": public_id} if public_id else block
        out: dict = self.value(doc)
        out["candidate"] = doc["candidate"]  # the id given is not a secret (never masked)
        return out


def _bench_pattern(secrets: tuple[str, ...], labels: Labels) -> Optional[re.Pattern[str]]:
    """The bench sentences' pattern: every secret but a bare stem as a whole word; a stem
    (a label's name without its extension) only touching a file-like separator."""
    full = {lb for lb in _labels(labels)}
    stems = [s for s in secrets if s not in full and any(PurePath(lb).stem == s for lb in full) and "." not in s]
    whole = [s for s in secrets if s not in stems]
    parts = []
    if whole:
        parts.append(r"(?<![^\W_])(?:" + "|".join(map(re.escape, whole)) + r")(?![^\W_])")
    if stems:
        alt = "|".join(map(re.escape, stems))
        parts.append(rf"(?<={_FILE_TOKEN})(?:{alt})(?![^\W_])|(?<![^\W_])(?:{alt})(?={_FILE_TOKEN})")
    return re.compile("|".join(parts), re.I) if parts else None


def without_file_facts(v: Any) -> Any:
    """A copy without the facts that identify the candidate's file (FILE_FACTS anywhere; a
    PATH_KEYS value that is a string): what a reviewer may be shown."""
    if isinstance(v, dict):
        return {
            k: without_file_facts(x)
            for k, x in v.items()
            if k not in FILE_FACTS and not (k in PATH_KEYS and isinstance(x, str))
        }
    if isinstance(v, list):
        return [x if type(x) in _SCALARS else without_file_facts(x) for x in v]
    return v


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
