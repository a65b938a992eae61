"""Answers: the share of the question set answered correctly (all of it, and the held-out part),
the share of out-of-scope questions refused, and at 16 concurrent clients the finished-answer
p50/p99 and the time to `answer.started` of a streamed answer.

Served as bench_api serves the read API (SVC_API_SERVER; one worker, the Scale plan's rate window
lifted) over the sample read models, the library and the strategy registry. Correctness: each
question of tests/support/answer_questions.toml once, checked as the integration test checks it
(tests/support/answer_check.py). Latency: 16 keep-alive connections (tests/perf/answer_load.py, its
own process), each posting the set's questions in turn for `SECONDS`; baseline GET /health under
the same 16 connections in the same run.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import asyncpg
import httpx

from tests.perf.run import ROOT, BenchContext, Figure
from tests.support.api_fixtures import make_key
from tests.support.projection_harness import project
from tests.support.sample_fold import sample_events
from tests.support.answer_check import check, load_questions
from tests.support.library_models import insert_library
from tests.support.live_server import api_server, served_by
from tests.support.registry_models import insert_registry

KEY_SECRET = "bench-secret"
CLIENTS = 16
SECONDS = 10
WARMUP_SECONDS = 2


def _load(base: str, key: str, questions_file: Path, mode: str, seconds: float) -> dict:
    """`CLIENTS` keep-alive connections for `seconds` (tests/perf/answer_load.py, its own process)."""
    out = subprocess.run(
        [sys.executable, "-m", "tests.perf.answer_load", base, str(questions_file), "--mode", mode,
         "--connections", str(CLIENTS), "--seconds", str(seconds), "--header", f"Authorization: Bearer {key}"],
        capture_output=True, text=True, cwd=ROOT, timeout=seconds + 120,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


async def run(ctx: BenchContext) -> list[Figure]:
    settings = await ctx.fresh_settings(key_secret=KEY_SECRET)
    conn = await asyncpg.connect(settings.database_url)
    try:
        await project(settings, conn, sample_events(), "live")
        await insert_library(conn, "live")
        await insert_registry(conn, "live")
        key = await make_key(settings.database_url, "bench", {"run:answers"}, secret=KEY_SECRET)
    finally:
        await conn.close()
    questions = load_questions()
    log = ctx.workdir / "answers-bench.log"
    with api_server(settings.database_url, settings.data_dir, KEY_SECRET, log, app="tests.perf.api_bench_app:app") as base:
        right, wrong, refused = [], [], 0
        async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30) as c:
            for q in questions:
                body = {"question": q.q, **({"state": q.spec["state"]} if "state" in q.spec else {})}
                r = await c.post("/v1/answers", json=body)
                why = check(q, r.status_code, r.json())
                (wrong if why else right).append((q, why))
                if q.out_of_scope and r.status_code == 201 and r.json()["tier"] == "refusal":
                    refused += 1
        texts = ctx.workdir / "answer-questions.json"
        texts.write_text(json.dumps([q.q for q in questions if "state" not in q.spec]))
        await asyncio.to_thread(_load, base, key, texts, "answer", WARMUP_SECONDS)
        health = await asyncio.to_thread(_load, base, key, texts, "health", SECONDS)
        finished = await asyncio.to_thread(_load, base, key, texts, "answer", SECONDS)
        started = await asyncio.to_thread(_load, base, key, texts, "stream", SECONDS)
    n = len(questions)
    held = [q for q in questions if q.held_out]
    held_right = sum(1 for q, _ in right if q.held_out)
    oos = [q for q in questions if q.out_of_scope]
    cats = sorted({q.spec.get("category", 0) for q in questions})
    missed = "; ".join(f"{q.q!r}: {why}" for q, why in wrong)[:600]
    note = f"{CLIENTS} clients, {SECONDS}s, tests/perf/answer_load.py, {served_by()} 1 worker; the question set in turn"
    if finished["errors"] or started["errors"]:
        note += f"; errors: {finished['errors']} finished, {started['errors']} streamed"
    return [
        Figure(f"answers: correct, all {n} questions ({len(cats)} categories)", len(right) / n, "share", target=">= 0.9",
               note=("missed: " + missed) if missed else ""),
        Figure(f"answers: correct, held-out {len(held)} questions", held_right / len(held) if held else 0.0, "share",
               target=">= 0.9"),
        Figure(f"answers: out-of-scope refused ({len(oos)} questions)", refused / len(oos) if oos else 0.0, "share",
               target="1.0"),
        Figure("POST /v1/answers finished answer p99", finished["p99_ms"], "ms", "GET /health p99, same clients",
               health["p99_ms"], "<= 100 ms", f"p50 {finished['p50_ms']:.1f} ms; {finished['rate']:.0f} answers/s; {note}"),
        Figure("POST /v1/answers time to answer.started p99 (streamed)", started["p99_ms"], "ms",
               "GET /health p99, same clients", health["p99_ms"], "<= 100 ms", f"p50 {started['p50_ms']:.1f} ms"),
    ]
