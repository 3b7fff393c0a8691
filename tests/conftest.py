"""Shared pytest set-up. Browser tests need Chromium; the README's set-up installs it, so a
missing browser is a failure here, not a skip."""

import os

# Tests never reach the internet. A run fetches the CDN releases a demo names that the offline
# cache lacks from $SKYCITY_NPM_REGISTRY (issue 16); point it at a loopback port nothing listens
# on, so every run sees an unreachable registry (the offline message) unless a test serves its
# own loopback registry (tests/unit/_cache_pkg.py) and says so.
os.environ["SKYCITY_NPM_REGISTRY"] = "http://127.0.0.1:9"
