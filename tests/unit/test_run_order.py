"""The run order: `order` numbers sort, but a probe that reads another's evidence
(ProbeSpec.after) always runs after it: no order coupling by magic numbers."""

import pytest

from skycity_bench.common.errors import BenchError
from skycity_bench.probes import ProbeSpec
from skycity_bench.running.runner import Profile, _after_what_they_read


async def _noop(ctx):
    return None


def _spec(name, order, after=()):
    return ProbeSpec(name=name, collect=_noop, order=order, after=tuple(after))


def test_should_run_a_probe_after_the_probe_it_reads_even_with_a_lower_order_number():
    got = _after_what_they_read([_spec("reader", 5, after=["source"]), _spec("other", 7), _spec("source", 10)])
    assert [s.name for s in got] == ["other", "source", "reader"]


def test_should_keep_the_order_numbers_when_nothing_reads_anything():
    specs = [_spec("a", 1), _spec("b", 2), _spec("c", 3)]
    assert [s.name for s in _after_what_they_read(specs)] == ["a", "b", "c"]


def test_should_ignore_a_read_probe_that_is_not_chosen():
    assert [s.name for s in _after_what_they_read([_spec("reader", 5, after=["absent"])])] == ["reader"]


def test_should_refuse_a_cycle_with_the_names():
    with pytest.raises(BenchError, match="cycle: a, b"):
        _after_what_they_read([_spec("a", 1, after=["b"]), _spec("b", 2, after=["a"])])


def test_should_run_the_real_capture_after_frame_pacing_in_a_full_run():
    names = [s.name for s in Profile(name="full").specs()]
    assert names.index("realtime_capture") > names.index("frame_pacing")
