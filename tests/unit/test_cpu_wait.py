"""The CPU-wait credit of a load (browser/cpu_wait.py) on made-up schedstat and /proc/stat
figures: a thread's wait counts as the machine's noise only in the share the other
processes had in what could hold it up (others and its sibling threads, not itself); on this
machine's real /proc, a WaitClock over this process reads its threads."""

import os

from skycity_bench.browser.cpu_wait import WaitClock, thread_times

S = 1_000_000_000  # ns in a second
HZ = os.sysconf("SC_CLK_TCK")


def _clock(threads_first, threads_last, busy_s, steal_s=0.0) -> WaitClock:
    c = WaitClock(root=1, readable=True)
    c.first, c.last = dict(threads_first), dict(threads_last)
    c.stat_first = {"total": 0, "idle": 0, "steal": 0}
    # busy CPU time = total - idle - steal
    c.stat_last = {"total": int((busy_s + steal_s) * HZ), "idle": 0, "steal": int(steal_s * HZ)}
    return c


def test_should_credit_nothing_when_only_the_browsers_own_threads_were_busy():
    # a renderer ran 1 s; a GPU thread waited 0.8 s for it; nothing else ran
    c = _clock({1: (0, 0), 2: (0, 0)}, {1: (1 * S, 0), 2: (int(0.1 * S), int(0.8 * S))}, busy_s=1.1)
    assert c.waited_s == 0.0 and c.others_share == 0.0


def test_should_credit_the_others_share_of_a_threads_wait():
    # the renderer ran 2 s and waited 18 s; others ran 18 s; its siblings 0.5 s
    c = _clock({1: (0, 0), 2: (0, 0)}, {1: (2 * S, 18 * S), 2: (int(0.5 * S), int(0.2 * S))}, busy_s=20.5)
    assert abs(c.waited_s - 18 * 18 / 18.5) < 1e-6  # its own 2 s do not dilute the share
    c.start -= 20  # 20 s of wall
    assert abs(c.own_s() - (c.wall_s - c.waited_s)) < 1e-2 and c.own_s() < 3


def test_should_count_a_thread_that_appeared_later_from_zero_and_steal_as_others():
    c = _clock({1: (0, 0)}, {1: (S, 0), 7: (S, 4 * S)}, busy_s=2.0, steal_s=2.0)
    # thread 7 is new: all 4 s of its wait are inside; others = steal 2 s, siblings 1 s
    assert abs(c.waited_s - 4 * 2 / 3) < 1e-6


def test_should_read_this_processs_threads_from_proc():
    got = thread_times(os.getpid())
    assert got and os.getpid() in got and all(r >= 0 and w >= 0 for r, w in got.values())
    # `also`: a process outside the tree, its own threads (here this process's parent)
    assert os.getppid() in thread_times(os.getpid(), (os.getppid(),))
    c = WaitClock.begin(os.getpid())
    c.read()
    assert c.readable and c.waited_s >= 0 and c.to_json()["measured"] is True
    assert WaitClock.begin(None).to_json()["cpu_wait_s"] == 0.0
