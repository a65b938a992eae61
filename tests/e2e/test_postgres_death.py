"""The projector never hangs on a database that dies under it, and `svc doctor` tells a
projector that stopped committing from one that is merely busy, or was idle through a quiet
spell and has just been handed new input (issue 19: doctor called that stalled, counting from
the last commit rather than from when the projector fell behind).

Reproduces issue 19.1: SIGKILL of the embedded Postgres while the projector commits under load
left it waiting forever in faust's stop, never restarted, with `svc doctor` saying ok.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from pathlib import Path

from tests.e2e.stack import Stack, alive

ODDS_FILE = Path("ingest/samples/oddsapi/soccer_epl_2024_h2h_decimal.json")


def _wait(predicate, timeout: float, what: str, stack: Stack):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"{what} within {timeout}s\n{stack.log_text()}")


def _lag_answers(stack: Stack) -> bool:
    """What `svc lag --json` exiting 0 shows (the read models' tracking rows and the log's ends
    can be read), measured in this process: polled after each kill, a CLI process per poll cost
    an interpreter start each (0.6 CPU s, seconds of wall on a loaded box)."""
    from infra.db import connect
    from infra.settings import load_settings
    from projections.lag import measure

    settings = load_settings(data_dir=stack.data_dir, env={"SVC_DATA_DIR": str(stack.data_dir)})

    async def go() -> None:
        conn = await connect(settings.require_database())
        try:
            await measure(settings, conn)
        finally:
            await conn.close()

    try:
        asyncio.run(asyncio.wait_for(go(), 30))
    except Exception:  # as any failure makes the command exit non-zero
        return False
    return True


def _doctor(stack: Stack) -> tuple[int, dict]:
    code, report = stack.svc_json("doctor", timeout=60)
    assert report is not None
    return code, report


def _failing(report: dict) -> dict:
    """The parts of a doctor report that failed, whole (the full report's repr is cut short
    in a failure message, and a CI run failed with only the healthy parts in view)."""
    return {name: part for name, part in report.items() if part.get("ok") is False}


# the stall rule's limit, shortened from its 30 s so the quiet spell and the stall take less
# waiting (the test waits it out twice); still several times what one `svc ingest` of the small
# NEW_INPUT plus one `svc doctor` take on a loaded box (the first report must come within it)
STALL_AFTER = 15.0
NEW_INPUT = Path("ingest/samples/oddsapi/nfl_2023_draftkings_spreads_american.json")  # 13 KB


def test_doctor_reports_a_projector_that_is_behind_and_not_committing(tmp_path):
    stack = Stack(tmp_path / "svc", SVC_STALL_AFTER_SECONDS=str(STALL_AFTER))
    try:
        stack.wait_health()
        # `svc up` loads the reference library and the strategy registry: let the projector
        # take them in first
        stack.wait_content()
        # its one process loaded both kinds into both datasets, every file taken
        loaded = (stack.data_dir / "logs" / "content.log").read_text(errors="replace")
        for run in ("reference -> live", "strategies -> live", "reference -> test", "strategies -> test"):
            row = next((line for line in loaded.splitlines() if f" {run} " in line), None)
            assert row is not None, loaded
            records, dead_lettered = (int(cell) for cell in row.split("│")[2:4])
            assert records > 0 and dead_lettered == 0, row
        # commit once more so the tracking rows have a time, then a quiet spell longer than the
        # limit, counted from when the projector was seen caught up (its last commit came before)
        assert stack.svc("ingest", "odds-api", str(ODDS_FILE)).returncode == 0
        assert stack.svc("lag", "--wait", "120").returncode == 0, stack.log_text()
        quiet_from = time.monotonic()
        code, report = _doctor(stack)  # caught up and healthy: the spell has begun
        assert code == 0, _failing(report)
        live = report["projector"]["datasets"]["live"]
        assert live["behind"] == 0 and live["stalled"] is False
        time.sleep(max(quiet_from + STALL_AFTER + 1 - time.monotonic(), 0))
        # freeze the projector: the new input below stays unapplied while doctor looks
        projector = stack.pid("projector")
        os.kill(projector, signal.SIGSTOP)
        try:
            done = stack.svc("ingest", "odds-api", str(NEW_INPUT))
            assert done.returncode == 0, done.stderr
            # behind, and the last commit is older than the limit, but the input is new: the
            # projector has not been behind for long, so this is no stall (issue 19: it was)
            code, report = _doctor(stack)
            live = report["projector"]["datasets"]["live"]
            assert live["behind"] > 0 and live["last_commit_s"] > STALL_AFTER, report["projector"]
            assert live["stalled"] is False and code == 0, _failing(report) or report["projector"]

            # still frozen past the limit: that is a stall. The new input has been waiting
            # `waiting_s` already (measured before doctor returned): wait out the rest of the
            # limit and a second more, not the whole limit again
            time.sleep(max(STALL_AFTER - live["waiting_s"], 0) + 1)
            code, report = _doctor(stack)
            assert code == 1, report
            part = report["projector"]
            assert part["ok"] is False and "not committing" in part["error"] and "live" in part["error"]
            assert part["datasets"]["live"]["behind"] > 0
            assert part["datasets"]["live"]["stalled"] is True
        finally:
            os.kill(projector, signal.SIGCONT)
        # thawed, it catches up (or, having seen its own stall, exits and is restarted)
        assert stack.svc("lag", "--wait", "120").returncode == 0, stack.log_text()
        code, report = _doctor(stack)
        assert code == 0, _failing(report)
        assert report["projector"]["datasets"]["live"]["behind"] == 0
    finally:
        stack.stop()


def test_stack_recovers_from_postgres_killed_at_ten_points_under_load(tmp_path):
    rng = random.Random(19)
    stack = Stack(tmp_path / "svc", sample=True, SVC_SANDBOX_SPEED="120", SVC_RESTART_BACKOFF_MAX="1")
    try:
        stack.wait_health(timeout=120)
        projector_pids = {stack.pid("projector")}
        for kill in range(10):
            # the projector is up and committing: the sample load and the sandbox keep it busy
            _wait(lambda: stack.pid("projector") and alive(stack.pid("projector")) and _lag_answers(stack),
                  60, f"kill {kill}: the projector did not come back", stack)
            time.sleep(rng.uniform(0.3, 3.0))
            postgres = stack.pid("postgres")
            assert postgres and alive(postgres)
            os.kill(postgres, signal.SIGKILL)
            stack.wait_pid_change("postgres", postgres, timeout=60)
            projector_pids.add(stack.pid("projector"))

        stack.wait_health(timeout=120)
        up_log = stack.data_dir.parent / f"{stack.data_dir.name}-up.log"
        _wait(lambda: '"child": "sample", "event": "finished"' in up_log.read_text(errors="replace"),
              240, "the sample load did not finish", stack)
        lag = stack.svc("lag", "--wait", "180", timeout=240)
        assert lag.returncode == 0, lag.stdout + lag.stderr + stack.log_text()
        # the sandbox plays on (it was restarted with Postgres each time), so the log can grow
        # between `lag` and `doctor`, and the projector may be between restarts: it must be seen
        # healthy and caught up, within a minute
        seen: list[dict] = []

        def healthy_and_caught_up() -> bool:
            code, report = _doctor(stack)
            seen.append(report)
            return code == 0 and all(d["behind"] == 0 for d in report["projector"]["datasets"].values())

        try:
            _wait(healthy_and_caught_up, 60, "doctor: healthy and caught up", stack)
        except AssertionError as exc:
            raise AssertionError({"failing": _failing(seen[-1]), "projector": seen[-1]["projector"]}) from exc
        projector_pids.add(stack.pid("projector"))
        # the projector had to be restarted at least once: it did not just sit it out
        assert len(projector_pids - {None}) > 1, projector_pids
        verify = stack.svc("projections", "verify", timeout=300)
        assert verify.returncode == 0 and "identical" in verify.stdout, verify.stdout + verify.stderr
    finally:
        stack.stop()
