"""Where a served process's event loop is blocked: a diagnostic for the live_api bench.

A callback on the loop marks the time every millisecond; a thread of its own checks the mark and,
while the loop has not marked for longer than `threshold`, samples the loop thread's stack
(sys._current_frames). When the loop marks again the slice is written as one JSON line: how
long the loop did not turn and the stacks sampled meanwhile (innermost project frames first).
A slice with no sample is the process waiting for a core (the box is shared), not its own work.
`summarise` folds a file of slices into the longest ones and the frames most often seen."""

from __future__ import annotations

import asyncio
import collections
import json
import sys
import threading
import time
from pathlib import Path

SAMPLE_SECONDS = 0.001


def start(path: Path, threshold: float = 0.005) -> None:
    """On the running loop: watch it and append its blocked slices to `path`."""
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    mark = [time.perf_counter()]

    def tick() -> None:
        mark[0] = time.perf_counter()
        loop.call_later(SAMPLE_SECONDS, tick)

    loop.call_soon(tick)
    sys.setswitchinterval(SAMPLE_SECONDS)  # the watcher gets the GIL within a millisecond of asking

    def watch() -> None:
        out = open(path, "a", buffering=1)
        samples: list[list[str]] = []
        blocked_since = None
        while True:
            time.sleep(SAMPLE_SECONDS)
            now = time.perf_counter()
            last = mark[0]
            if now - last > threshold + SAMPLE_SECONDS:
                blocked_since = last
                frame = sys._current_frames().get(loop_thread)
                stack = []
                while frame is not None:
                    code = frame.f_code
                    stack.append(f"{code.co_filename.rsplit('/site-packages/', 1)[-1]}:{code.co_name}:{frame.f_lineno}")
                    frame = frame.f_back
                samples.append(stack)
            elif blocked_since is not None:
                out.write(json.dumps({"at": time.time(), "ms": (last - blocked_since) * 1000 + threshold * 1000,
                                      "samples": samples}) + "\n")
                samples = []
                blocked_since = None

    threading.Thread(target=watch, name="loop-watch", daemon=True).start()


def summarise(path: Path, load: str | None = None, top: int = 15) -> str:
    """The slices of the file, or of one load only (the bench marks where each load starts)."""
    slices, current = [], None
    for line in Path(path).read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            if "load" in row:
                current = row["load"]
            elif load is None or current == load:
                slices.append(row)
    if not slices:
        return "no blocked slice"
    lines = [f"{len(slices)} slices over the threshold; total {sum(s['ms'] for s in slices):.0f} ms; "
             f"longest {max(s['ms'] for s in slices):.1f} ms"]
    inner: collections.Counter[str] = collections.Counter()
    ours: collections.Counter[str] = collections.Counter()
    for s in slices:
        for stack in s["samples"]:
            inner[stack[0]] += 1
            mine = [f for f in stack if "/wt/" in f or "/work/" in f]
            if mine:
                ours[" < ".join(f.rsplit("/", 1)[-1] for f in mine[:4])] += 1
    lines.append("innermost frames:")
    lines += [f"  {n:5d} {f}" for f, n in inner.most_common(top)]
    lines.append("project frames (innermost first):")
    lines += [f"  {n:5d} {f}" for f, n in ours.most_common(top)]
    lines.append("longest slices:")
    for s in sorted(slices, key=lambda s: -s["ms"])[:top]:
        first = s["samples"][0][:1] if s["samples"] else ["(no sample: waiting for a core)"]
        mine = [f for f in (s["samples"][0] if s["samples"] else []) if "/work/" in f][:3]
        lines.append(f"  {s['ms']:6.1f} ms, {len(s['samples'])} samples: {first[0]} | {' < '.join(mine)}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summarise(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None))
