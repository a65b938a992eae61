"""Command modules: each defines `register(app: typer.Typer)` adding its commands or groups."""
