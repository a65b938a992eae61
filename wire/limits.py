"""Open Wire streams per address and per account (spec 8), counted in this process. Pure."""

from __future__ import annotations

from collections import Counter

PER_ADDRESS = 5  # open connections per address, whatever the plan


class OpenStreams:
    def __init__(self) -> None:
        self._open: Counter[str] = Counter()

    def open(self, address: str, account: str, account_limit: int) -> str | None:
        """Count a new stream in; or say which limit it would break (nothing counted then)."""
        if self._open[address] >= PER_ADDRESS:
            return f"at most {PER_ADDRESS} open streams per address"
        if self._open[account] >= account_limit:
            return f"at most {account_limit} open streams for this plan"
        self._open[address] += 1
        self._open[account] += 1
        return None

    def close(self, address: str, account: str) -> None:
        for key in (address, account):
            self._open[key] -= 1
            if self._open[key] <= 0:
                del self._open[key]
