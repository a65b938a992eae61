"""What derives from a read-model record model (schemas/read_models.py): the writer's columns,
the rows it writes, the readers' column lists, the Wire line and the REST line, and both
generated documents. A field added to the record and forgotten anywhere fails here."""

from __future__ import annotations

import typing

import msgspec

from api.queries import markets as markets_sql
from api.resources.markets import MarketLine, market_line
from projections.deltas import line_data
from domain.devig import DEFAULT_METHOD, METHODS
from projections.reducers import reduce
from projections.rows import TABLES, market_line_record, market_line_row
from schemas.read_models import (
    GAME_KEY, MARKET_KEY, MARKET_LINE_KEY, STAT_LINE_KEY, GameRecord, LineData, LineOutcome, MarketLineRecord,
    MarketRecord, StatLineRecord,
    column_list, columns, record, row_values, wire_line,
)
from schemas.wire import DATA_BY_TYPE
from tests.support import projection_events as ev
from wire.asyncapi import document

WINDOW_US = 3600 * 1_000_000
GID = ev.game().game_id


def _market(*books: tuple[str, list[int]], point: str = "-3"):
    """A spread market quoted by `books` (name, American prices), and the line's key."""
    state = None
    for minute, (book, prices) in enumerate(books, 1):
        state, _ = reduce(state, ev.quote(GID, book, prices, market_type="spreads", point=point, minute=minute),
                          WINDOW_US)
    (m,) = state.markets.values()
    (key,) = m.lines
    return m, key


def _stored(values: tuple) -> dict:
    """A written row as Postgres hands it back: by column, JSON columns decoded."""
    row = {}
    for (name, pgtype), value in zip(TABLES["market_lines"][0], values):
        row[name] = msgspec.json.decode(value) if pgtype == "jsonb" else value
    return row


def test_the_writer_columns_are_the_record_fields_with_their_postgres_types():
    cols, key = TABLES["market_lines"]
    assert [name for name, _ in cols] == list(MarketLineRecord.__struct_fields__)
    assert key == MARKET_LINE_KEY and set(key) <= set(MarketLineRecord.__struct_fields__)
    assert dict(cols) == {
        "line_key": "text", "point": "numeric", "is_main": "boolean", "books": "int", "hold": "float8",
        "outcomes": "jsonb", "basis": "text", "market_id": "text", "overround": "float8", "methods": "jsonb",
        "source": "text",
        "as_of": "timestamptz", "provenance": "jsonb",
    }


def test_a_written_row_reads_back_as_the_record_it_was_written_from():
    m, key = _market(("a", [-110, -110]), ("b", [-105, -115]), ("c", [-120, 100]))
    line = m.lines[key]
    made = market_line_record(m, key, line, WINDOW_US)
    values = market_line_row(m, key, line, WINDOW_US)
    assert values == row_values(made) and len(values) == len(MarketLineRecord.__struct_fields__)
    assert record(MarketLineRecord, _stored(values)) == made
    assert set(made.outcomes[0].probability) == set(METHODS)  # the stored line has every method


def test_readers_select_the_record_columns():
    assert markets_sql.LINE_COLUMNS == column_list(MarketLineRecord)
    assert set(column_list(LineData).split(", ")) <= set(MarketLineRecord.__struct_fields__)


def test_the_wire_line_is_the_record_minus_what_only_rest_serves():
    assert issubclass(MarketLineRecord, LineData)
    hints = typing.get_type_hints(DATA_BY_TYPE["market.update"])
    assert hints["lines"] == list[LineData]
    # a snapshot of the stored line is what the delta of the same state carried
    m, key = _market(("a", [-110, -110]), ("b", [-105, -115]))
    line = m.lines[key]
    stored = record(MarketLineRecord, _stored(market_line_row(m, key, line, WINDOW_US)))
    delta = line_data(key, line.point, line.consensus, key == m.main_key)
    assert wire_line(stored, DEFAULT_METHOD) == delta
    assert msgspec.json.encode(wire_line(stored, DEFAULT_METHOD)) == msgspec.json.encode(delta)


