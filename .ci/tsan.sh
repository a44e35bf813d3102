#!/usr/bin/env bash
# The test suite under ThreadSanitizer: a data race anywhere the tests reach fails CI.
#
# Builds the tests (and the readerctl executable they start) with -sanitize=thread into .build-tsan
# (apart from the normal build), then:
#   1. proves ThreadSanitizer is awake and sees the package's lock: the control test must get a report
#      for its deliberate race, and none for the same work through `Locked`;
#   2. runs the suites (below; READERKIT_TSAN_FILTER=<regex> picks some, READERKIT_TSAN_SKIP=<regex>
#      leaves others out, empty for none) with the control's deliberate race running among
#      them, and fails unless the control's race is reported and nothing else is. So each run proves
#      the path a real race takes: from a test in the parallel run, through ThreadSanitizer, into the
#      files read here, to a failure.
# ThreadSanitizer writes its reports to files (log_path), one per process: the test runners' and those
# of every readerctl process the tests start (built with ThreadSanitizer too), whose standard error the
# tests read and compare. The whole log of the run is kept in .build-tsan/tsan-tests.log, its reports
# in .build-tsan/tsan-tests.log.reports.
# The suites: every suite of every test target (about 1,300 tests: the engines, sessions, simulator,
# codecs, state machines, the PC/SC radio against pcscd, the BlueZ central against the D-Bus peer),
# except those that start the readerctl executable (readerctlTests, ReaderctlBlueZTests, 180 tests),
# for time. Under ThreadSanitizer each readerctl process costs several times the CPU; they take turns
# at ChildProcessGate (as many at once as there are cores), so with the other suites their tests waited
# for a turn past their one-minute limits (what stalled them before); those waits no longer count
# (`workTimeLimit`, TestSupport), but on two cores the readerctl processes then starve the other suites:
# in one run of everything on a loaded machine (load 11), 205 tests across the suites overran their
# limits (392 s), the BlueZ peer suites' among them.
# Alone they pass: `READERKIT_TSAN_FILTER='^readerctlTests\.|\.ReaderctlBlueZTests' READERKIT_TSAN_SKIP=
# .ci/tsan.sh` (about 140 s of tests here); READERKIT_SLOWDOWN (5 here) multiplies the few wall-clock
# bounds the tests put on a child (Ctrl-C answered within 500 ms, a failure within a second).
# Suppressions (.ci/tsan.supp, when present) hold only reports proven false, each with its reason.
# Usage: .ci/tsan.sh [time limit of the test run in seconds, default 600]
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-600}
# The runtime's crash reporter hangs under sanitizers (and keeps the output pipe open).
export SWIFT_BACKTRACE=enable=no
export READERKIT_SLOWDOWN=${READERKIT_SLOWDOWN:-5}
reports_dir=$PWD/.build-tsan/tsan-reports
# exitcode=0: a process's status says only whether its tests passed (or, for readerctl, what it
# means); reports are counted from the files.
options="log_path=$reports_dir/report exitcode=0 history_size=4 second_deadlock_stack=1"
if [ -f .ci/tsan.supp ]; then options="suppressions=$PWD/.ci/tsan.supp $options"; fi
export TSAN_OPTIONS="$options ${TSAN_OPTIONS:-}"
# Left out: the suites that start readerctl processes (see above). READERKIT_TSAN_SKIP overrides.
skip=${READERKIT_TSAN_SKIP-'^readerctlTests\.|\.ReaderctlBlueZTests'}

flags=(--scratch-path .build-tsan --sanitize=thread -Xswiftc -warnings-as-errors)
scratch=$(mktemp)
trap 'rm -f "$scratch" "$scratch.reports"' EXIT
log=$scratch

started=$SECONDS
if ! timeout -k 10 2400 swift build --build-tests "${flags[@]}" >"$log" 2>&1; then
  tail -n 40 "$log"
  echo "tsan: the build with -sanitize=thread failed" >&2
  exit 1
fi
echo "tsan: built in $((SECONDS - started)) s"

