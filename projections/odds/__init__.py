"""Odds maths: pure functions, no I/O. Used by the projector (consensus), the calculations API
and the CLI."""
