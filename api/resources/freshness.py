"""`stale_after_ms`: how long a served value stays current.

Values that can still change get a hint sized to how fast they move; settled values
(final games, closed reference data) get null.
"""

from __future__ import annotations

LIVE_GAME_MS = 15_000  # score, clock and possession move every few seconds while live
UPCOMING_GAME_MS = 300_000  # kickoff, venue or status of a game still to come
OPEN_MARKET_MS = 30_000  # consensus moves with each book's quote

_SETTLED = {"final", "cancelled"}
_LIVE = {"live", "suspended"}


def game_stale_after_ms(status: str) -> int | None:
    if status in _SETTLED:
        return None
    return LIVE_GAME_MS if status in _LIVE else UPCOMING_GAME_MS


def market_stale_after_ms(game_status: str | None) -> int | None:
    """A market stays live until its game is settled; then its closing line is final."""
    return None if game_status in _SETTLED else OPEN_MARKET_MS