def test_rest_serves_the_stored_figures_and_never_recomputes_them():
    m, key = _market(("a", [-110, -110]), ("b", [-105, -115]), ("c", [-120, 100]))
    stored = _stored(market_line_row(m, key, m.lines[key], WINDOW_US))
    made = record(MarketLineRecord, stored)
    for method in METHODS:
        served = market_line(stored, method)
        assert served.hold == made.hold and served.books == made.books and served.basis == made.basis
        assert [o.consensus_price.decimal for o in served.outcomes] == [o.price for o in made.outcomes]
        assert [o.no_vig_probability for o in served.outcomes] == [o.probability[method] for o in made.outcomes]


def test_a_line_the_projection_serves_no_hold_for_is_served_without_one():
    # a record whose stored hold is null keeps it null on REST, even with prices to compute one from
    m, key = _market(("a", [-110, -110]), ("b", [-105, -115]))
    stored = _stored(market_line_row(m, key, m.lines[key], WINDOW_US))
    stored["hold"] = None
    assert market_line(stored, DEFAULT_METHOD).hold is None


def test_rest_line_fields_shared_with_the_record_are_the_record_types():
    rest = typing.get_type_hints(MarketLine, include_extras=True)
    stored = typing.get_type_hints(MarketLineRecord, include_extras=True)
    shared = set(rest) & set(stored)
    assert shared == {"point", "is_main", "basis", "source", "books", "hold", "overround", "as_of", "outcomes"}
    assert {name for name in shared if rest[name] != stored[name]} == {"outcomes"}  # REST prices them


def test_the_asyncapi_line_is_generated_from_the_record_model():
    doc = document("0")
    schemas = doc["components"]["schemas"]
    _, expected = msgspec.json.schema_components([LineData], ref_template="#/components/schemas/{name}")
    assert schemas["LineData"] == expected["LineData"]
    assert schemas["LineOutcome"] == expected["LineOutcome"]
    assert schemas["MarketData"]["properties"]["lines"]["items"] == {"$ref": "#/components/schemas/LineData"}


def test_the_openapi_line_fields_are_the_record_fields():
    # the committed document, which test_docs_generated holds to what the app generates (building
    # a second app in one process would name its components differently)
    from pathlib import Path

    openapi = msgspec.json.decode((Path(__file__).resolve().parents[2] / "docs" / "openapi.json").read_bytes())
    rest = openapi["components"]["schemas"]["MarketLine"]["properties"]
    _, record_schemas = msgspec.json.schema_components([MarketLineRecord])
    stored = record_schemas["MarketLineRecord"]["properties"]
    for name in ("point", "is_main", "books", "hold", "overround", "source"):
        assert _types(rest[name]) == _types(stored[name]), name
    assert set(rest["basis"].get("enum", [])) == set(typing.get_args(typing.get_type_hints(LineData)["basis"]))


def _types(schema: dict) -> set[str]:
    """The JSON types a property schema admits (msgspec and Litestar spell nullables differently)."""
    if "anyOf" in schema or "oneOf" in schema:
        return set().union(*(_types(s) for s in schema.get("anyOf", schema.get("oneOf", []))))
    kind = schema.get("type")
    if isinstance(kind, list):
        return set(kind)
    return {kind} if kind else set()


def test_outcome_fields_are_one_struct_for_rows_deltas_and_snapshots():
    m, key = _market(("a", [-110, -110]), ("b", [-105, -115]))
    line = m.lines[key]
    assert all(type(o) is LineOutcome for o in market_line_record(m, key, line, WINDOW_US).outcomes)
    assert all(type(o) is LineOutcome for o in line_data(key, line.point, line.consensus, True).outcomes)


# ---- games and stat lines ------------------------------------------------------------------------


def _fold(events):
    """Every row the batch core writes for `events`, by table, each row by column name with its
    JSON columns decoded (as Postgres hands them back); and the deltas."""
    from datetime import datetime, timezone

    from projections.batch import BatchCore
    from schemas.events import encode
    from tests.unit.test_consensus import Rec

    core = BatchCore(WINDOW_US)
    batch = core.fold([Rec("feed.games", 0, i, encode(e)) for i, e in enumerate(events)],
                      datetime(2024, 1, 1, tzinfo=timezone.utc))
    tables: dict[str, list[dict]] = {}
    for table, rows in batch.rows.rows.items():
        cols = TABLES[table][0]
        for values in rows:
            assert len(values) == len(cols), table
            tables.setdefault(table, []).append({
                name: msgspec.json.decode(v) if pgtype == "jsonb" and v is not None else v
                for (name, pgtype), v in zip(cols, values)
            })
    return tables, batch.deltas


