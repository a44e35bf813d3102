#!/usr/bin/env python3
"""Runs `swift test` under a time limit that really ends it, and names the tests that hung.

Usage: python3 .ci/bounded-test.py LIMIT_SECONDS [swift test flags...]

Why not `timeout LIMIT swift test`: swift test starts the test process in a process group of its own
and holds that process's output until it exits. A timeout therefore kills swift test, prints nothing
of the run, and leaves the test process behind (a spinning test then burns a core for ever). Here the
test process itself is killed, by PID, as a child of the swift test started here; swift test then
prints everything the run said and fails.

Swift Testing's `.timeLimit` records "Time limit was exceeded" on a test that runs too long but cannot
stop a test that never returns. So a test whose time limit ran out and that has still not ended
GRACE seconds later (READERKIT_HANG_GRACE, default 30) ends the run at once, the same way, without
waiting for LIMIT; so does a run in which tests are still running but none has started or ended for
QUIET seconds (READERKIT_QUIET_LIMIT, default 300; the longest test, the store kill loop, runs about
100 s), which catches a test without a time limit that never returns, or spins. (A test's own duration
is no measure: on a loaded machine an async test can wait minutes for a thread, as long as the run.)
Either way the tests that had started and not ended are listed from Swift Testing's event stream, and
the status is 124 (as `timeout` says); otherwise it is swift test's own.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

TIME_LIMIT_MESSAGE = "Time limit was exceeded"


def children(pid):
    """The processes whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                # The command name, in parentheses, may hold spaces: the fields after it are fixed.
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


class EventStream:
    """Swift Testing's JSON event stream, read as it grows."""

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.partial = b""
        self.running = {}  # test ID -> start order, for tests and suites started and not ended
        self.last_progress = time.monotonic()  # when a test last started or ended
        self.overdue = {}  # test ID -> when its time limit ran out (monotonic)
        self.started = 0

    def read(self):
        try:
            with open(self.path, "rb") as stream:
                stream.seek(self.offset)
                data = stream.read()
        except OSError:
            return
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("kind") != "event":
                continue
            payload = record.get("payload", {})
            kind = payload.get("kind")
            test = payload.get("testID")
            if test is None:
                continue
            if kind == "testStarted":
                self.started += 1
                self.running[test] = self.started
                self.last_progress = time.monotonic()
            elif kind in ("testEnded", "testSkipped"):
                self.running.pop(test, None)
                self.last_progress = time.monotonic()
            elif kind == "testCaseEnded":
                self.last_progress = time.monotonic()
                self.overdue.pop(test, None)
            elif kind == "issueRecorded":
                texts = [message.get("text", "") for message in payload.get("messages", [])]
                if any(text.startswith(TIME_LIMIT_MESSAGE) for text in texts):
                    self.overdue.setdefault(test, time.monotonic())

    def hung(self, grace):
        """The tests whose time limit ran out more than `grace` seconds ago and that still run."""
        now = time.monotonic()
        return [test for test, since in self.overdue.items() if test in self.running and now - since >= grace]

    def stalled(self, quiet):
        """Whether tests are running and none has started or ended for `quiet` seconds."""
        return bool(self.unfinished()) and time.monotonic() - self.last_progress >= quiet

    def unfinished(self):
        """The tests (not suites) started and not ended, in the order they started."""
        tests = [test for test in self.running if "/" in test]
        return sorted(tests, key=self.running.get)


def kill(pid):
    """Kills the test process `pid` and what it started: its process group when it has one of its own."""
    try:
        group = os.getpgid(pid)
        if group == pid and group != os.getpgid(0):
            os.killpg(group, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def main():
    if len(sys.argv) < 2 or not sys.argv[1].isdigit():
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 64
    limit = int(sys.argv[1])
    grace = int(os.environ.get("READERKIT_HANG_GRACE", "30"))
    quiet = int(os.environ.get("READERKIT_QUIET_LIMIT", "300"))
    with tempfile.TemporaryDirectory(prefix="bounded-test-") as directory:
        path = os.path.join(directory, "events.jsonl")
        events = EventStream(path)
        # A shell without job control starts background commands with SIGINT and SIGQUIT ignored, and an
        # ignored signal stays ignored across exec: the tests that interrupt a child would fail.
        run = subprocess.Popen(
            ["swift", "test", *sys.argv[2:], "--event-stream-output-path", path],
            preexec_fn=lambda: [signal.signal(number, signal.SIG_DFL) for number in (signal.SIGINT, signal.SIGQUIT)],
        )
        started = time.monotonic()
        reason = None
        while run.poll() is None:
            events.read()
            hung = events.hung(grace)
            if hung:
                reason = f"{', '.join(hung)} still ran {grace} s after its time limit"
            elif events.stalled(quiet):
                reason = f"no test started or ended for {quiet} s"
            elif time.monotonic() - started >= limit:
                reason = f"the run did not finish within {limit} s"
            if reason:
                break
            time.sleep(1)
        if reason is None:
            events.read()
            unfinished = events.unfinished()
            if run.returncode != 0 and unfinished:
                # A crash (a trap, a failed precondition) ends every test at once: name the ones it hit.
                print(f"bounded-test: the test process ended (status {run.returncode}) while these tests ran:",
                      file=sys.stderr)
                for test in unfinished:
                    print(f"  {test}", file=sys.stderr)
            return run.returncode
        for child in children(run.pid):
            kill(child)
        # swift test now prints what the killed process said, and exits.
        try:
            run.wait(timeout=30)
        except subprocess.TimeoutExpired:
            for child in children(run.pid):
                kill(child)
            run.kill()
            run.wait()
        events.read()
        print(f"bounded-test: stopped: {reason}; the tests still running then:", file=sys.stderr)
        for test in events.unfinished() or ["(none had started)"]:
            print(f"  {test}", file=sys.stderr)
        return 124


if __name__ == "__main__":
    sys.exit(main())
