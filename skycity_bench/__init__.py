"""skycity-bench: judges AI-generated Sky City demos in a real Chromium."""

__version__ = "0.1.0"