def test_games_and_stat_lines_columns_are_their_record_fields():
    assert TABLES["games"] == (columns(GameRecord), GAME_KEY) and GAME_KEY == ("id",)
    assert TABLES["stat_lines"] == (columns(StatLineRecord), STAT_LINE_KEY) and STAT_LINE_KEY == ("line_key",)
    assert dict(columns(GameRecord))["last_seq"] == "bigint"
    assert dict(columns(GameRecord))["kickoff_date"] == "date"
    assert dict(columns(StatLineRecord))["stats"] == "jsonb"


def test_a_game_row_reads_back_as_its_record_and_its_snapshot_is_its_delta():
    from projections.rows import game_record
    from wire.snapshots import game_snapshot

    game = ev.game()
    events = [game, ev.state(game.game_id, "live", minute=5, home=7, away=3)]
    tables, deltas = _fold(events)
    (stored,) = tables["games"]
    state = None
    for e in events:
        state, _ = reduce(state, e, WINDOW_US)
    made = game_record(state)
    assert record(GameRecord, stored) == made and made.score_home == 7 and made.state_provenance is not None
    # the Wire's snapshot of the stored row is the payload of the last delta
    assert msgspec.json.encode(game_snapshot(stored)) == msgspec.json.encode(deltas[-1].data)


def test_a_scheduled_game_has_no_state_provenance_and_stores_sql_null():
    tables, _ = _fold([ev.game()])
    (stored,) = tables["games"]
    assert stored["state_provenance"] is None and stored["status"] == "scheduled"


def test_stat_line_rows_read_back_as_their_records():
    game = ev.game()
    pid = ev.player("00-1", "Pat Example").player_id
    tables, _ = _fold([game, ev.player("00-1", "Pat Example"),
                       ev.stat_line(pid, game.game_id, 1, {"passing_yards": 291, "passing_epa": "8.43"}, minute=200)])
    lines = [record(StatLineRecord, row) for row in tables["stat_lines"]]
    game_line = next(line for line in lines if line.game_id == game.game_id)
    assert game_line.stats == {"passing_yards": 291, "passing_epa": "8.43"} and game_line.basis == "total"
    assert {line.basis for line in lines if line.game_id is None} == {"total", "per_game", "rate"}


def test_a_market_row_reads_back_as_its_record_and_its_header_is_the_wire_header():
    from projections.rows import market_record
    from wire.snapshots import market_snapshot

    assert TABLES["markets"] == (columns(MarketRecord), MARKET_KEY)
    game = ev.game()
    events = [game, ev.quote(game.game_id, "a", [-110, -110], market_type="spreads", point="-3", minute=1),
              ev.quote(game.game_id, "b", [-105, -115], market_type="spreads", point="-3", minute=2)]
    tables, deltas = _fold(events)
    (stored,) = tables["markets"]
    state = None
    for e in events:
        state, _ = reduce(state, e, WINDOW_US)
    (m,) = state.markets.values()
    assert record(MarketRecord, stored) == market_record(m)
    # the snapshot of the stored rows is the market's deltas applied: same header, same line
    snapshot = market_snapshot(stored, tables["market_lines"])
    last = deltas[-1].data
    assert msgspec.json.encode(snapshot) == msgspec.json.encode(last)


# ---- REST games and stat lines are read as their records -------------------------------------------


def test_game_and_stat_line_readers_select_the_record_columns():
    from api.queries import games as games_sql
    from api.queries import stats as stats_sql

    # every record field, the status served against the clock instead of the stored one
    assert games_sql.GAME_COLUMNS.startswith(
        column_list(GameRecord, "g.", {"status": games_sql.served_status()}) + ", ")
    assert stats_sql.STAT_COLUMNS == column_list(StatLineRecord)


