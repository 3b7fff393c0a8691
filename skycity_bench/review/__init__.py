"""The reviewers' web app (FastAPI + Jinja2) and its JSON API."""

from skycity_bench.review.app import create_app

__all__ = ["create_app"]
