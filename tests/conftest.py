"""Shared pytest set-up. Browser tests need Chromium; the README's set-up installs it, so a
missing browser is a failure here, not a skip."""
