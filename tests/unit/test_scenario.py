"""Scenario files and CLI overrides: validated, with one clear line per mistake."""

import subprocess
import sys

import pytest

# As every run does (the runner imports both): the probes' and the scorers' settings models
# are registered, so load_scenario checks every section (inputs/settings_registry.py).
import skycity_bench.judging.scorers  # noqa: F401
import skycity_bench.probes  # noqa: F401
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


def test_the_runner_brings_every_section_model_before_a_scenario_is_loaded():
    """A fresh process that imports the runner (what `run`, `batch`, the queue worker and
    the run worker load scenarios beside) has both registries, so a misspelled section is
    refused at load, before any browser starts."""
    code = (
        "import skycity_bench.running.runner\n"
        "from skycity_bench.inputs.settings_registry import PROBE_SETTINGS, SCORER_SETTINGS\n"
        "assert PROBE_SETTINGS.loaded() and SCORER_SETTINGS.loaded()\n"
        "from skycity_bench.inputs.scenario import load_scenario\n"
        "from skycity_bench.common.errors import UserError\n"
        "try:\n"
        "    load_scenario(None, {'scorers': {'framming': {}}})\n"
        "except UserError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("command line: scorers.framming: no such scorer settings section; known: ")


def test_a_process_without_the_probes_checks_the_sections_it_reads():
    """The inputs layer imports neither the probes nor the judging: without them the
    scenario still loads, and a section read is checked then (the same one line)."""
    code = (
        "import sys\n"
        "from skycity_bench.inputs.scenario import load_scenario\n"
        "from skycity_bench.common.errors import UserError\n"
        "sc = load_scenario()\n"
        "assert 'skycity_bench.probes' not in sys.modules and 'skycity_bench.judging' not in sys.modules\n"
        "import skycity_bench.evidence.timeline\n"
        "assert sc.probe_settings('timeline').tour_s == 60\n"
        "bad = load_scenario(None, {'probes': {'timeline': {'tour_s': -1}}})\n"
        "try:\n"
        "    bad.probe_settings('timeline')\n"
        "except UserError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("scenario: probes.timeline: tour_s: ")


def test_a_rule_a_probe_and_a_scorer_both_apply_has_the_same_values_in_both():
    """The scenario file writes such a rule once (a YAML anchor in the probe's section, which
    the scorer's section takes): the cut frames kept are those of the cuts the camera scorer
    finds, the click diagnostic runs when the autoplay scorer sees a still scene, and the
    replay frames kept are those the replay rule fails."""
    sc = load_scenario()
    cuts, camera = sc.probe_settings("timeline").cut_rule, sc.scorer_settings("camera")
    assert {f: getattr(camera, f) for f in type(cuts).model_fields} == cuts.model_dump()
    pb, rule = sc.probe_settings("playback"), sc.scorer_settings("playback")
    assert pb.moving_scene.min_changed_cells == rule.min_changed_cells
    assert pb.moving_scene.min_changed_share == rule.min_changed_share
    assert pb.moving_scene.min_travel_px == rule.min_travel_px
    assert pb.keep_replay_below_ssim == rule.replay_min_ssim
    text = DEFAULT_SCENARIO.read_text(encoding="utf-8")
    assert "<<: *cut_rule" in text and "<<: *moving_scene" in text and "replay_min_ssim: *replay_min_ssim" in text
