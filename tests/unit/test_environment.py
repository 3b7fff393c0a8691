"""Timing figures are ranked only between comparable environments."""

from skycity_bench.common import environment
from skycity_bench.inputs.scenario import load_scenario


def env(**kw):
    e = environment.build(
        "156.0",
        "/usr/bin/chromium",
        {"renderer": "ANGLE (SwiftShader Device)"},
        load_scenario(),
        {"refresh_interval_ms": 16.7, "within_tolerance": True},
    )
    e.update(kw)
    return e


def test_should_detect_software_rendering():
    assert env()["software_rendering"] is True


def test_same_environment_is_comparable():
    ok, why = environment.comparable(env(), env())
    assert ok and why == []


def test_should_name_what_differs():
    ok, why = environment.comparable(env(), env(browser_version="157.0", viewport="1280x720"))
    assert not ok and any("browser_version" in w for w in why) and any("viewport" in w for w in why)


def test_should_refuse_refresh_rates_apart_or_off_calibration():
    assert not environment.comparable(env(), env(refresh_interval_ms=20.0))[0]
    assert not environment.comparable(env(), env(calibration={"within_tolerance": False, "refresh_interval_ms": 33}))[0]


def test_should_compare_untimed_runs_on_their_machine_alone():
    """Runs with no real-time probe measure no refresh interval: two of them are ranked on the
    fields that matter; one timed run beside an untimed one is not."""
    untimed = {"refresh_interval_ms": None, "calibration": {"refresh_interval_ms": None, "within_tolerance": None}}
    assert environment.comparable(env(**untimed), env(**untimed)) == (True, [])
    ok, why = environment.comparable(env(), env(**untimed))
    assert not ok and why == ["refresh interval measured on one run only"]
    assert not environment.comparable(env(**untimed), env(**untimed, viewport="1280x720"))[0]
