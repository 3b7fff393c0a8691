"""`skycity-bench review`: serve the reviewers' web app (and its JSON API, /docs)."""

from __future__ import annotations

from typing import Optional

import typer
from rich.console import Console

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def register(app: typer.Typer) -> None:
    @app.command("review")
    def review(
        db: Optional[str] = typer.Option(None, "--db", help="review store: a file (default recordings/reviews.sqlite) "
                                                           "or a postgresql:// URL"),
        port: int = typer.Option(8765, "--port", min=0, max=65535, help="TCP port (0: any free one)"),
        host: str = typer.Option("127.0.0.1", "--host", help="bind address (loopback unless told otherwise)"),
        seed: Optional[int] = typer.Option(None, "--seed", help="queue-order seed of a NEW store (default random)"),
        allow_host: list[str] = typer.Option([], "--allow-host",
                                             help="a Host name the app answers to besides loopback and --host "
                                                  "(repeatable; e.g. the server's name on the team's network)"),
    ) -> None:
        """Serve the blind review app: sign in, score candidates, override with reasons."""
        import uvicorn

        from ..review import create_app
        from ..review.guard import allowed_hosts
        from ..store import DEFAULT_DB, ReviewStore

        store = ReviewStore(db or DEFAULT_DB, seed=seed)
        c = Console()
        if host not in LOOPBACK:
            c.print(f"[yellow]warning:[/] serving on {host}: anyone who can reach it can submit scores")
        c.print(f"review app on http://{host}:{port}/ (API at /docs) · store {store.path} · "
                f"{len(store.candidates())} candidates · rubric {store.rubric.id}", highlight=False)
        hosts = allowed_hosts(host, allow_host)
        c.print(f"answering Host: {', '.join(hosts)} (others get 400)", highlight=False)
        web = create_app(store, hosts=hosts)
        if store.postgres:              # the multi-machine queue's progress beside the reviews (issue 19)
            from ..queue.page import install

            install(web, store)
            c.print(f"queue progress on http://{host}:{port}/progress", highlight=False)
        uvicorn.run(web, host=host, port=port, log_level="warning")
