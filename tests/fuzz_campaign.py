"""The long fuzzing campaign: worker processes generate and check cases until the time is up.

    python tests/fuzz_campaign.py --seconds 1800 --workers 2 --out tests/fuzz_cases

Each worker checks the cases of its own seeds (``base + slot + workers * n``)
and reports every result to the parent, which keeps one saved case per class
of failure (exception type and innermost cdckit function, or the broken
invariant), replacing it when a smaller input shows the same failure. A
worker whose case runs past the time limit twice over (a hang the alarm
could not stop) or that dies (a crash) is replaced, and its case saved as
such. A summary (cases per family, failures per class) is printed every
minute and at the end; saved cases are replayed by tests/test_fuzz.py.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import queue
import random
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fuzzing  # noqa: E402

#: Seconds a case may run before its worker is killed: both reads may use their whole alarm.
WATCHDOG = fuzzing.TIME_LIMIT * 2 + 15


def worker(slot: int, workers: int, base: int, first: int, deadline: float, results: Any, current: Any,
           started: Any) -> None:
    """Generate and check cases until ``deadline``; put ``(slot, seed, family, problems, size)`` on ``results``."""
    number = first
    while time.time() < deadline:
        seed = base + slot + workers * number
        current[slot], started[slot] = seed, time.time()
        size = 0
        try:
            case = fuzzing.generate(random.Random(seed))
            family, size = case.family, input_size(case)
            problems = fuzzing.check(case)
        except Exception as err:  # noqa: BLE001 - a fuzzer bug is reported, not fatal
            family, problems = "fuzzer", [f"[fuzzer error: {type(err).__name__}] {err}"]
        results.put((slot, seed, family, problems, size))
        number += 1
    current[slot] = -1
    results.put((slot, None, "done", [], 0))


class Campaign:
    """The parent's state: counts, the saved case of each failure class, and the workers."""

    def __init__(self, out: Path, workers: int, base: int, deadline: float) -> None:
        self.out = out
        self.workers = workers
        self.base = base
        self.deadline = deadline
        self.cases: Counter[str] = Counter()
        self.failing_cases: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.saved: dict[str, tuple[Path, int]] = {}  # class -> (folder, input size)
        self.examples: dict[str, str] = {}
        self.context = mp.get_context("spawn")
        self.results = self.context.Queue()
        self.current = self.context.Array("q", [-1] * workers)
        self.started = self.context.Array("d", [0.0] * workers)
        self.processes: dict[int, Any] = {}
        self.done: set[int] = set()

    def start(self, slot: int, first: int = 0) -> None:
        """Start (or restart) the worker of ``slot`` at its ``first``-th seed."""
        process = self.context.Process(
            target=worker, args=(slot, self.workers, self.base, first, self.deadline, self.results, self.current,
                                 self.started), daemon=True)
        process.start()
        self.processes[slot] = process

    def record(self, seed: int, family: str, problems: list[str], size: int) -> None:
        """Count one case and keep it when it shows a failure class not seen (or seen with a larger input)."""
        self.cases[family] += 1
        if not problems:
            return
        self.failing_cases[family] += 1
        classes = {fuzzing.problem_class(p): p for p in problems}
        for name, problem in classes.items():
            self.failures[name] += 1
            self.examples.setdefault(name, f"seed {seed}: {problem[:240]}")
        wanted = [name for name in classes if name not in self.saved or self.saved[name][1] > size]
        if not wanted or family == "fuzzer":
            return
        case = fuzzing.generate(random.Random(seed))
        case.note = (case.note + f"; seed {seed}").lstrip("; ")
        folder = fuzzing.save(case, problems, self.out)
        for name in wanted:
            old = self.saved.get(name)
            self.saved[name] = (folder, size)
            self.examples[name] = f"seed {seed}: {classes[name][:240]}"
            if old is not None and old[0] != folder and all(f != old[0] for f, _ in self.saved.values()):
                shutil.rmtree(old[0], ignore_errors=True)

    def watch(self) -> None:
        """Replace a worker that hangs past :data:`WATCHDOG` seconds or died; record its case."""
        now = time.time()
        for slot, process in list(self.processes.items()):
            if slot in self.done:
                continue
            seed = self.current[slot]
            hung = seed >= 0 and now - self.started[slot] > WATCHDOG
            if not hung and process.is_alive():
                continue
            if hung:
                process.kill()
                problem = f"[hang past the watchdog] case ran over {WATCHDOG} s and its worker was killed"
            else:
                problem = f"[worker died] exit code {process.exitcode} while checking the case"
            process.join()
            if seed >= 0:
                case = fuzzing.generate(random.Random(seed))
                self.record(seed, case.family, [problem], input_size(case))
                self.start(slot, (seed - self.base - slot) // self.workers + 1)
            else:
                self.done.add(slot)

    def summary(self, final: bool = False) -> str:
        """Cases run per family and failures per class, as printable lines."""
        total = sum(self.cases.values())
        lines = [("final" if final else "so far") + f": {total} cases, "
                 f"{sum(self.failing_cases.values())} failing, {len(self.failures)} failure classes"]
        for family, count in sorted(self.cases.items()):
            lines.append(f"  {family:14} {count:7} cases  {self.failing_cases[family]:6} failing")
        for name, count in self.failures.most_common():
            where = self.saved.get(name, (Path("-"), 0))[0]
            lines.append(f"  {count:6}x {name}\n          {self.examples[name]}\n          saved: {where}")
        return "\n".join(lines)


def input_size(case: fuzzing.Case) -> int:
    """The size of a case's input (bytes, characters or items), to prefer small examples."""
    if case.kind in ("payload_bytes", "payload_str"):
        return len(case.data)
    if case.kind == "iterable":
        return len(fuzzing.repr_items(case.data))
    return sum(len(data) for data in case.files.values()) + 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1800, help="how long to run (default 1800)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--out", type=Path, default=fuzzing.CASES_DIR, help="where failing cases are saved")
    parser.add_argument("--seed", type=int, default=None, help="base seed (default: from the clock)")
    args = parser.parse_args(argv)
    base = args.seed if args.seed is not None else int(time.time()) * 1000
    start = time.time()
    campaign = Campaign(args.out, max(1, args.workers), base, start + args.seconds)
    print(f"fuzzing cdckit.read for {args.seconds:.0f} s with {campaign.workers} workers, base seed {base}, "
          f"failing cases to {args.out}", flush=True)
    for slot in range(campaign.workers):
        campaign.start(slot)
    last_print = time.time()
    try:
        while len(campaign.done) < campaign.workers:
            try:
                slot, seed, family, problems, size = campaign.results.get(timeout=1)
            except queue.Empty:
                slot = None
            else:
                if seed is None:
                    campaign.done.add(slot)
                else:
                    campaign.record(seed, family, problems, size)
            campaign.watch()
            if time.time() - last_print >= 60:
                print(f"[{time.time() - start:.0f} s] " + campaign.summary(), flush=True)
                last_print = time.time()
            if time.time() > campaign.deadline + WATCHDOG + 30:
                break  # a worker that never reports back
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    finally:
        for process in campaign.processes.values():
            if process.is_alive():
                process.kill()
    print(campaign.summary(final=True), flush=True)
    return 1 if campaign.failures else 0


if __name__ == "__main__":
    sys.exit(main())
