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
waiting for LIMIT; so does any test, with or without a time limit, still running TEST_LIMIT seconds
after it started (READERKIT_TEST_LIMIT, default 300: the whole suite takes about a minute). Either way
the tests that had started and not ended are listed from Swift Testing's event stream, and the status
is 124 (as `timeout` says); otherwise it is swift test's own.
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
        self.since = {}  # test ID -> when it started (monotonic), for the same
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
                self.since[test] = time.monotonic()
            elif kind in ("testEnded", "testSkipped"):
                self.running.pop(test, None)
                self.since.pop(test, None)
                self.overdue.pop(test, None)
            elif kind == "issueRecorded":
                texts = [message.get("text", "") for message in payload.get("messages", [])]
                if any(text.startswith(TIME_LIMIT_MESSAGE) for text in texts):
                    self.overdue.setdefault(test, time.monotonic())

    def hung(self, grace):
        """The tests whose time limit ran out more than `grace` seconds ago and that still run."""
        now = time.monotonic()
        return [test for test, since in self.overdue.items() if test in self.running and now - since >= grace]

    def overlong(self, limit):
        """The tests (not suites) that started more than `limit` seconds ago and still run."""
        now = time.monotonic()
        return [test for test, since in self.since.items() if "/" in test and now - since >= limit]

    def unfinished(self):
        """The tests (not suites) started and not ended, in the order they started."""
        tests = [test for test in self.running if "/" in test]
        return sorted(tests, key=self.running.get)


def main():
    if len(sys.argv) < 2 or not sys.argv[1].isdigit():
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 64
    limit = int(sys.argv[1])
    grace = int(os.environ.get("READERKIT_HANG_GRACE", "30"))
    test_limit = int(os.environ.get("READERKIT_TEST_LIMIT", "300"))
    with tempfile.TemporaryDirectory(prefix="bounded-test-") as directory:
        path = os.path.join(directory, "events.jsonl")
        events = EventStream(path)
        run = subprocess.Popen(["swift", "test", *sys.argv[2:], "--event-stream-output-path", path])
        started = time.monotonic()
        reason = None
        while run.poll() is None:
            events.read()
            hung = events.hung(grace)
            overlong = events.overlong(test_limit)
            if hung:
                reason = f"{', '.join(hung)} still ran {grace} s after its time limit"
            elif overlong:
                reason = f"{', '.join(overlong)} ran longer than {test_limit} s"
            elif time.monotonic() - started >= limit:
                reason = f"the run did not finish within {limit} s"
            if reason:
                break
            time.sleep(1)
        if reason is None:
            return run.returncode
        for child in children(run.pid):
            os.kill(child, signal.SIGKILL)
        # swift test now prints what the killed process said, and exits.
        try:
            run.wait(timeout=30)
        except subprocess.TimeoutExpired:
            for child in children(run.pid):
                os.kill(child, signal.SIGKILL)
            run.kill()
            run.wait()
        events.read()
        print(f"bounded-test: stopped: {reason}; the tests still running then:", file=sys.stderr)
        for test in events.unfinished() or ["(none had started)"]:
            print(f"  {test}", file=sys.stderr)
        return 124


if __name__ == "__main__":
    sys.exit(main())
