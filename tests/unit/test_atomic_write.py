"""One atomic writer for the report, the batch state and the library cache: the target holds
the old bytes or the new, never a part, and a failed write leaves no temporary file."""

from __future__ import annotations

import json

import pytest

from skycity_bench.common.atomic_write import write_atomic


def test_writes_bytes_text_and_json(tmp_path):
    write_atomic(tmp_path / "a" / "b.bin", b"\x00\x01")
    write_atomic(tmp_path / "t.txt", "云岚城")
    write_atomic(tmp_path / "j.json", {"城": 1})
    assert (tmp_path / "a" / "b.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "t.txt").read_text("utf-8") == "云岚城"
    assert json.loads((tmp_path / "j.json").read_text("utf-8")) == {"城": 1}


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    write_atomic(target, "old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr("skycity_bench.common.atomic_write.os.replace", broken_replace)
    with pytest.raises(OSError):
        write_atomic(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
