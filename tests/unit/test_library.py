"""The reference library's file format, the ingest plan and the projection's fold (pure)."""

from __future__ import annotations

from datetime import date, datetime, timezone

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.content import ContentFile as EntryFile
from ingest.library import check_library, known_entries, library_root, parse_file, plan, read_library
from domain.formula_cards import CARDS
from projections.reducers.content import reduce_library
from schemas.events import ReferencePublished, ReferenceRetired, ReferenceRevised, decode, encode
from domain.ids import is_id
from schemas.library import KINDS, SLUG, EntryError, content_hash, entry_id, load_entry

NOW = datetime(2026, 11, 30, tzinfo=timezone.utc)

GOOD = """+++
title = "Vig"
aliases = ["juice", "vigorish"]
summary = "The bookmaker's margin."
jurisdictions = ["US"]
products = ["sportsbook"]
operators = ["draftkings"]
related = []
formulas = ["odds.overround"]
wagering = true
reviewed_at = 2026-11-25
review_due = 2027-11-25
source = "svc editorial"
status = "published"

[[sources]]
title = "A book"
publisher = "A publisher"
url = "https://example.org/book"
accessed_on = 2026-11-25
+++

The margin a book keeps.
"""


def edit(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


# ---- the shipped library ---------------------------------------------------------------------


def test_every_shipped_file_is_a_valid_entry():
    files = read_library(library_root())
    assert [(f.path, f.error) for f in files if f.error] == []
    published = [f.entry for f in files if f.entry.status == "published"]
    assert len(published) >= 150
    kinds = {k: sum(e.kind == k for e in published) for k in KINDS}
    assert kinds["term"] >= 60 and kinds["rule"] >= 15 and kinds["law"] >= 30 and kinds["tax"] >= 10
    assert kinds["policy"] >= 10 and kinds["guide"] >= 1 and kinds["help"] >= 1


US_STATES_AND_DC = {
    f"US-{c}"
    for c in (
        "AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM"
        " NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY"
    ).split()
}


def test_law_covers_every_us_state_and_dc_and_each_says_where_fantasy_stands():
    # The library answers "is sports betting legal in <state>" for every state and DC; each such
    # entry also names its regulator (or says there is none) and says what its sources say about
    # daily fantasy contests, or that it was not checked.
    law = [f.entry for f in read_library(library_root()) if f.entry.kind == "law" and f.entry.status == "published"]
    us = [e for e in law if any(j in US_STATES_AND_DC for j in e.jurisdictions)]
    assert len(US_STATES_AND_DC) == 51
    assert US_STATES_AND_DC - {j for e in us for j in e.jurisdictions} == set()
    assert [e.slug for e in us if "fantasy" not in e.body.lower()] == []
    assert [e.slug for e in us if "regulat" not in e.body.lower()] == []  # who regulates it, or that no one does
    assert [e.slug for e in us if not e.wagering] == []


def test_shipped_formulas_name_real_cards():
    cards = {c.id for c in CARDS}
    for f in read_library(library_root()):
        assert set(f.entry.formulas) <= cards, f.path


# ---- one file --------------------------------------------------------------------------------


def test_a_good_file_loads_with_kind_and_slug_from_its_path():
    e = load_entry("term", "vig", GOOD)
    assert (e.slug, e.kind, e.title, e.aliases, e.body) == ("vig", "term", "Vig", ["juice", "vigorish"],
                                                            "The margin a book keeps.")
    assert e.sources[0].accessed_on == date(2026, 11, 25) and e.reviewed_at == date(2026, 11, 25)


@pytest.mark.parametrize("text, reason", [
    ("title = 'x'\n", "must open with a '+++' line"),
    ("+++\ntitle = 'x'\n", "no closing '+++'"),
    (edit(GOOD, 'title = "Vig"', 'title = Vig'), "front matter is not TOML"),
    (edit(GOOD, 'status = "published"', 'status = "published"\ncolour = "red"'), "unknown field `colour`"),
    (edit(GOOD, '["US"]', '["usa"]'), "jurisdictions[0]"),
    (edit(GOOD, '["sportsbook"]', '["casino"]'), "products[0]"),
    (edit(GOOD, '["draftkings"]', '["Draft Kings"]'), "operators[0]"),
    (edit(GOOD, "review_due = 2027-11-25", "review_due = 2025-11-25"), "review_due is before reviewed_at"),
    (edit(GOOD, "accessed_on = 2026-11-25\n", ""), "needs published_on or accessed_on"),
    (edit(GOOD, '"juice", "vigorish"', '"juice", "juice"'), "aliases lists a value twice"),
    (edit(GOOD, "The margin a book keeps.", ""), "the body is empty"),
    (edit(GOOD, 'url = "https://example.org/book"', 'url = "example"'), "sources[0].url"),
    (GOOD.split("[[sources]]")[0] + "+++\nbody\n", "sources"),
    (edit(GOOD, "wagering = true\n", ""), "missing required field `wagering`"),
])
def test_a_bad_file_says_why(text, reason):
    with pytest.raises(EntryError) as exc:
        load_entry("term", "vig", text)
    assert reason in str(exc.value)


def test_folder_and_name_rules():
    with pytest.raises(EntryError, match="not a kind"):
        load_entry("terms", "vig", GOOD)
    with pytest.raises(EntryError, match="not a slug"):
        load_entry("term", "Vig_Juice", GOOD)
    assert parse_file("vig.md", GOOD).error.startswith("an entry lives in a kind folder")


def test_law_and_tax_entries_must_say_they_are_not_advice():
    with pytest.raises(EntryError, match="not legal advice"):
        load_entry("law", "us-xx", GOOD)
    law = load_entry("law", "us-xx", edit(GOOD, "keeps.", "keeps.\n\nThis is general information, not legal\nadvice."))
    assert law.kind == "law"
    with pytest.raises(EntryError, match="not tax advice"):
        load_entry("tax", "us-xx", GOOD)


def test_across_files_a_slug_is_one_entry_and_related_must_exist():
    files = check_library([
        parse_file("term/vig.md", GOOD),
        parse_file("rule/vig.md", GOOD),
        parse_file("term/juice.md", edit(GOOD, "related = []", 'related = ["vig", "nothing-here"]')),
    ])
    assert files[0].error is None
    assert files[1].error == "slug 'vig' is already used by term/vig.md"
    assert files[2].error == "related names no entry of the library: nothing-here"


# ---- IDs -----------------------------------------------------------------------------------------


@given(st.from_regex(SLUG, fullmatch=True), st.from_regex(SLUG, fullmatch=True))
def test_entry_ids_are_ref_ids_stable_and_distinct(a, b):
    assert is_id("reference", entry_id(a)) and entry_id(a) == entry_id(a)
    assert (entry_id(a) == entry_id(b)) == (a == b)


# ---- the plan: what a run appends ----------------------------------------------------------------


def files_of(**texts: str) -> list[EntryFile]:
    return check_library([parse_file(f"term/{slug}.md", text) for slug, text in texts.items()])


def run(files, log: list) -> list:
    """Plan against `log` (the events so far), append what the plan says; returns the new events."""
    events, letters = plan(files, known_entries(log), NOW)
    log.extend(events)
    return events


def test_publish_then_nothing_then_revise_then_retire():
    log: list = []
    first = run(files_of(vig=GOOD, juice=GOOD), log)
    assert [type(e) for e in first] == [ReferencePublished, ReferencePublished]
    assert run(files_of(vig=GOOD, juice=GOOD), log) == []  # unchanged: nothing to append
    revised = run(files_of(vig=edit(GOOD, "keeps.", "keeps on every bet."), juice=GOOD), log)
    assert [(type(e), e.entry_id, e.revision) for e in revised] == [(ReferenceRevised, entry_id("vig"), 2)]
    gone = run(files_of(vig=edit(GOOD, "keeps.", "keeps on every bet.")), log)
    assert [(type(e), e.slug, e.reason) for e in gone] == [(ReferenceRetired, "juice", "file removed")]
    assert run(files_of(vig=edit(GOOD, "keeps.", "keeps on every bet.")), log) == []
    back = run(files_of(vig=edit(GOOD, "keeps.", "keeps on every bet."), juice=GOOD), log)
    assert [(type(e), e.revision) for e in back] == [(ReferencePublished, 3)]


def test_a_change_and_its_undoing_are_two_revisions():
    log: list = []
    changed = edit(GOOD, "keeps.", "keeps, always.")
    for text in (GOOD, changed, GOOD, changed):
        run(files_of(vig=text), log)
    assert [e.revision for e in log] == [1, 2, 3, 4] and len({e.event_id for e in log}) == 4


def test_status_retired_or_draft_retires_and_a_never_published_draft_is_skipped():
    log: list = []
    assert run(files_of(vig=edit(GOOD, '"published"', '"draft"')), log) == []
    run(files_of(vig=GOOD), log)
    (retired,) = run(files_of(vig=edit(GOOD, '"published"', '"retired"')), log)
    assert retired.reason == "status retired"
    run(files_of(vig=GOOD), log)
    (withdrawn,) = run(files_of(vig=edit(GOOD, '"published"', '"draft"')), log)
    assert withdrawn.reason.startswith("status draft")


def test_a_broken_edit_is_dead_lettered_and_never_retires_the_entry():
    log: list = []
    run(files_of(vig=GOOD), log)
    broken = files_of(vig=edit(GOOD, 'title = "Vig"', "title ="))
    events, letters = plan(broken, known_entries(log), NOW)
    assert events == []
    (letter,) = letters
    assert letter.file == "term/vig.md" and letter.reason.startswith("front matter is not TOML")
    assert letter.raw == broken[0].raw and letter.source == "reference"


def test_events_survive_the_log_encoding():
    log: list = []
    run(files_of(vig=GOOD), log)
    assert decode(encode(log[0])) == log[0]
    assert log[0].source == "svc editorial" and log[0].source_ts == datetime(2026, 11, 25, tzinfo=timezone.utc)


# ---- the fold ----------------------------------------------------------------------------------


def fold(events):
    state = None
    for e in events:
        state, deltas = reduce_library(state, e)
        assert deltas == []
    return state


def test_version_moves_with_what_the_entry_says_not_with_review_dates():
    log: list = []
    run(files_of(vig=GOOD), log)
    run(files_of(vig=edit(GOOD, "reviewed_at = 2026-11-25", "reviewed_at = 2026-11-28")), log)
    assert fold(log).version == 1 and len(fold(log).history) == 2
    run(files_of(vig=edit(GOOD, 'url = "https://example.org/book"', 'url = "https://example.org/book2"')), log)
    state = fold(log)
    assert state.version == 2 and [r.action for r in state.history] == ["published", "revised", "revised"]
    assert [r.version for r in state.history] == [1, 1, 2]
    assert state.entry.sources[0].url == "https://example.org/book2"


def test_retire_keeps_the_text_and_a_republish_continues_the_history():
    log: list = []
    run(files_of(vig=GOOD), log)
    run(files_of(), log)
    state = fold(log)
    assert state.status == "retired" and state.entry.title == "Vig" and state.history[-1].reason == "file removed"
    run(files_of(vig=edit(GOOD, "keeps.", "keeps, always.")), log)
    state = fold(log)
    assert (state.status, state.version, [r.action for r in state.history]) == (
        "published", 2, ["published", "retired", "published"])


def test_the_same_event_twice_changes_nothing():
    log: list = []
    run(files_of(vig=GOOD), log)
    once = fold(log)
    again, _ = reduce_library(once, log[0])
    assert again is once


@given(st.lists(st.sampled_from(["a", "b", "c", "gone", "draft"]), min_size=1, max_size=12))
def test_ingest_and_projection_agree_on_each_entry(steps):
    """Whatever sequence of edits, the ingest's view of the log and the projection's state agree."""
    texts = {"a": GOOD, "b": edit(GOOD, "keeps.", "keeps b."), "c": edit(GOOD, "Vig", "Vig c"),
             "draft": edit(GOOD, '"published"', '"draft"')}
    log: list = []
    for step in steps:
        run(files_of() if step == "gone" else files_of(vig=texts[step]), log)
    state = fold(log) if log else None
    known = known_entries(log).get(entry_id("vig"))
    if state is None:
        assert known is None
        return
    assert known.revision == len(state.history)
    assert (known.hash is not None) == (state.status == "published")
    assert msgspec.json.encode(state.history[-1].origin.event_id) == msgspec.json.encode(log[-1].event_id)
    assert state.content == content_hash(state.entry)


def test_the_relevance_query_set_names_shipped_entries():
    from tests.support.relevance import load_queries

    queries = load_queries()
    published = {f.entry.slug for f in read_library(library_root()) if f.entry.status == "published"}
    assert len(queries) >= 100 and sum(q.held_out for q in queries) >= 50
    assert {q.expect for q in queries} <= published
    assert len({q.q for q in queries}) == len(queries)
