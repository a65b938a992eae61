"""The commands as a user (or `svc up`) runs them: a child process against the real parts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
    assert len(results) == 9 and results["test/sandbox pre-game"]["accepted"] == 939
    assert results["live/nflverse/games_2023_2025.csv"]["accepted"] == 4033
    played = one_summary(svc(settings, "sandbox", "play", "--speed", "max", "--json"))
    assert played["accepted"] == 5086
