#!/usr/bin/env bash
# The test suite under ThreadSanitizer: a data race anywhere the tests reach fails CI.
#
# Builds the tests with -sanitize=thread into .build-tsan (apart from the normal build), then:
#   1. proves ThreadSanitizer is awake and sees the package's lock: the control test must get a report
#      for its deliberate race, and none for the same work through `Locked`;
#   2. runs the suites (below; READERKIT_TSAN_FILTER=<regex> picks some, READERKIT_TSAN_SKIP=<regex>
#      leaves others out, empty for none) and fails on any "WARNING: ThreadSanitizer" report, listing
#      them. The whole log of the run is kept in .build-tsan/tsan-tests.log.
# The suites: every suite of every test target (about 1,300 tests: the engines, sessions, simulator,
# codecs, state machines, the PC/SC radio against pcscd, the BlueZ central against the D-Bus peer),
# except those that start the readerctl executable (readerctlTests, ReaderctlBlueZTests): under
# ThreadSanitizer, many readerctl processes started at once by the parallel run stall until the
# suites' one-minute time limits expire (one suite alone passes in seconds), and their timings
# (Ctrl-C answered within 500 ms, exit within a second) do not hold several times slower. The threads
# those processes run are the library's, which the suites here cover.
# Suppressions (.ci/tsan.supp, when present) hold only reports proven false, each with its reason.
# Usage: .ci/tsan.sh [time limit of the test run in seconds, default 600]
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-600}
# The runtime's crash reporter hangs under sanitizers (and keeps the output pipe open).
export SWIFT_BACKTRACE=enable=no
options="history_size=4 second_deadlock_stack=1"
if [ -f .ci/tsan.supp ]; then options="suppressions=$PWD/.ci/tsan.supp $options"; fi
export TSAN_OPTIONS="$options ${TSAN_OPTIONS:-}"
# Left out: the suites that start readerctl processes (see above). READERKIT_TSAN_SKIP overrides.
skip=${READERKIT_TSAN_SKIP-'^readerctlTests\.|\.ReaderctlBlueZTests'}

flags=(--scratch-path .build-tsan --sanitize=thread -Xswiftc -warnings-as-errors)
scratch=$(mktemp)
trap 'rm -f "$scratch"' EXIT
log=$scratch

started=$SECONDS
if ! timeout -k 10 2400 swift build --build-tests "${flags[@]}" >"$log" 2>&1; then
  tail -n 40 "$log"
  echo "tsan: the build with -sanitize=thread failed" >&2
  exit 1
fi
echo "tsan: built in $((SECONDS - started)) s"

# 1. The control: TSan must report the unguarded race and stay silent on the same work through Locked.
control() {
  READERKIT_TSAN_CONTROL=$1 timeout -k 5 300 swift test --skip-build "${flags[@]}" \
    --filter 'LockedTests/threadSanitizerControl' >"$log" 2>&1 || true
  grep -c "WARNING: ThreadSanitizer" "$log" || true
}
unguarded=$(control unguarded)
locked=$(control locked)
echo "tsan: control: $unguarded report(s) for the deliberate race, $locked for the same work through Locked"
if [ "$unguarded" -eq 0 ] || [ "$locked" -ne 0 ] || ! grep -q "passed after" "$log"; then
  tail -n 40 "$log"
  echo "tsan: the control failed: ThreadSanitizer is not reporting races, or reports the package's lock" >&2
  exit 1
fi

# 2. The suites.
filter=(--filter "${READERKIT_TSAN_FILTER:-.}")
if [ -n "$skip" ]; then filter+=(--skip "$skip"); fi
started=$SECONDS
status=0
log=.build-tsan/tsan-tests.log
timeout -k 10 "$limit" swift test --skip-build "${flags[@]}" "${filter[@]}" >"$log" 2>&1 || status=$?
echo "tsan: tests ran in $((SECONDS - started)) s (exit status $status)"
reports=$(grep -c "WARNING: ThreadSanitizer" "$log" || true)
if [ "$reports" -ne 0 ]; then
  # The first reports whole (from the WARNING line to the closing line of equals signs), then the
  # one-line summary of every report.
  awk '/WARNING: ThreadSanitizer/ { on = 1 } on { print } /^=+$/ { on = 0 }' "$log" | head -n 600
  grep "^SUMMARY: ThreadSanitizer" "$log" | sort | uniq -c | sort -rn
  echo "tsan: $reports ThreadSanitizer report(s) (see above)" >&2
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
echo "tsan: no ThreadSanitizer report"
