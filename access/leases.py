"""Credit leases: a block of a subject's allowance reserved in Postgres, spent in-process. Pure.

A process takes a block of credits for one (subject, mode, period) with the same atomic capped
statement a single call used to run (so the allowance is never overrun, whatever every process
holds), then charges calls against it locally: a call costs no database round trip until the
block runs out. A refund (a non-2xx response) goes back into the block. Unspent credits are
returned on a clean shutdown and when a lease sits idle; a crash over-counts by at most the
unspent block, which is why a block is kept small against the allowance:

- at most `1 / ALLOWANCE_FRACTION` of the allowance (and `MAX_BLOCK`): plans whose allowance is
  below `ALLOWANCE_FRACTION * 2` (the anonymous plan's 200) get blocks of 1 call, charged in
  Postgres on every call exactly as before leases;
- at most an eighth of what is left, so near the end of a period the blocks shrink to one call
  and another process is refused early by at most a few credits;
- growing (doubling) only while blocks run out within `FAST_SECONDS`, halving otherwise: a caller
  making a few calls holds a block of 1 or 2, a busy one a block that lasts some seconds.

A busy lease (blocks of `TOP_UP_BLOCK` or more) takes its next block in the background when a
quarter of the current one is left, so its calls never wait for a grant.
"""

from __future__ import annotations

from dataclasses import dataclass

ALLOWANCE_FRACTION = 1000
MAX_BLOCK = 1000
FAST_SECONDS = 5.0
IDLE_SECONDS = 60.0  # a lease untouched this long is returned
TOP_UP_BLOCK = 64  # a lease of blocks this large takes the next one when a quarter is left


def block_cap(allowance: int) -> int:
    """The largest block a plan with this allowance may take (1: every call charged in Postgres)."""
    return max(1, min(MAX_BLOCK, allowance // ALLOWANCE_FRACTION))


@dataclass
class Lease:
    """What this process holds of one subject's allowance for one period."""

    remaining: int = 0  # credits taken from Postgres and not yet spent by this process
    durable_used: int = 0  # `used` in Postgres after this process's last grant: every process's leases included
    block: int = 1  # size of the next grant (before the caps)
    granted_at: float = 0.0  # monotonic
    touched_at: float = 0.0  # monotonic, last spend or refund

    @property
    def used(self) -> int:
        """Used by the subject as this process knows it: every grant so far, less what it holds unspent."""
        return self.durable_used - self.remaining

    def spend(self, price: int, now: float) -> bool:
        """Take `price` from the unspent credits; False when they do not cover it."""
        if self.remaining < price:
            return False
        self.remaining -= price
        self.touched_at = now
        return True

    def give_back(self, price: int, now: float) -> None:
        self.remaining += price
        self.touched_at = now

    def want(self, price: int, allowance: int, now: float) -> int:
        """How many credits to ask for when `price` does not fit what is left of the lease: the
        shortfall at least, else the adaptive block within the caps."""
        if self.granted_at and now - self.granted_at < FAST_SECONDS:
            self.block = self.block * 2
        elif self.granted_at:
            self.block = max(1, self.block // 2)
        cap = min(block_cap(allowance), max(1, (allowance - self.durable_used) // 8))
        self.block = min(self.block, cap)
        return max(price - self.remaining, self.block)

    def granted(self, credits: int, durable_used: int, now: float) -> None:
        self.remaining += credits
        self.durable_used = durable_used
        self.granted_at = self.touched_at = now

    def running_low(self) -> bool:
        """A busy lease (large blocks) with a quarter of its block left: time for the next one,
        before a call has to wait for it. Small leases are left to run out first (they stay exact)."""
        return self.block >= TOP_UP_BLOCK and self.remaining < self.block // 4

    def idle(self, now: float) -> bool:
        return now - self.touched_at >= IDLE_SECONDS