def test_a_computed_column_must_be_a_record_field():
    import pytest

    with pytest.raises(ValueError):
        column_list(GameRecord, "g.", {"no_such_field": "1"})
    assert column_list(StatLineRecord, computed={"basis": "'total'"}).split(", ")[7] == "'total' AS basis"


def _with_teams(stored: dict) -> dict:
    """A stored game row as the games query reads it: its teams not written yet."""
    return {**stored, **{f"{side}_{col}": None for side in ("home", "away")
                         for col in ("name", "abbreviation", "competition", "provenance", "source", "as_of")}}


def test_rest_serves_a_game_as_its_stored_record():
    from api.resources.games import game
    from projections.rows import game_record

    g = ev.game()
    events = [g, ev.state(g.game_id, "live", minute=5, home=7, away=3)]
    tables, _ = _fold(events)
    (stored,) = tables["games"]
    state = None
    for e in events:
        state, _ = reduce(state, e, WINDOW_US)
    made = game_record(state)
    served = game(_with_teams(stored), None)
    assert (served.id, served.name, served.status, served.score.home, served.score.away) == (
        made.id, made.name, "live", 7, 3)
    assert served.provenance.known_by == made.provenance.known_by and served.provenance.known_by
    assert served.provenance.source_ts == made.provenance.source_ts
    assert served.state_provenance.ingest_ts == made.state_provenance.ingest_ts
    assert served.home_team.id == made.home_team_id and served.home_team.name == made.home_team_id


def test_a_game_without_a_state_report_serves_its_own_provenance_as_the_state_provenance():
    from api.resources.games import game

    tables, _ = _fold([ev.game()])
    (stored,) = tables["games"]
    served = game(_with_teams(stored), None)
    assert served.state_provenance == served.provenance and served.score is None


def test_rest_serves_a_stat_line_as_its_stored_record():
    from api.resources.stats import stat_line

    game = ev.game()
    pid = ev.player("00-1", "Pat Example").player_id
    tables, _ = _fold([game, ev.player("00-1", "Pat Example"),
                       ev.stat_line(pid, game.game_id, 1, {"passing_yards": 291, "passing_epa": "8.43"}, minute=200)])
    stored = next(row for row in tables["stat_lines"] if row["game_id"] == game.game_id)
    made = record(StatLineRecord, stored)
    served = stat_line(stored)
    assert served.stats == {"passing_epa": "8.43", "passing_yards": 291} == dict(made.stats)
    assert (served.subject_id, served.game_id, served.season, served.basis) == (
        made.subject_id, made.game_id, made.season, made.basis)
    assert served.provenance.ingest_ts == made.provenance.ingest_ts
    assert stat_line(made) == served  # a record is served alike


# ---- the overround is stored, and served as stored -------------------------------------------------


def test_the_projection_stores_the_overround_of_the_prices_it_stores_the_hold_of():
    from domain.devig import hold, overround

    m, key = _market(("a", [-110, -110]), ("b", [-105, -115]), ("c", [-120, 100]))
    made = market_line_record(m, key, m.lines[key], WINDOW_US)
    prices = [o.price for o in made.outcomes]
    assert made.overround == overround(prices) and made.hold == hold(prices)
    assert made.overround > made.hold > 0
    stored = _stored(market_line_row(m, key, m.lines[key], WINDOW_US))
    assert stored["overround"] == made.overround


def test_rest_serves_the_stored_overround_and_never_computes_one():
    m, key = _market(("a", [-110, -110]), ("b", [-105, -115]))
    stored = _stored(market_line_row(m, key, m.lines[key], WINDOW_US))
    assert market_line(stored, DEFAULT_METHOD).overround == stored["overround"] is not None
    # whatever the stored prices would give, the stored figure is what is served; null stays null
    stored["overround"] = 0.5
    assert market_line(stored, DEFAULT_METHOD).overround == 0.5
    stored["overround"] = None
    assert market_line(stored, DEFAULT_METHOD).overround is None


