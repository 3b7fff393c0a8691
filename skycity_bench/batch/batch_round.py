"""A batch's round manifest (`run PATH... --manifest round.csv`): which system, prompt and
sample each file of the batch is, so that its run folders import into the review store with
their place in the round and no hand work:

    skycity-bench run round/ --manifest round/manifest.csv --out recordings/round-1
    skycity-bench import recordings/round-1/c-*/ --manifest recordings/round-1/manifest.csv

The CSV is import's (inputs/round_manifest.py). Here `file` names a file of the batch: its
path as given or found (`round/atlas/harbour-1.html`), its path from the manifest's folder
(`atlas/harbour-1.html`), its bare name when no other file of the batch has it, its bench id
(c- and 12 hex) or its sha256. The rows are checked before anything runs: a row that names no
file of the batch, a bare name that two files share, or identical files (one candidate) given
different places stop the batch with one line. The batch keeps each candidate's place in
batch.json (`round`) and writes OUT/manifest.csv keyed by bench id, the name of the
candidate's run folder, which import matches whatever the files were called.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skycity_bench.common.atomic_write import write_atomic
from skycity_bench.common.errors import UserError
from skycity_bench.inputs.demo_file import candidate_id, load_demo
from skycity_bench.inputs.round_manifest import Manifest, manifest_csv

ROUND_CSV = "manifest.csv"  # OUT/manifest.csv: what `import --manifest` takes


def resolve_round(rows: dict[str, Manifest], files: list[Path], base: Path, source: str) -> dict[str, Manifest]:
    """Candidate id → its place in the round, one for each row of the manifest read from
    `source` (in folder `base`); UserError naming the row for anything the module's
    docstring refuses."""
    exact, names = _file_keys(files)
    places: dict[str, Manifest] = {}
    for key, m in rows.items():
        cid = _match(key, base, exact, names, source)
        if places.get(cid, m) != m:
            raise UserError(
                f"{source}: {key} holds the same bytes as another row's file (candidate {cid}), "
                "with another system, prompt or sample; identical files are one candidate"
            )
        places[cid] = m
    return places


def _file_keys(files: list[Path]) -> tuple[dict[str, str], dict[str, set[str]]]:
    """(every exact name of a file: path as given, resolved path, bench id, sha256 → candidate
    id; bare file name → the candidate ids of the files that have it)."""
    exact: dict[str, str] = {}
    names: dict[str, set[str]] = {}
    for f in files:
        sha = load_demo(f).sha256
        cid = candidate_id(sha)
        for k in (str(f), str(f.resolve()), cid, sha):
            exact[k] = cid
        names.setdefault(f.name, set()).add(cid)
    return exact, names


def _match(key: str, base: Path, exact: dict[str, str], names: dict[str, set[str]], source: str) -> str:
    for k in (key, str((base / key).resolve()), str(Path(key).resolve())):
        if k in exact:
            return exact[k]
    found = names.get(key, set())
    if len(found) == 1:
        return next(iter(found))
    if found:
        raise UserError(f"{source}: {key} names {len(found)} different files of the batch; give its path")
    raise UserError(f"{source}: {key} names no file of the batch (give its path, file name, bench id or sha256)")


def record_round(batch: dict[str, Any], places: dict[str, Manifest], out: Path) -> tuple[Path, int]:
    """Keep each candidate's place in the batch's plan (batch.json `candidates.<id>.round`)
    and write OUT/manifest.csv from every candidate that has one (a resumed batch keeps the
    places an earlier --manifest gave). Returns (the CSV's path, how many candidates of the
    batch have no place)."""
    cands = batch["candidates"]
    for cid, m in places.items():
        cands[cid]["round"] = m.to_dict()
    rows = {
        cid: Manifest(r["system"], r["prompt"], r["sample"], tuple(r["tags"]))
        for cid, c in cands.items()
        if (r := c.get("round"))
    }
    write_atomic(out / ROUND_CSV, manifest_csv(rows))
    return out / ROUND_CSV, len(cands) - len(rows)
