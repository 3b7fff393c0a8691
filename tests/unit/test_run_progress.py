"""One progress display for the whole run: a line for the run and one per running probe (its
phase, that phase's progress), the run's share weighed by the probes' budgets; without a
terminal, plain time-stamped lines."""

import io

from skycity_bench.common.run_progress import LineProgress, Progress, RunProgress, Task, for_terminal


class _Rows(Progress):
    run_view = True

    def __init__(self):
        self.rows = {}

    def task(self, description, total, unit="s"):
        rows, key = self.rows, description

        class _T(Task):
            def update(self, completed, note=""):
                rows[key] = (completed, total, note)

            def close(self):
                rows.pop(key, None)

        rows[key] = (0, total, "")
        return _T()


def test_should_show_each_running_probes_phase_and_the_runs_share_and_estimate():
    rows = _Rows()
    view = RunProgress(rows, {"frame_pacing": 100, "density": 300})
    p = view.probe("density")
    t = p.task("density: frame pairs 20–35 s", 16)
    t.update(8, note="t = 27 s")
    assert rows.rows["density"] == (0.5, 1.0, "density: frame pairs 20–35 s · t = 27 s")
    done, total, note = rows.rows["run"]
    assert abs(done / total - 0.375) < 1e-6  # half of 300 of 400
    assert "0/2 probes" in note and "running density" in note and "left" in note
    t.close()
    p.finish()
    assert "density" not in rows.rows
    assert rows.rows["run"][0] / rows.rows["run"][1] == 0.75 and "1/2 probes" in rows.rows["run"][2]


def test_should_write_plain_lines_without_a_terminal():
    out = io.StringIO()
    lp = LineProgress(out, every_s=0.0)
    t = lp.task("recording: 65 s", 100)
    t.update(50, note="ETA 1 min")
    t.close()
    lp.log("[yellow]a warning[/]")
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("recording: 65 s: started")
    assert lines[1].endswith("recording: 65 s: 50% · ETA 1 min")
    assert lines[2].endswith("recording: 65 s: done") and lines[3].endswith("a warning")
    assert all(line.startswith("[") for line in lines) and "\x1b" not in out.getvalue()


def test_should_pick_plain_lines_when_stderr_is_not_a_terminal():
    assert for_terminal(quiet=True) is None
    assert isinstance(for_terminal(), LineProgress)  # pytest captures stderr: no terminal


def test_should_take_a_long_phases_own_estimate_when_the_weights_say_less(monkeypatch):
    import skycity_bench.common.run_progress as pg

    now = [1000.0]
    monkeypatch.setattr(pg.time, "monotonic", lambda: now[0])
    rows = _Rows()
    view = RunProgress(rows, {"short": 900, "recording": 100})
    view.probe("short").finish()  # 90 % of the weight done at once
    t = view.probe("recording").task("recording: 65 s", 2000)
    now[0] += 60
    t.update(200)  # 10 % in 60 s: 9 min left by its own rate
    assert "about 9 min 00 s left" in rows.rows["run"][2]
