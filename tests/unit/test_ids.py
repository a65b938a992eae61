"""IDs: format, stability across processes and machines, and the natural-key rules."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

from hypothesis import assume, given
from hypothesis import strategies as st

from ingest.identity import natural_game_id
from schemas import natural_keys
from domain.ids import ALPHABET, ID_LENGTH, PREFIXES, _encode, is_id, kind_of, natural_id, random_id

ROOT = Path(__file__).resolve().parents[2]
kinds = st.sampled_from(sorted(PREFIXES))
parts = st.lists(st.one_of(st.text(max_size=30), st.integers(), st.none()), min_size=1, max_size=6)


def reference_encode(digest: bytes) -> str:
    """The ID body as first written: 20 base-32 digits of the digest's top 100 bits."""
    n = int.from_bytes(digest[:13], "big") >> 4
    chars = []
    for _ in range(ID_LENGTH):
        n, r = divmod(n, 32)
        chars.append(ALPHABET[r])
    return "".join(reversed(chars))


def test_alphabet_is_the_spec_alphabet():
    assert ALPHABET == "".join(c for c in "0123456789abcdefghijklmnopqrstuvwxyz" if c not in "ilou")
    assert len(ALPHABET) == 32 and ID_LENGTH == 20


@given(kinds, parts)
def test_natural_ids_have_the_format_and_never_change(kind, key):
    value = natural_id(kind, *key)
    assert value.startswith(PREFIXES[kind]) and len(value) == len(PREFIXES[kind]) + ID_LENGTH
    assert set(value[len(PREFIXES[kind]):]) <= set(ALPHABET)
    assert is_id(kind, value) and kind_of(value) == kind
    assert natural_id(kind, *key) == value


@given(st.binary(min_size=16, max_size=16))
def test_encoding_matches_the_reference_digit_by_digit(digest):
    assert _encode(digest) == reference_encode(digest)


@given(kinds, st.text(max_size=20), st.text(min_size=1, max_size=20), st.text(max_size=20))
def test_key_parts_do_not_run_together(kind, a, b, c):
    # ("a b", "c") and ("a", "b c") are different keys (the separator is not typed by people)
    assume("\x1f" not in a + b + c)
    assert natural_id(kind, a + b, c) != natural_id(kind, a, b + c)


@given(kinds, kinds)
def test_the_kind_is_part_of_the_key(k1, k2):
    if k1 != k2:
        assert natural_id(k1, "same")[len(PREFIXES[k1]):] != natural_id(k2, "same")[len(PREFIXES[k2]):]


def test_ids_are_the_same_on_another_machine():
    # pinned values: any change to the hashing or encoding would re-key every stored entity
    kc, det = natural_keys.team_id("nfl", "KC"), natural_keys.team_id("nfl", "DET")
    assert kc == "tm_eh9dknw0c7hrkfysqws6"
    assert natural_keys.game_id("nfl", kc, det, date(2023, 9, 7)) == "gm_akw06rhf56x58qmg7x3c"
    assert natural_keys.player_id("nfl", "00-0033873") == "plr_s1f7qg5ad5hbh3v7z10d"
    assert natural_keys.market_id("gm_x", "game", "h2h", "full", None) == "mkt_gs49pg356sts06kh4x1b"
    assert natural_keys.competition_id("nfl") == "cmp_kws2n6v26vwxwsepp1kx"


def test_ids_are_the_same_in_a_fresh_process_with_another_hash_seed():
    code = "from schemas.natural_keys import team_id; print(team_id('nfl', 'KC'))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={"PYTHONHASHSEED": "12345"}, cwd=ROOT,
    ).stdout.strip()
    assert out == natural_keys.team_id("nfl", "KC")


@given(kinds)
def test_random_ids_have_the_format(kind):
    assert is_id(kind, random_id(kind))


@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2040, 1, 1), timezones=st.just(timezone.utc)))
def test_a_game_is_keyed_by_its_local_day_not_its_instant(kickoff):
    home, away = natural_keys.team_id("nfl", "KC"), natural_keys.team_id("nfl", "DET")
    same_day = natural_game_id("nfl", home, away, kickoff, None)
    local = kickoff.astimezone(ZoneInfo("America/New_York"))
    assert same_day == natural_keys.game_id("nfl", home, away, local.date())
    assert natural_game_id("nfl", home, away, None, local.date()) == same_day  # date-only sources agree
    assert natural_game_id("nfl", away, home, kickoff, None) != same_day  # home and away matter
    # the next local day: 24 hours on can still be the same local date when clocks fall back
    # (2036-11-02 04:00Z is 00:00 EDT; 24 h later is 23:00 EST the same day), 25 hours cannot
    assert natural_game_id("nfl", home, away, kickoff + timedelta(hours=25), None) != same_day
    assert natural_game_id("nfl", home, away, datetime(2036, 11, 3, 4, 0, tzinfo=timezone.utc), None) == \
        natural_game_id("nfl", home, away, datetime(2036, 11, 2, 4, 0, tzinfo=timezone.utc), None)


def test_distinct_keys_give_distinct_ids():
    ids = {natural_id("game", "nfl", i) for i in range(20_000)}
    assert len(ids) == 20_000
    digests = {hashlib.blake2b(str(i).encode(), digest_size=16).digest() for i in range(1000)}
    assert len({_encode(d) for d in digests}) == 1000


def test_random_ids_are_distinct_and_use_every_letter_in_every_position():
    ids = [random_id("request")[len(PREFIXES["request"]):] for _ in range(1000)]
    assert len(set(ids)) == len(ids)
    for position in range(ID_LENGTH):
        assert {i[position] for i in ids} == set(ALPHABET)