# Runs `swift test` with the given limit and arguments, its output in $log and every report of every
# process it started in $log.reports; returns its exit status.
run_tests() {
  local seconds=$1 status=0
  shift
  rm -rf "$reports_dir" && mkdir -p "$reports_dir"
  timeout -k 10 "$seconds" swift test --skip-build "${flags[@]}" "$@" >"$log" 2>&1 || status=$?
  find "$reports_dir" -type f -name 'report*' -exec cat {} + >"$log.reports" 2>/dev/null || true
  return "$status"
}

# The reports in $log.reports: the number that `$1` (a grep -E pattern) does / does not occur in.
count_reports() {
  awk -v pattern="$1" -v want="$2" '
    /WARNING: ThreadSanitizer/ { on = 1; hit = 0 }
    on && $0 ~ pattern { hit = 1 }
    on && /^=+$/ { on = 0; if (hit == want) n++ }
    END { print n + 0 }' "$log.reports"
}

# 1. The control: TSan must report the unguarded race and stay silent on the same work through Locked.
control() {
  READERKIT_TSAN_CONTROL=$1 run_tests 300 --filter 'LockedTests/threadSanitizerControl' || true
  count_reports . 1
}
unguarded=$(control unguarded)
locked=$(control locked)
echo "tsan: control: $unguarded report(s) for the deliberate race, $locked for the same work through Locked"
if [ "$unguarded" -eq 0 ] || [ "$locked" -ne 0 ] || ! grep -q "passed after" "$log"; then
  tail -n 40 "$log"
  echo "tsan: the control failed: ThreadSanitizer is not reporting races, or reports the package's lock" >&2
  exit 1
fi

# 2. The suites, the control's race among them.
filter=(--filter "${READERKIT_TSAN_FILTER:-.}")
if [ -n "$skip" ]; then filter+=(--skip "$skip"); fi
started=$SECONDS
status=0
log=.build-tsan/tsan-tests.log
READERKIT_TSAN_CONTROL=unguarded run_tests "$limit" "${filter[@]}" || status=$?
echo "tsan: tests ran in $((SECONDS - started)) s (exit status $status)"
control_reports=$(count_reports threadSanitizerControl 1)
reports=$(count_reports threadSanitizerControl 0)
failures=$(cat "$log.reports" "$log" | grep -c -E "(FATAL|ERROR): ThreadSanitizer|ThreadSanitizer: CHECK failed" || true)
if [ "$reports" -ne 0 ] || [ "$failures" -ne 0 ]; then
  # The first reports whole (from the WARNING line to the closing line of equals signs), then the
  # one-line summary of every report.
  awk '/WARNING: ThreadSanitizer/ { on = 1; block = "" } on { block = block $0 "\n" }
    on && /^=+$/ { on = 0; if (block !~ /threadSanitizerControl/) printf "%s", block }' "$log.reports" | head -n 600
  grep -E "(FATAL|ERROR): ThreadSanitizer|ThreadSanitizer: CHECK failed" "$log.reports" "$log" | head -n 20 || true
  grep "^SUMMARY: ThreadSanitizer" "$log.reports" | grep -v threadSanitizerControl | sort | uniq -c | sort -rn
  echo "tsan: $reports ThreadSanitizer report(s) besides the control's (see above)" >&2
  exit 1
fi
# The control runs unless a filter of one's own leaves it out; when it runs, its report must be read.
if [ "$control_reports" -eq 0 ] && { [ -z "${READERKIT_TSAN_FILTER:-}" ] || grep -q "threadSanitizerControl" "$log"; }; then
  tail -n 20 "$log"
  echo "tsan: no report of the control's deliberate race was read from the suites' run" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  grep -E '✘|error:|Fatal|fatal error' "$log" | tail -n 40 || true
  tail -n 20 "$log"
  case $status in
    124 | 137) echo "tsan: the test run did not finish within $limit s" >&2 ;;
    *) echo "tsan: the test run failed under ThreadSanitizer (exit status $status)" >&2 ;;
  esac
  exit 1
fi
grep -E "Test run with|Executed [0-9]+ tests" "$log" | tail -n 2
echo "tsan: no ThreadSanitizer report but the control's ($control_reports, for its deliberate race)"
