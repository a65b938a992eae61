"""Names in a question looked up in the search index (`search_index`: teams, players and
competitions with their names and terms), held in memory per dataset and reloaded when the
index changes, so a lookup costs microseconds rather than a trigram scan per phrase.

Close spellings are found by whole words: each phrase (one or two words) is compared with every
stretch of as many words of an entity's name (players) or terms (teams: name, abbreviation,
aliases) by normalised edit similarity (rapidfuzz `fuzz.ratio`, 0 to 1). "mahomse" is 0.86 from
"mahomes", "cheifs" 0.83 from "chiefs"; "weather" is no word of "Kaevon Merriweather". Words of
three letters or fewer must match exactly (KC, SF).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from api.kept import Rechecked
from api.queries.versions import table_version
from projections.search_terms import normalise
from schemas.read_model_tables import PlayerRecord, SearchRecord
from schemas.read_models import column_list

# an indexed name, and for a player the team and position beside it
_INDEXED = column_list(SearchRecord, "si.", only=("id", "kind", "name", "competition", "terms", "as_of"))
_PLAYER_SIDE = column_list(PlayerRecord, "p.", only=("team_id", "position"))

# the closeness a phrase needs to a stretch of a name (fuzz.ratio / 100)
MIN_SCORE = 0.8
SHORT = 3
# how often the index's version is checked (a cheap aggregate), in seconds
RECHECK_SECONDS = 1.0
KINDS = ("team", "player", "competition")
# words many team names share: alone they name no team ("city" is not Kansas City)
GENERIC_WORDS = {"city", "united", "new", "york", "los", "angeles", "san", "bay", "fc", "town", "athletic", "county",
                 "real", "st", "saint", "west", "north", "south", "east", "green", "las", "vegas", "hove", "and",
                 "palace", "rovers", "wanderers", "albion", "hotspur", "forest", "villa", "sporting", "inter", "ac"}
# a shortened word ("man" for "manchester", "spurs" aside) counts as this close when it begins the word
PREFIX_SCORE = 0.85


@dataclass(frozen=True)
class Entry:
    id: str
    kind: str
    name: str
    competition: str | None
    terms: str
    player_team_id: str | None
    player_position: str | None
    as_of: object


def _windows(words: list[str], size: int) -> list[str]:
    return [" ".join(words[i: i + size]) for i in range(len(words) - size + 1)]


class NameIndex:
    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries
        # per window size: the stretches of names (players) or terms (teams, competitions), and whose
        self.windows: dict[int, tuple[list[str], list[int], list[bool]]] = {}
        for size in (1, 2):
            texts, owners, is_name = [], [], []
            for i, e in enumerate(entries):
                name_words = normalise(e.name).split()
                seen = set()
                for w in _windows(name_words, size):
                    texts.append(w), owners.append(i), is_name.append(True)
                    seen.add(w)
                if e.kind != "player":  # a player's terms hold his team's abbreviation: never his name
                    for w in _windows(e.terms.split(), size):
                        if w not in seen:
                            texts.append(w), owners.append(i), is_name.append(False)
                            seen.add(w)
            self.windows[size] = (texts, owners, is_name)
        # two-word stretches by their second word, in index order: the shortened-first-word match
        # ("man city") reads only the stretches ending in the phrase's second word, not all of them
        self.by_second: dict[str, list[tuple[str, int]]] = {}
        for i, text in enumerate(self.windows[2][0]):
            a, _, b = text.partition(" ")
            self.by_second.setdefault(b, []).append((a, i))

    def lookup(self, phrases: Sequence[str]) -> list[dict]:
        """Hits shaped as api.answers.decide.pick_entities reads them: per phrase and entity the
        closeness to its name (`name_score`) and to its terms (`term_score`)."""
        # imported here: a process that never answers a question never loads it
        from rapidfuzz import fuzz, process

        out: list[dict] = []
        for phrase in phrases:
            size = len(phrase.split())
            if size not in self.windows:
                continue
            if size == 1 and phrase in GENERIC_WORDS:
                continue
            texts, owners, is_name = self.windows[size]
            cutoff = 100 if len(phrase) <= SHORT else MIN_SCORE * 100
            best: dict[int, list[float]] = {}
            if size == 2:  # "man city": each word begins the window's word
                first, second = phrase.split()
                if len(first) >= 3:
                    for a, i in self.by_second.get(second, ()):
                        if a.startswith(first) and a != first:
                            scores = best.setdefault(owners[i], [0.0, 0.0])
                            scores[1] = max(scores[1], PREFIX_SCORE)
                            if is_name[i]:
                                scores[0] = max(scores[0], PREFIX_SCORE)
            for _, score, i in process.extract(phrase, texts, scorer=fuzz.ratio, score_cutoff=cutoff, limit=None):
                owner = owners[i]
                scores = best.setdefault(owner, [0.0, 0.0])
                scores[1] = max(scores[1], score / 100)
                if is_name[i]:
                    scores[0] = max(scores[0], score / 100)
            for owner, (name_score, term_score) in best.items():
                e = self.entries[owner]
                out.append({
                    "phrase": phrase, "id": e.id, "kind": e.kind, "name": e.name, "competition": e.competition,
                    "terms": e.terms, "term_score": term_score, "name_score": name_score,
                    "player_team_id": e.player_team_id, "player_position": e.player_position, "as_of": e.as_of,
                })
        # newest first among equals: a name two players share goes to the one seen last
        out.sort(key=lambda h: h["as_of"], reverse=True)
        out.sort(key=lambda h: (h["term_score"], h["name_score"]), reverse=True)
        return out


_INDEXES: Rechecked[NameIndex] = Rechecked(RECHECK_SECONDS)


async def index_for(conn: asyncpg.Connection, schema: str) -> NameIndex:
    """The dataset's name index, rebuilt when `search_index` changed (checked once a second)."""
    return await _INDEXES.get(schema, lambda: table_version(conn, schema, "search_index"),
                              lambda: _read_index(conn, schema))


