import shutil

import pytest


def pytest_collection_modifyitems(config, items):
    if shutil.which("chromium") or __import__("os").path.exists("/usr/bin/chromium"):
        return
    skip = pytest.mark.skip(reason="no Chromium on this machine (the README's set-up installs it)")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)