def test_a_line_of_one_bookmaker_stores_no_overround():
    m, key = _market(("a", [-110, -110]))
    made = market_line_record(m, key, m.lines[key], WINDOW_US)
    assert made.basis == "too_few_books" and made.hold is None and made.overround is None


def test_no_booksum_is_computed_outside_domain():
    """One definition per formula: a booksum (and so an overround or a hold) comes from
    domain.devig. A sum of 1 / price written out by hand anywhere else, as `sum(1 / d for ...)` or
    as `total += 1 / d` in a loop, fails here."""
    import ast
    from pathlib import Path

    def reciprocal(node: ast.AST) -> bool:
        return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
                and isinstance(node.left, ast.Constant) and node.left.value in (1, 1.0))

    root = Path(__file__).resolve().parents[2]
    found = []
    for package in ("api", "wire", "projections", "schemas", "cli", "access", "ingest", "infra"):
        for path in (root / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                summed = (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sum"
                          and node.args and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp))
                          and reciprocal(node.args[0].elt))
                added = isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and reciprocal(node.value)
                if summed or added:
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert found == []


# ---- the market header: one struct for the row and the Wire --------------------------------------


def _suspended_market():
    game = ev.game()
    first = ev.quote(game.game_id, "a", [-110, -110], market_type="spreads", point="-3", minute=1)
    return _fold([game, first, ev.quote(game.game_id, "b", [-105, -115], market_type="spreads", point="-3", minute=2),
                  ev.suspended(game.game_id, first.market_id, minute=3)])


def test_the_market_header_is_declared_once_for_the_row_and_the_wire():
    from schemas.read_models import MarketHeader
    from schemas.wire import MarketData

    assert issubclass(MarketRecord, MarketHeader) and issubclass(MarketData, MarketHeader)
    header = MarketHeader.__struct_fields__
    assert header == ("id", "game_id", "kind", "type", "period", "participant_id", "name", "status",
                      "status_reason", "main_point", "books")
    assert MarketRecord.__struct_fields__[:len(header)] == header
    assert MarketData.__struct_fields__[:len(header)] == header
    # the same types on both sides (the Wire only renames two members)
    base = typing.get_type_hints(MarketHeader, include_extras=True)
    for model in (MarketRecord, MarketData):
        hints = typing.get_type_hints(model, include_extras=True)
        assert {name: hints[name] for name in header} == base, model
    renamed = dict(zip(MarketData.__struct_fields__, MarketData.__struct_encode_fields__))
    assert {k: v for k, v in renamed.items() if k != v} == {"id": "market_id", "status_reason": "reason"}


def test_the_markets_columns_are_unchanged_by_the_shared_header():
    assert columns(MarketRecord) == (
        ("id", "text"), ("game_id", "text"), ("kind", "text"), ("type", "text"), ("period", "text"),
        ("participant_id", "text"), ("name", "text"), ("status", "text"), ("status_reason", "text"),
        ("main_point", "numeric"), ("books", "int"), ("source", "text"), ("as_of", "timestamptz"),
        ("provenance", "jsonb"), ("last_seq", "bigint"),
    )


def test_market_frames_are_byte_for_byte_what_they_were_before_the_shared_header():
    # encoded by the code before the header was shared (commit ebe4952): a changed member name or
    # member order changes every client's frames
    from wire.snapshots import market_snapshot

    tables, deltas = _suspended_market()
    market = [d for d in deltas if d.type.startswith("market.")]
    assert msgspec.json.encode(market[1].data) == (
        b'{"market_id":"mkt_e9xgmazr4m2y3v0ny92n","game_id":"gm_jygcne2nam1w6d7kk0x1","kind":"game",'
        b'"type":"spreads","period":"full","participant_id":null,"name":null,"status":"open","reason":null,'
        b'"main_point":-3.0,"books":2,"lines":[{"line_key":"-3","point":-3.0,"is_main":true,"books":2,'
        b'"hold":0.045096212419822757,"outcomes":[{"selection":"home","name":"Home","participant_id":null,'
        b'"point":-3.0,"price":1.9307359307359309,"probability":{"multiplicative":0.4945828819068256}},'
        b'{"selection":"away","name":"Away","participant_id":null,"point":3.0,"price":1.889328063241107,'
        b'"probability":{"multiplicative":0.5054171180931745}}],"basis":"consensus"}],"removed_lines":[]}'
    )
    suspended = (
        b'{"market_id":"mkt_e9xgmazr4m2y3v0ny92n","game_id":"gm_jygcne2nam1w6d7kk0x1","kind":"game",'
        b'"type":"spreads","period":"full","participant_id":null,"name":null,"status":"suspended",'
        b'"reason":"touchdown review","main_point":null,"books":0,"lines":[],"removed_lines":%s}'
    )
    assert msgspec.json.encode(market[2].data) == suspended % b'["-3"]'
    (stored,) = tables["markets"]
    assert msgspec.json.encode(market_snapshot(stored, [])) == suspended % b"[]"


