"""The commands as a user (or `svc up`) runs them: a child process against the real parts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

from ingest.samples import SAMPLES

ROOT = Path(__file__).resolve().parents[2]
KEYS = {"records", "dead_lettered", "events", "accepted", "duplicate", "events_per_second"}


def svc(settings, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ, "KAFKA_BOOTSTRAP": settings.kafka_bootstrap, "DATABASE_URL": settings.database_url,
        "SVC_TOPIC_NAMESPACE": settings.topic_namespace, "SVC_DATA_DIR": str(settings.data_dir),
    }
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120)


def one_summary(result: subprocess.CompletedProcess) -> dict:
    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.splitlines()  # exactly one object on stdout
    summary = json.loads(line)
    assert set(summary) == KEYS and summary["accepted"] + summary["duplicate"] == summary["events"]
    return summary


def test_ingest_json_summary_and_second_run(settings, topics):
    path = str(SAMPLES / "oddsapi" / "nfl_2022_h2h_spreads_totals_american.json")
    first = one_summary(svc(settings, "ingest", "odds-api", path, "--json"))
    assert (first["records"], first["dead_lettered"], first["events"], first["accepted"]) == (43, 2, 1695, 1695)
    second = one_summary(svc(settings, "ingest", "odds-api", path, "--json"))
    assert (second["accepted"], second["duplicate"], second["dead_lettered"]) == (0, 1695, 2)
    table = svc(settings, "ingest", "odds-api", path)
    assert table.returncode == 0 and "1695" in table.stdout and "implausible overround" in table.stdout
    letters = svc(settings, "ingest", "dead-letters", "--json")
    assert json.loads(letters.stdout)["count"] == 2


def test_export_then_replay_into_the_sandbox(settings, topics, tmp_path):
    one_summary(svc(settings, "ingest", "nflverse-games", str(SAMPLES / "nflverse" / "games_2023_2025.csv"), "--json"))
    out = tmp_path / "live.jsonl"
    exported = svc(settings, "export", str(out), "--json")
    assert exported.returncode == 0 and json.loads(exported.stdout) == {"lines": 4033, "skipped": 0}
    replayed = one_summary(svc(settings, "replay", str(out), "--speed", "max", "--dataset", "test", "--json"))
    assert (replayed["records"], replayed["accepted"]) == (4033, 4033)


def test_errors_are_reported_not_raised(settings, topics, tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n1,2\n")
    result = svc(settings, "ingest", "nflverse-games", str(bad), "--json")
    assert result.returncode == 1 and "missing columns" in result.stderr and result.stdout == ""
    assert svc(settings, "replay", str(bad), "--speed", "0").returncode == 2  # a usage error
    assert svc(settings, "ingest", "nflverse-games", str(tmp_path / "missing.csv")).returncode == 2


def test_sample_load_and_sandbox_play(settings, topics):
    loaded = svc(settings, "sample", "load", "--json")
    assert loaded.returncode == 0, loaded.stderr
    results = json.loads(loaded.stdout)
    assert len(results) == 13 and results["test/sandbox pre-game"]["accepted"] == 939
    assert results["live/reference library"]["accepted"] == results["test/reference library"]["accepted"] >= 150
    assert results["live/strategy registry"]["accepted"] == results["test/strategy registry"]["accepted"] >= 15
    assert results["live/nflverse/games_2023_2025.csv"]["accepted"] == 4033
    played = one_summary(svc(settings, "sandbox", "play", "--speed", "max", "--json"))
    assert played["accepted"] == 5086


# ---- hostile records (issue 19): the rest goes on, each bad one is dead-lettered ------------

HOSTILE = {  # line -> the change that makes that row bad
    4: {"home_moneyline": "NaN", "away_moneyline": "Infinity"},
    5: {"stadium": "Arrow@FF@head"},  # a byte that is not UTF-8
    6: {"gameday": "0001-09-07"},
    7: {"week": "1" * 400},
    8: {"referee": "x" * 10_000_000},
    9: {"home_moneyline": "-100000000000", "away_moneyline": "100000000000"},
    10: {"spread_line": "1e300"},
    11: {"spread_line": "-1e300"},
    12: {"total_line": "-3"},
    13: {"game_id": "2023_01_\x00DET_KC"},
}


def hostile_games_file(path: Path) -> list[dict]:
    import csv
    import io

    reader = csv.DictReader(io.StringIO((SAMPLES / "nflverse" / "games_2023_2025.csv").read_text()))
    good = [next(reader) for _ in range(20)]
    rows = [good[0], {**good[1], "stadium": "Mercedes\u200b-Benz \x00Stadium\u202e"}]  # lines 2, 3: good
    for i, line in enumerate(sorted(HOSTILE)):
        rows.append({**good[2 + i], **HOSTILE[line]})
    rows.append(good[19])  # line 14: good, after every bad one
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=reader.fieldnames, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_bytes(out.getvalue().encode().replace(b"@FF@", b"\xff"))
    return rows


def test_hostile_rows_are_dead_lettered_and_the_rest_ingested(settings, topics, tmp_path):
    path = tmp_path / "hostile_games.csv"
    rows = hostile_games_file(path)
    result = svc(settings, "ingest", "nflverse-games", str(path), "--json")
    summary = one_summary(result)
    assert summary["records"] == len(rows) and summary["accepted"] == summary["events"] > 0
    letters = json.loads(svc(settings, "ingest", "dead-letters", "--json", "--limit", "0").stdout)["dead_letters"]
    by_line: dict[int, list[dict]] = {}
    for d in letters:
        by_line.setdefault(int(d["location"].split()[1]), []).append(d)
    # a bad market takes only itself; a bad row takes the row
    assert set(by_line) == set(HOSTILE) and summary["dead_lettered"] == len(letters)
    assert {d["location"] for d in by_line[9]} == {"line 9 (h2h closing line)"}
    assert {d["location"] for d in by_line[12]} == {"line 12 (totals closing line)"}
    for line in (5, 6, 7, 8, 13):
        (d,) = by_line[line]
        assert d["location"] == f"line {line}" and d["reason"] and len(d["raw"].encode()) <= 65_536
    assert "not UTF-8" in by_line[5][0]["reason"] and "\\xff" in by_line[5][0]["raw"]
    assert "10000000 characters" in by_line[8][0]["reason"]

    # the good rows are on the log; the names are stored clean; nothing out of bounds got there
    exported = tmp_path / "out.jsonl"
    assert svc(settings, "export", str(exported), "--json").returncode == 0
    events = [json.loads(line)["event"] for line in exported.read_text().splitlines()]
    games = {e["source_id"]: e for e in events if e["type"] == "game.scheduled"}
    assert {rows[0]["game_id"], rows[1]["game_id"], rows[-1]["game_id"], rows[7]["game_id"]} <= set(games)
    assert rows[4]["game_id"] not in games and rows[5]["game_id"] not in games  # year 0001, 400 digits
    assert games[rows[1]["game_id"]]["venue"] == "Mercedes-Benz Stadium"
    prices = [Decimal(o["price"]) for e in events if e["type"] == "price.quoted" for o in e["outcomes"]]
    assert prices and all(100 <= abs(p) <= 1_000_000 for p in prices)

    # --strict: the same completed run, exit 3; nothing appended twice, no dead letter twice
    strict = svc(settings, "ingest", "nflverse-games", str(path), "--json", "--strict")
    assert strict.returncode == 3 and "dead-lettered" in strict.stderr
    again = json.loads(strict.stdout)
    assert (again["accepted"], again["duplicate"], again["dead_lettered"]) == (0, summary["events"], len(letters))
    assert json.loads(svc(settings, "ingest", "dead-letters", "--json").stdout)["count"] == len(letters)
    clean = tmp_path / "clean.csv"
    clean.write_text("\n".join(path.read_text(errors="replace").splitlines()[:3]) + "\n")
    assert svc(settings, "ingest", "nflverse-games", str(clean), "--strict", "--json").returncode == 0


def test_replay_counts_an_event_the_file_holds_twice_once(settings, topics, tmp_path):
    one_summary(svc(settings, "ingest", "odds-api", str(SAMPLES / "oddsapi" / "nfl_2021_h2h_decimal.json"), "--json"))
    out = tmp_path / "live.jsonl"
    assert svc(settings, "export", str(out), "--json").returncode == 0
    lines = out.read_text().splitlines()
    twice = tmp_path / "twice.jsonl"  # a log that received every event twice
    twice.write_text("\n".join(lines + lines) + "\n")
    first = one_summary(svc(settings, "replay", str(twice), "--dataset", "test", "--json"))
    assert (first["records"], first["events"], first["accepted"], first["duplicate"]) == (
        2 * len(lines), len(lines), len(lines), 0)
    second = one_summary(svc(settings, "replay", str(twice), "--dataset", "test", "--json"))
    assert (second["events"], second["accepted"], second["duplicate"]) == (len(lines), 0, len(lines))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "\nnot json\n")
    strict = svc(settings, "replay", str(bad), "--dataset", "test", "--json", "--strict")
    assert strict.returncode == 3 and json.loads(strict.stdout)["dead_lettered"] == 1
