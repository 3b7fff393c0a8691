"""The `skycity-bench` command. Each subcommand lives in skycity_bench/commands/<name>.py
and registers itself (`register(app)`), so adding one never edits this file.

User mistakes (UserError, a bad scenario) print one line and exit 2, no traceback.
"""

from __future__ import annotations

import importlib
import logging
import os
import pkgutil
import sys

import typer
from rich.console import Console

from skycity_bench.common.errors import UserError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Judge AI-generated Sky City demos in a real Chromium.",
)
err = Console(stderr=True)


def _register() -> None:
    from skycity_bench import commands

    for m in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if not m.name.startswith("_"):
            importlib.import_module(f"{commands.__name__}.{m.name}").register(app)


_register()


def main() -> None:
    logging.basicConfig(level=logging.DEBUG if os.environ.get("SKYCITY_DEBUG") else logging.WARNING)
    try:
        rc = app(standalone_mode=False)
    except UserError as e:
        err.print(f"[red]error:[/] {e}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        err.print("[red]aborted[/]")
        sys.exit(130)
    except Exception as e:
        # Click's usage errors (typer vendors click, so match the shape, not the class).
        if hasattr(e, "format_message") and hasattr(e, "exit_code"):
            err.print(f"[red]error:[/] {e.format_message()}", highlight=False, soft_wrap=True)
            sys.exit(2)
        raise
    # standalone_mode=False: click returns a typer.Exit's code instead of raising it.
    sys.exit(rc if isinstance(rc, int) else 0)
