"""The reviewers' web app (FastAPI + Jinja2) and its JSON API."""

from .app import create_app

__all__ = ["create_app"]
