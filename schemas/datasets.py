"""The two datasets (docs/architecture.md, "Topics and datasets"): `live` and the `test` sandbox, separate all the way down.

Each has its own feed topics, its own wire.deltas topic and its own Postgres schema of read
models; the same code drives both.
"""

from __future__ import annotations

from typing import Literal

Dataset = Literal["live", "test"]
DATASETS: tuple[Dataset, ...] = ("live", "test")

# feed topics, keyed by the entity whose order matters (game, player, team, library entry)
FEED_GAMES = "feed.games"
FEED_PLAYERS = "feed.players"
FEED_TEAMS = "feed.teams"
FEED_REFERENCE = "feed.reference"  # the reference library's entries, keyed by entry (ref_)
FEED_TOPICS = (FEED_TEAMS, FEED_GAMES, FEED_PLAYERS, FEED_REFERENCE)
DEADLETTER = "feed.deadletter"
WIRE_DELTAS = "wire.deltas"
# first record: the log epoch (a random ID); a new broker or recreated topics means a new epoch
CONTROL = "svc.control"
ALL_TOPICS = (*FEED_TOPICS, DEADLETTER, WIRE_DELTAS, CONTROL)


def topic_prefix(dataset: Dataset) -> str:
    return "" if dataset == "live" else f"{dataset}."


def topic_name(dataset: Dataset, base: str, namespace: str = "") -> str:
    """Kafka topic for a dataset: `feed.games` (live), `test.feed.games` (sandbox)."""
    return f"{namespace}{topic_prefix(dataset)}{base}"


def pg_schema(dataset: Dataset) -> str:
    """Postgres schema holding the dataset's read models."""
    return dataset