def test_the_rest_outcome_declares_the_fields_it_shares_with_the_stored_outcome_once():
    from api.resources.markets import OutcomeQuote
    from schemas.read_models import Outcome

    assert issubclass(LineOutcome, Outcome) and issubclass(OutcomeQuote, Outcome)
    shared = Outcome.__struct_fields__
    assert shared == ("selection", "name", "participant_id", "point")
    assert set(OutcomeQuote.__struct_fields__) & set(LineOutcome.__struct_fields__) == set(shared)
    base = typing.get_type_hints(Outcome, include_extras=True)
    for model in (LineOutcome, OutcomeQuote):
        assert model.__struct_fields__[:len(shared)] == shared  # a Wire frame's member order holds
        hints = typing.get_type_hints(model, include_extras=True)
        assert {name: hints[name] for name in shared} == base, model


def test_the_rest_market_is_the_stored_header_between_the_metadata_and_its_provenance():
    # the REST market takes the header's fields from its declaration: a field added to the header
    # is served, with the header's type (and its enum in the OpenAPI document)
    from pathlib import Path

    from api.resources.common import Meta
    from api.resources.markets import Market, MarketDetail, market
    from schemas.read_models import MarketHeader

    header = MarketHeader.__struct_fields__
    assert Market.__struct_fields__ == (*Meta.__struct_fields__, *header, "provenance")
    assert issubclass(Market, Meta) and issubclass(MarketDetail, Market)
    base = typing.get_type_hints(MarketHeader, include_extras=True)
    hints = typing.get_type_hints(Market, include_extras=True)
    assert {name: hints[name] for name in header} == base

    openapi = msgspec.json.decode((Path(__file__).resolve().parents[2] / "docs" / "openapi.json").read_bytes())
    for name in ("Market", "MarketDetail"):
        properties = openapi["components"]["schemas"][name]["properties"]
        assert set(header) <= set(properties), name
        for field in ("kind", "status"):
            assert set(properties[field]["enum"]) == set(typing.get_args(base[field])), (name, field)

    # served from a stored row as the header reads back, a suspension's reason included
    tables, _ = _suspended_market()
    (stored,) = tables["markets"]
    served = market({**stored, "game_status": "live"}, None)
    as_stored = record(MarketRecord, stored)
    assert {name: getattr(served, name) for name in header} == {name: getattr(as_stored, name) for name in header}
    assert (served.status, served.status_reason) == ("suspended", "touchdown review")


# ---- the other tables: teams, players, injuries, news, search, book prices, content ------------------


