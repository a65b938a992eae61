"""At the start of the embedded stack: the restored log holds everything the read models were
built from.

The keeper writes a record to disk before the broker (and so the projector) can read it, so
on a sound copy every offset the projector tracked, in the same log epoch, is below the
restored partition's end. One at or beyond it means records the copy lost (a truncated file
RocksDB could not tell from a torn last write): the projector would otherwise "rebuild"
quietly from the shorter log. Stop instead, and say so.
"""

from __future__ import annotations

from infra.db import connect
from infra.log_copy import LogCopy, log_dir
from infra.log_epoch import read_epoch
from infra.settings import Settings
from schemas.datasets import DATASETS, pg_schema


async def check_read_models(settings: Settings) -> None:
    """Raise SystemExit naming the first partition the kept log lost records of."""
    copy = LogCopy.open(settings.data_dir, read_only=True)
    try:
        ends = copy.ends()
    finally:
        copy.close()
    conn = await connect(settings.require_database())
    try:
        for dataset in DATASETS:
            schema = pg_schema(dataset)
            meta = await conn.fetchrow(f'SELECT epoch FROM "{schema}".projection_meta WHERE id = 1')
            if meta is None or not meta["epoch"] or await read_epoch(settings, dataset) != meta["epoch"]:
                continue  # nothing built yet, or another log (after `svc log reset`): the projector rebuilds
            rows = await conn.fetch(f'SELECT topic, partition, last_offset FROM "{schema}".tracking '
                                    "WHERE epoch = $1 ORDER BY topic, partition", meta["epoch"])
            for topic, partition, offset in rows:
                end = ends.get((topic, partition), 0)
                if offset >= end:
                    raise SystemExit(_lost(settings, f"{topic}[{partition}] ends at offset {end} but the "
                                                     f"{dataset} read models hold offset {offset}"))
    finally:
        await conn.close()


def _lost(settings: Settings, what: str) -> str:
    path = log_dir(settings.data_dir.resolve())
    return (f"the log kept in {path} lost records: {what}. Restore {path} from a backup, or run "
            f"`svc log reset --data-dir {settings.data_dir}` to start an empty log (the read models are "
            "then rebuilt from it; ingest the files again)")
