"""The sandbox day (dataset `test`): the real 2024 week 1 Sunday slate plus a seeded
in-game simulation consistent with each real final score (source "svc simulation")."""
