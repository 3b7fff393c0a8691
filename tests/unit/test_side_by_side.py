"""`run --jobs N`: the fake-clock probes side by side, each after the probes whose evidence
it reads; the scheduler alone, with stand-in probes (no browser: tests/e2e/test_run_jobs.py
compares a real run's items at --jobs 1 and 2)."""

import asyncio

from skycity_bench.probes import ProbeSpec
from skycity_bench.running.side_by_side import default_jobs, run_side_by_side


async def _noop(ctx):
    return None


def _spec(name, after=(), produces=()):
    return ProbeSpec(name=name, collect=_noop, after=tuple(after), produces=tuple(produces))


def _run(specs, n):
    log, live, most = [], set(), [0]

    async def one(spec, h):
        live.add(spec.name)
        most[0] = max(most[0], len(live))
        log.append(("start", spec.name, h))
        await asyncio.sleep(0.05 if spec.name != "long" else 0.2)
        live.discard(spec.name)
        log.append(("end", spec.name, h))

    asyncio.run(run_side_by_side(specs, [f"browser{i}" for i in range(n)], one))
    return log, most[0]


def _at(log, ev, name):
    return log.index(next(e for e in log if e[0] == ev and e[1] == name))


def test_should_run_probes_side_by_side_and_a_reader_after_what_it_reads():
    specs = [_spec("reader", after=["timeline"]), _spec("a"), _spec("long", produces=["timeline"]), _spec("b")]
    log, most = _run(specs, 2)
    assert most == 2
    assert _at(log, "start", "reader") > _at(log, "end", "long")  # reads what long's pass produces
    assert {e[1] for e in log} == {"reader", "a", "long", "b"}
    assert len({e[2] for e in log}) == 2


def test_should_be_the_plain_run_order_with_one_browser():
    specs = [_spec("x"), _spec("reader", after=["y"]), _spec("y"), _spec("z")]
    log, most = _run(specs, 1)
    assert most == 1
    assert [e[1] for e in log if e[0] == "start"] == ["x", "y", "reader", "z"]


def test_should_allow_at_least_one_browser():
    assert default_jobs() >= 1


def test_should_run_one_browser_on_two_cores_and_one_per_core_beyond(monkeypatch):
    """side_by_side.SOLO_MAX_CPUS: two browsers on 2 cores gained nothing when measured."""
    import skycity_bench.running.side_by_side as side_by_side

    monkeypatch.setattr(side_by_side, "JOB_MEMORY_MB", 1)  # memory never the limit here
    for cpus, jobs in ((1, 1), (2, 1), (3, 3), (8, 8)):
        monkeypatch.setattr(side_by_side.os, "sched_getaffinity", lambda _pid, n=cpus: set(range(n)))
        assert default_jobs() == jobs, cpus


def test_should_start_the_longest_probe_first_when_there_are_several_browsers():
    specs = [_spec("a"), _spec("b"), _spec("long"), _spec("reader", after=["long"])]
    log = []

    async def one(spec, h):
        log.append(spec.name)
        await asyncio.sleep(0.01)

    weight = {"a": 1, "b": 2, "long": 10, "reader": 5}
    asyncio.run(run_side_by_side(specs, ["b0", "b1"], one, weight=lambda s: weight[s.name]))
    assert log[:2] == ["long", "b"] and log.index("reader") > log.index("long")
    log.clear()
    asyncio.run(run_side_by_side(specs, ["b0"], one, weight=lambda s: weight[s.name]))
    assert log == ["a", "b", "long", "reader"]  # one browser: the run order