async def _read_index(conn: asyncpg.Connection, schema: str) -> NameIndex:
    rows = await conn.fetch(
        f"SELECT {_INDEXED}, {_PLAYER_SIDE} "
        f"FROM {schema}.search_index si LEFT JOIN {schema}.players p ON si.kind = 'player' AND p.id = si.id "
        f"WHERE si.kind = ANY($1::text[])",
        list(KINDS),
    )
    return NameIndex([Entry(r["id"], r["kind"], r["name"], r["competition"], r["terms"], r["team_id"], r["position"],
                            r["as_of"]) for r in rows])


# ---- library entries named in a question ------------------------------------------------------

def word_stretches(text: str, most: int) -> set[str]:
    """Every run of 1 to `most` consecutive words of a normalised text."""
    words = text.split()
    return {" ".join(words[i: i + k]) for k in range(1, most + 1) for i in range(len(words) - k + 1)}


KIND_ORDER = ("term", "rule", "law", "tax", "policy", "guide", "help")


class LibraryNames:
    """Published library entries with the names a question may call them by (title, aliases,
    slug as words), normalised."""

    def __init__(self, rows: list) -> None:
        self.rows = rows
        # names of two letters or fewer (state codes such as "IN" or "ME") are words in a question
        self.names = [
            [n for n in {normalise(r["title"]), *(normalise(a) for a in r["aliases"] or ()),
                         normalise(r["slug"].replace("-", " "))} if len(n) > 2]
            for r in rows
        ]
        # which entries each name belongs to: a question is matched by its own stretches of words
        # (normalised text is words joined by single spaces, so a name is "in" the question exactly
        # when it is one of them) instead of by scanning every name of every entry
        self.by_name: dict[str, list[int]] = {}
        for i, entry_names in enumerate(self.names):
            for n in entry_names:
                self.by_name.setdefault(n, []).append(i)
        self.longest_words = max((len(n.split()) for n in self.by_name), default=0)
        # names of two words or more (a player's or team's words inside one name the term)
        self.multiword = {n for n in self.by_name if " " in n}

    def named(self, question: str, jurisdiction: str | None, kinds: set[str] | None, law_or_tax: bool) -> list:
        """Entries whose title, an alias or slug is in the question: the longest name first, then
        kind order (a term before the rule that uses it). `jurisdiction`: a US state code keeps
        entries for everywhere, the US or that state. Law and tax entries only for a question
        about law or tax (a country's name alone asks nothing about its law)."""
        longest_of: dict[int, int] = {}
        for stretch in word_stretches(normalise(question), self.longest_words):
            for i in self.by_name.get(stretch, ()):
                longest_of[i] = max(longest_of.get(i, 0), len(stretch))
        found = []
        for i in sorted(longest_of):
            row = self.rows[i]
            if kinds is not None and row["kind"] not in kinds:
                continue
            if row["kind"] in ("law", "tax") and not law_or_tax:
                continue
            places = set(row["jurisdictions"] or ())
            if jurisdiction is not None and places and not places & {"US", f"US-{jurisdiction}"}:
                continue
            found.append((longest_of[i], row))
        place = f"US-{jurisdiction}" if jurisdiction else None
        found.sort(key=lambda f: (place not in (f[1]["jurisdictions"] or ()), -f[0],
                                  KIND_ORDER.index(f[1]["kind"]) if f[1]["kind"] in KIND_ORDER else 9))
        return [row for _, row in found]


_LIBRARIES: Rechecked[LibraryNames] = Rechecked(RECHECK_SECONDS)


async def library_for(conn: asyncpg.Connection, schema: str) -> LibraryNames:
    """The dataset's published library entries, reloaded when `reference_entries` changed."""
    return await _LIBRARIES.get(schema, lambda: table_version(conn, schema, "reference_entries"),
                                lambda: _read_library(conn, schema))


async def _read_library(conn: asyncpg.Connection, schema: str) -> LibraryNames:
    from api.queries.library import COLUMNS

    rows = await conn.fetch(f"SELECT {COLUMNS} FROM {schema}.reference_entries e WHERE e.status = 'published' "
                            f"ORDER BY e.kind, e.title, e.id")
    return LibraryNames([dict(r) for r in rows])
