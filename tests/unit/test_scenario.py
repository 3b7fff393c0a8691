"""Scenario files and CLI overrides: validated, with one clear line per mistake."""

import pytest

from skycity_bench.common.errors import UserError
from skycity_bench.inputs.scenario import DEFAULT_SCENARIO, load_scenario


def test_should_load_the_default_scenario():
    sc = load_scenario()
    assert (sc.viewport.width, sc.viewport.height, sc.viewport.device_scale_factor) == (1920, 1080, 1)
    assert sc.duration_s == 60 and tuple(sc.dense_window_s) == (20, 35)
    assert sc.density_sample_times_s == [20, 25, 30, 35]
    assert sc.hook.object == "skyCityTest" and sc.hook.methods["getShops"] == "getShops"


def test_should_apply_validated_overrides():
    sc = load_scenario(None, {"viewport": "1280x720", "duration_s": 20})
    assert (sc.viewport.width, sc.viewport.height, sc.duration_s) == (1280, 720, 20)


@pytest.mark.parametrize(
    "over,needle",
    [
        ({"viewport": "1280"}, "--viewport"),
        ({"viewport": "10x10"}, "viewport.width"),
        ({"duration_s": 0}, "duration_s"),
    ],
)
def test_should_reject_bad_overrides_with_one_line(over, needle):
    with pytest.raises(UserError) as e:
        load_scenario(None, over)
    assert needle in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    "text,needle",
    [
        ("viewport: {width: -5}\n", "viewport.width"),
        ("duration_s: soon\n", "duration_s"),
        ("dense_window_s: [35, 20]\n", "dense_window_s"),
        ("colour: red\n", "colour"),
        ("hook: {methods: {getShop: x}}\n", "getShop"),
        ("probes: {frame_pacing: {max_freeze_s: -1}}\n", "probes.frame_pacing"),
        ("probes: {nosuch: {}}\n", "nosuch"),
        ("viewport: [\n", "not valid YAML"),
        ("- 1\n- 2\n", "mapping"),
    ],
)
def test_should_name_the_field_and_problem_of_a_bad_file(tmp_path, text, needle):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(UserError) as e:
        load_scenario(p)
    msg = str(e.value)
    assert needle in msg and "\n" not in msg and str(p) in msg


def test_scenario_hash_changes_with_content():
    a = load_scenario()
    b = load_scenario(None, {"duration_s": 20})
    assert a.sha256() != b.sha256() and a.sha256() == load_scenario().sha256()


def test_default_file_is_the_bundled_one():
    assert DEFAULT_SCENARIO.name == "skycity.yaml" and DEFAULT_SCENARIO.is_file()
