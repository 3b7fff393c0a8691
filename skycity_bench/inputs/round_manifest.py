"""The round manifest CSV: which system (model and version) made each candidate file, the
prompt it answers, its sample number and optional tags; what the leaderboard groups
candidates by.

One row per candidate file: `file,system,prompt,sample[,tags]`, `tags` a list separated by
`;`. What `file` may be depends on the reader: `import --manifest` matches it against the
stored candidates (store/manifests.py), `run PATH... --manifest` against the batch's files
(batch/batch_round.py). Both read it here, and the batch writes the CSV it hands to import
here, so the two sides cannot drift. Every malformed row is a one-line UserError naming the
line.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from skycity_bench.common.errors import UserError

MANIFEST_COLUMNS = ("file", "system", "prompt", "sample")
TAG_SEPARATOR = ";"


@dataclass(frozen=True)
class Manifest:
    """One candidate's place in a round."""

    system: str
    prompt: str
    sample: str
    tags: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, object]:
        return {"system": self.system, "prompt": self.prompt, "sample": self.sample, "tags": list(self.tags)}


def parse_manifest(text: str, source: str = "manifest") -> dict[str, Manifest]:
    """file key → Manifest from the CSV's text; a key given twice, an empty field or a
    missing column is a UserError naming the line."""
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in reader.fieldnames or []]
    reader.fieldnames = header
    missing = [c for c in MANIFEST_COLUMNS if c not in header]
    if missing:
        raise UserError(f"{source}: missing column(s) {', '.join(missing)} (need {','.join(MANIFEST_COLUMNS)}[,tags])")
    out: dict[str, Manifest] = {}
    for line, rec in enumerate(reader, 2):
        vals = {c: (rec.get(c) or "").strip() for c in MANIFEST_COLUMNS}
        empty = [c for c, v in vals.items() if not v]
        if empty:
            raise UserError(f"{source}: line {line}: empty {', '.join(empty)}")
        if vals["file"] in out:
            raise UserError(f"{source}: line {line}: {vals['file']} is listed twice")
        tags = tuple(t.strip() for t in (rec.get("tags") or "").split(TAG_SEPARATOR) if t.strip())
        out[vals["file"]] = Manifest(vals["system"], vals["prompt"], vals["sample"], tags)
    if not out:
        raise UserError(f"{source}: a header but no rows")
    return out


def read_manifest(path: Path) -> dict[str, Manifest]:
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a UTF-8 text file") from None
    if not text.strip():
        raise UserError(f"{path}: empty file (expected a header: {','.join(MANIFEST_COLUMNS)}[,tags])")
    return parse_manifest(text, str(path))


def manifest_csv(rows: dict[str, Manifest]) -> str:
    """The CSV text of file key → Manifest, in the keys' order (what parse_manifest reads)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*MANIFEST_COLUMNS, "tags"])
    for key, m in rows.items():
        w.writerow([key, m.system, m.prompt, m.sample, TAG_SEPARATOR.join(m.tags)])
    return buf.getvalue()
