"""`svc up`'s child logs rotate by size and keep a bounded number of files (issue 19, item 6).

Real processes write through the supervisor's own plumbing (no broker or database needed)."""

from __future__ import annotations

import sys
import time

from infra.settings import load_settings
from infra.supervisor import Child, Supervisor

# a chatty child: numbered lines of 100 characters, 3,000 of them (300 kB), one not UTF-8
CHATTY = (
    "import sys\n"
    "for i in range(3000):\n"
    "    sys.stdout.buffer.write(b'line %06d ' % i + b'x' * 88 + b'\\n')\n"
    "sys.stdout.buffer.write(b'last \\xff line\\n')\n"
    "sys.stdout.flush()\n"
)


def run_child(tmp_path, code: str, restarts: int = 0, **settings):
    s = load_settings(env={}, use_stack=False, data_dir=tmp_path / "svc", **settings)
    sup = Supervisor(s, sample=False)
    sup.log_dir.mkdir(parents=True, exist_ok=True)
    sup.run_dir.mkdir(parents=True, exist_ok=True)
    child = Child("chatty", [sys.executable, "-c", code], {}, one_shot=True)
    sup._add(child)
    for _ in range(restarts + 1):
        sup._start(child)
        child.proc.wait(30)
        sup._reap(child)
    sup.shutdown()
    return sup.log_dir


def test_a_child_log_rotates_by_size_and_keeps_a_bounded_number(tmp_path):
    logs = run_child(tmp_path, CHATTY, log_max_bytes=20_000, log_backups=3)
    files = sorted(p.name for p in logs.iterdir())
    assert files == ["chatty.log", "chatty.log.1", "chatty.log.2", "chatty.log.3"]  # no .4: the oldest went
    for name in files:
        assert (logs / name).stat().st_size <= 20_000
    newest = (logs / "chatty.log").read_text().splitlines()
    assert newest[-1] == "last \\xff line" and newest[-2].startswith("line 002999 ")
    # whole lines, in order, across the kept files (oldest first), none cut by a rotation
    kept = [line for name in reversed(files) for line in (logs / name).read_text().splitlines()]
    numbers = [int(line.split()[1]) for line in kept[:-1]]
    assert numbers == list(range(numbers[0], 3000)) and all(len(line) == 100 for line in kept[:-1])
    assert numbers[0] > 0  # the oldest lines were dropped with the oldest file


def test_a_restarted_child_goes_on_in_the_same_file_and_zero_never_rotates(tmp_path):
    code = "print('hello from the child', flush=True)"
    logs = run_child(tmp_path, code, restarts=2, log_max_bytes=0, log_backups=1)
    assert sorted(p.name for p in logs.iterdir()) == ["chatty.log"]
    assert (logs / "chatty.log").read_text().splitlines() == ["hello from the child"] * 3


def test_a_line_without_end_is_written_in_bounded_pieces(tmp_path):
    started = time.monotonic()
    logs = run_child(tmp_path, "import sys; sys.stdout.write('y' * 300_000); sys.stdout.flush()",
                     log_max_bytes=100_000, log_backups=5)
    assert time.monotonic() - started < 30
    sizes = [p.stat().st_size for p in logs.iterdir()]
    assert sum(sizes) >= 300_000 and max(sizes) <= 100_000


def test_a_child_that_exited_before_the_shutdown_leaves_no_pid_file(tmp_path):
    # a CI run: the one-shot content load finished just before Ctrl-C, the supervisor's loop had
    # not reaped it yet, and its stop skipped a child no longer running: content.pid was left
    s = load_settings(env={}, use_stack=False, data_dir=tmp_path / "svc")
    sup = Supervisor(s, sample=False)
    sup.log_dir.mkdir(parents=True, exist_ok=True)
    sup.run_dir.mkdir(parents=True, exist_ok=True)
    child = Child("content", [sys.executable, "-c", "pass"], {}, one_shot=True)
    sup._add(child)
    sup._start(child)
    child.proc.wait(30)  # exited, not reaped
    assert child.pid_file.exists()
    sup.shutdown()
    assert list(sup.run_dir.glob("*.pid")) == []
