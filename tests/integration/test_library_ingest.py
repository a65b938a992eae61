"""The reference library through the log: files -> `svc ingest reference` -> feed.reference ->
projector -> read models, with revisions, retirements, dead letters and verify."""

from __future__ import annotations

import json

from infra.db import connect
from ingest.deadletters import read_dead_letters
from ingest.event_log import open_event_log
from ingest.library import ingest_library, library_root
from projections.rebuild import verify
from schemas.library import entry_id
from tests.integration.test_ingest_cli import one_summary, svc
from tests.support.projection_harness import projector, run_to_end

ENTRIES = ("term/vig.md", "term/kelly-criterion.md", "law/us-nj-sports-betting.md", "help/problem-not-found.md")


def small_library(tmp_path):
    """Four shipped entries; `related` (which must name library entries) names vig, or Kelly for vig."""
    root = tmp_path / "library"
    slugs = {rel.split("/")[1][:-3] for rel in ENTRIES}
    for rel in ENTRIES:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        lines = (library_root() / rel).read_text().splitlines(keepends=True)
        for i, line in enumerate(lines):
            if line.startswith("related = "):
                kept = [s for s in json.loads(line.split("=", 1)[1]) if s in slugs]
                lines[i] = f"related = {json.dumps(kept or (['kelly-criterion'] if 'vig' in rel else ['vig']))}\n"
        (root / rel).write_text("".join(lines))
    return root


async def ingest(settings, root, dataset="live"):
    async with open_event_log(settings, dataset) as log:
        return await ingest_library(root, log, settings)


async def rows(settings, sql, *args):
    conn = await connect(settings.database_url)
    try:
        return await conn.fetch(sql, *args)
    finally:
        await conn.close()


async def run_verify(settings):
    conn, lock_conn, snap = [await connect(settings.database_url) for _ in range(3)]
    try:
        return await verify(settings, "live", conn, lock_conn, snap)
    finally:
        for c in (conn, lock_conn, snap):
            await c.close()


async def test_publish_revise_retire_and_dead_letter_through_the_log(settings, topics, tmp_path):
    root = small_library(tmp_path)
    first = await ingest(settings, root)
    assert (first.records, first.events, first.accepted, first.dead_lettered) == (4, 4, 4, 0)
    again = await ingest(settings, root)
    assert (again.records, again.events, again.accepted, again.duplicate) == (4, 0, 0, 0)

    async with projector(settings) as p:
        await run_to_end(p)
        vig = (await rows(settings, "SELECT * FROM live.reference_entries WHERE slug = 'vig'"))[0]
        assert vig["id"] == entry_id("vig") and vig["status"] == "published" and vig["version"] == 1
        assert vig["kind"] == "term" and "juice" in vig["aliases"] and vig["sources"][0]["url"]
        assert vig["related"] and all(r.startswith("ref_") for r in vig["related"])
        hits = await rows(settings, "SELECT id, kind, context FROM live.search_index WHERE id = $1", vig["id"])
        assert hits[0]["kind"] == "term" and hits[0]["context"]["topic"] == "vig"

        # revise the text: version 2, history of two; a re-review alone: a revision, same version
        path = root / "term/vig.md"
        path.write_text(path.read_text().replace("+++\n\n", "+++\n\nRevised first line.\n\n", 1))
        revised = await ingest(settings, root)
        assert (revised.events, revised.accepted, dict(revised.by_type)) == (1, 1, {"ReferenceRevised": 1})
        text = path.read_text()
        path.write_text(text.replace("review_due = 2027-11-25", "review_due = 2027-12-01", 1))
        assert (await ingest(settings, root)).accepted == 1

        # a broken file is dead-lettered with its path and reason; the entry it held stays
        law = root / "law/us-nj-sports-betting.md"
        law.write_text(law.read_text().replace("status = \"published\"", "status = \"publishd\"", 1))
        # a removed file retires its entry
        (root / "help/problem-not-found.md").unlink()
        mixed = await ingest(settings, root)
        assert (mixed.dead_lettered, mixed.events, dict(mixed.by_type)) == (1, 1, {"ReferenceRetired": 1})
        letters = [d for d in await read_dead_letters(settings, "live") if d.source == "reference"]
        assert [(d.file, "status" in d.reason) for d in letters] == [("law/us-nj-sports-betting.md", True)]
        assert (await ingest(settings, root)).dead_lettered == 1  # the same bad file: the same letter
        assert len([d for d in await read_dead_letters(settings, "live") if d.source == "reference"]) == 1

        await run_to_end(p)
        entries = {r["slug"]: r for r in await rows(settings, "SELECT * FROM live.reference_entries")}
        assert entries["vig"]["version"] == 2 and entries["vig"]["revision"] == 3
        assert entries["vig"]["body"].startswith("Revised first line.")
        assert entries["problem-not-found"]["status"] == "retired"
        assert entries["us-nj-sports-betting"]["status"] == "published"
        history = await rows(settings, "SELECT revision, action, version, reason FROM live.reference_revisions "
                                       "WHERE entry_id = $1 ORDER BY revision", entry_id("vig"))
        assert [tuple(h.values()) for h in history] == [
            (1, "published", 1, None), (2, "revised", 2, None), (3, "revised", 2, None)]
        old = await rows(settings, "SELECT entry FROM live.reference_revisions WHERE entry_id = $1 AND revision = 1",
                         entry_id("vig"))
        assert not old[0]["entry"]["body"].startswith("Revised")  # the old text is kept
        gone = await rows(settings, "SELECT id FROM live.search_index WHERE id = $1", entry_id("problem-not-found"))
        assert gone == []
        # a removed file that others still name: they are dead-lettered until their links are fixed
        (root / "term/vig.md").unlink()
        cascade = await ingest(settings, root)
        assert (cascade.dead_lettered, cascade.events) == (2, 1)  # the broken law entry, and Kelly
        assert (await read_dead_letters(settings, "live"))[-1].reason == "related names no entry of the library: vig"
        result = await run_verify(settings)
        assert result.identical, result.differences


def test_the_command_ingests_the_shipped_library(settings, topics):
    first = one_summary(svc(settings, "ingest", "reference", "--json"))
    assert first["dead_lettered"] == 0 and first["accepted"] == first["events"] >= 150
    second = one_summary(svc(settings, "ingest", "reference", "--json"))
    assert (second["events"], second["accepted"]) == (0, 0)
