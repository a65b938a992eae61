"""The domain: pure rules every layer shares, and nothing else.

Prices and their formats, margin removal (devig), bet maths (payouts, parlays, expected value,
Kelly, arbitrage, closing-line value), middles, the strategies' check programs, the formula
cards that name each formula, resource IDs and a game's served status. Each formula is written
once, here; the projector, the API, the Wire, ingest and the CLI import it.

This package imports nothing of ours but itself and no I/O library (import-linter checks both:
pyproject.toml), so every rule here is testable and replayable without a broker or a database.
"""