def test_every_read_model_table_has_its_columns_from_a_record_model():
    from schemas import read_model_tables as t

    models = {
        "games": (GameRecord, GAME_KEY), "markets": (MarketRecord, MARKET_KEY),
        "market_lines": (MarketLineRecord, MARKET_LINE_KEY), "stat_lines": (StatLineRecord, STAT_LINE_KEY),
        "book_prices": (t.BookPriceRecord, t.BOOK_PRICE_KEY), "teams": (t.TeamRecord, t.TEAM_KEY),
        "players": (t.PlayerRecord, t.PLAYER_KEY), "injuries": (t.InjuryRecord, t.INJURY_KEY),
        "availability": (t.AvailabilityRecord, t.AVAILABILITY_KEY), "news": (t.NewsRecord, t.NEWS_KEY),
        "search_index": (t.SearchRecord, t.SEARCH_KEY), "sports": (t.SportRecord, t.SPORT_KEY),
        "competitions": (t.CompetitionRecord, t.COMPETITION_KEY),
        "reference_entries": (t.ReferenceEntryRecord, t.CONTENT_KEY), "strategies": (t.StrategyRecord, t.CONTENT_KEY),
        "recipes": (t.RecipeRecord, t.CONTENT_KEY), "reference_revisions": (t.RevisionRecord, t.REVISION_KEY),
        "strategy_revisions": (t.RevisionRecord, t.REVISION_KEY), "recipe_revisions": (t.RevisionRecord, t.REVISION_KEY),
    }
    # every table the writer writes, but the projector's own bookkeeping, is a record model's
    assert set(TABLES) - set(models) == {"topic_seq", "projector_state"}
    for table, (model, key) in models.items():
        assert TABLES[table] == (columns(model), key), table
        assert set(key) <= set(model.__struct_fields__), table
    assert dict(columns(t.TeamRecord))["aliases"] == "text[]"
    assert dict(columns(t.ReferenceEntryRecord))["formulas"] == "text[]"
    assert dict(columns(t.BookPriceRecord))["state"] == "bytea"
    assert dict(columns(t.RevisionRecord))["entry"] == "jsonb"


def _decoded(table: str, values: tuple) -> dict:
    """A written row as Postgres hands it back: JSON columns and text arrays decoded."""
    return {name: msgspec.json.decode(v) if pgtype in ("jsonb", "text[]") and v is not None else v
            for (name, pgtype), v in zip(TABLES[table][0], values)}


def test_teams_players_injuries_news_and_search_rows_read_back_as_their_records():
    from projections.batch import BatchCore
    from schemas.events import encode
    from schemas.read_model_tables import (
        AvailabilityRecord, InjuryRecord, NewsRecord, PlayerRecord, SearchRecord, TeamRecord,
    )
    from tests.unit.test_consensus import Rec
    from datetime import datetime, timezone

    kc = ev.team("KC", "Kansas City Chiefs", aliases=["Chiefs"])
    p = ev.player("00-1", "Pat Example")
    pid = p.player_id
    events = [kc, ev.game(), p, ev.injury(pid, "Questionable", minute=2), ev.news(pid, "Pat Example limited", minute=3)]
    core = BatchCore(WINDOW_US)
    recs = [Rec("feed.games", 0, i, encode(e)) for i, e in enumerate(events)]  # as _fold: the fold reads events
    rows = core.fold(recs, datetime(2024, 1, 1, tzinfo=timezone.utc)).rows.rows
    models = {"teams": TeamRecord, "players": PlayerRecord, "injuries": InjuryRecord, "news": NewsRecord,
              "search_index": SearchRecord, "availability": AvailabilityRecord}
    seen = set()
    for table, model in models.items():
        for values in rows.get(table, []):
            made = record(model, _decoded(table, values))
            assert row_values(made) == values, table  # the row is the record's, column for column
            seen.add(table)
    assert {"teams", "players", "injuries", "news", "search_index"} <= seen
    (team,) = [record(TeamRecord, _decoded("teams", v)) for v in rows["teams"]]
    assert team.aliases == ["Chiefs"] and team.provenance.known_by
    (injury,) = [record(InjuryRecord, _decoded("injuries", v)) for v in rows["injuries"]]
    assert injury.player_id == pid and injury.status == "Questionable"
    assert {r[1] for r in rows["search_index"]} >= {"team", "player", "game"}


def test_a_book_price_row_is_its_record_columns():
    from projections.rows import book_row
    from schemas.read_model_tables import BookPriceRecord

    m, key = _market(("a", [-110, -110]), ("b", [-105, -115]))
    for q in m.lines[key].books.values():
        values = book_row(m, key, q, False)
        made = record(BookPriceRecord, _decoded("book_prices", values))
        assert row_values(made) == values
        assert (made.market_id, made.line_key, made.book, made.suspended, made.state) == (
            m.market_id, key, q.book, False, None)
        assert [o["selection"] for o in made.outcomes] == [o.selection for o in q.outcomes]
