from skycity_bench.reporting.run_report import get_path, set_path


def test_should_read_item_ids_with_dots():
    doc = {"items": {"shops.hover": {"points": 3}}, "measurements": {"density": {"samples": [{"t": 20}]}}}
    assert get_path(doc, "items.shops.hover.points") == 3
    assert get_path(doc, "measurements.density.samples.0.t") == 20


def test_should_set_nested_paths():
    doc = {}
    set_path(doc, "smoothness.full.p95_ms", 16.7)
    assert doc == {"smoothness": {"full": {"p95_ms": 16.7}}}
