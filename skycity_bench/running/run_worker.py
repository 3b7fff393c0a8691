"""One batch run in its own process: `python -m skycity_bench.running.run_worker SPEC.json`.

The batch (batch/batch_run.py) and the queue's worker (queue/queue_worker.py) start one per
candidate run and supervise it (running/child_supervisor.py), so a demo that crashes, wedges
or eats the browser kills at most this process, never the batch. The worker

- dies with its parent (process_tree.die_with_parent): a batch killed with kill -9 leaves no
  worker running on behind its back that could write into a folder the resumed batch reuses;
- runs `runner.execute` with the run profile, exactly as a single `run` does (the same
  memory watchdog, the same scoring), into the spec's staging folder, where report.json is
  written atomically whatever the demo does;
- reports progress as JSON lines on stdout (run_progress.JsonLinesProgress), which the batch
  turns into its own progress bar and ETA;
- exits by the one rule (runner.exit_code): 0 everything collected and scored, 1 a probe
  could not collect or an item is untested. Any other code means the worker itself failed
  (2: its spec was unusable; killed: a signal's code), and the batch says so.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from skycity_bench.common.errors import UserError
from skycity_bench.common.process_tree import die_with_parent
from skycity_bench.common.run_progress import JsonLinesProgress

if TYPE_CHECKING:
    from skycity_bench.running.run_profile import Profile

# The run's modules (the runner, the probes) are imported inside the functions, after
# die_with_parent (main): importing them takes a second or more, and a worker whose batch
# dies meanwhile must not run on.


def profile_of(spec: dict) -> Profile:
    """The run profile a batch's worker spec describes."""
    from skycity_bench.running.run_profile import DEFAULT_MAX_MEMORY_MB, Profile

    probes = spec.get("probes") or None
    return Profile(
        probes=tuple(probes) if probes else None,
        network=spec.get("network", "offline"),
        max_memory_mb=float(spec.get("max_memory_mb") or DEFAULT_MAX_MEMORY_MB),
    )


async def _run(spec: dict) -> int:
    from skycity_bench.inputs.scenario import load_scenario
    from skycity_bench.running.runner import execute, exit_code

    sc = load_scenario(spec.get("scenario"), spec.get("overrides") or {})
    report = await execute(
        spec["demo"], sc, profile_of(spec), Path(spec["out_dir"]), progress=JsonLinesProgress(), label=spec.get("label")
    )
    return exit_code(report)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m skycity_bench.running.run_worker SPEC.json", file=sys.stderr)
        return 2
    die_with_parent()
    try:
        spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        print(f"{argv[0]}: not a readable worker spec: {e}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_run(spec))
    except UserError as e:  # a spec the batch should not have written: one line
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
