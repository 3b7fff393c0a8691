"""Rescore every stored golden run (tests/golden/) and print one digest per file, so two
trees can be compared byte for byte: a refactor that claims to change no behaviour must print
the same digests as the tree before it.

    .venv/bin/python benchmarks/golden_rescore.py [--out FILE] [--baseline FILE]

With --out the digests are written as JSON; with --baseline they are compared with a saved
file and each differing golden run is named (exit 1 when any differs). The reports are
rescored without a run folder (no figures drawn), as the golden unit tests do.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from skycity_bench.inputs.rubric import find_rubric, load_rubric  # noqa: E402
from skycity_bench.inputs.scenario import Scenario  # noqa: E402
from skycity_bench.judging.score_items import score_report  # noqa: E402
from tests.golden_evidence import GOLDEN_DIR, all_golden, as_report, load  # noqa: E402


def digests() -> dict[str, str]:
    out = {}
    for path in all_golden():
        g = load(path)
        report = score_report(
            as_report(g), Scenario.model_validate(g["scenario"]), load_rubric(find_rubric(g["rubric_id"])), None
        )
        items = {iid: r.model_dump(mode="json") for iid, r in sorted(report.items.items())}
        blob = json.dumps(items, sort_keys=True, ensure_ascii=False).encode()
        out[str(path.relative_to(GOLDEN_DIR).with_suffix(""))] = hashlib.sha256(blob).hexdigest()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--baseline", type=Path)
    args = ap.parse_args()
    got = digests()
    if args.out:
        args.out.write_text(json.dumps(got, indent=1, sort_keys=True))
    print(f"{len(got)} golden runs rescored")
    if not args.baseline:
        return 0
    want = json.loads(args.baseline.read_text())
    differ = sorted(k for k in want.keys() | got.keys() if want.get(k) != got.get(k))
    print(f"identical to the baseline: {len(want) - len(differ)} of {len(want)}  (target: all)")
    for k in differ:
        print(f"  differs: {k}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
