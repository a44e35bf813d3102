#!/usr/bin/env bash
# Runs every test suite in a process of its own, each under a time limit, and lists the suites that
# failed, crashed or hung. .ci/run calls it when the whole `swift test` run failed, so that one crash
# or one test that never returns cannot hide the results of every other suite. Each suite runs under
# .ci/bounded-test.py, which kills a hung test process (swift test itself would leave it running) and
# names the tests that were still running.
# Usage: .ci/isolated-tests.sh [per-suite limit in seconds, default 300] [extra swift test flags…]
set -uo pipefail
cd "$(dirname "$0")/.."
limit=${1:-300}
shift || true
suites=$(swift test list --skip-build "$@" 2>/dev/null | sed -E 's#/.*##' | sort -u)
if [ -z "$suites" ]; then
  echo "isolated-tests: cannot list the tests (is the build complete?)" >&2
  exit 1
fi
failed=()
total=0
for suite in $suites; do
  total=$((total + 1))
  log=$(mktemp)
  python3 .ci/bounded-test.py "$limit" --skip-build "$@" --filter "^${suite//./\\.}/" >"$log" 2>&1
  status=$?
  if [ $status -ne 0 ]; then
    case $status in
      124) why="hung: $(grep -m1 '^bounded-test: stopped: ' "$log" | sed 's/^bounded-test: stopped: //; s/; the tests.*//')" ;;
      *) why="exit status $status" ;;
    esac
    failed+=("$suite ($why)")
    echo "---- $suite: $why; its last lines:"
    grep -E '✘|error|Fatal|fatal|Crash|crash|^bounded-test|^  [A-Za-z]' "$log" | tail -n 20
    tail -n 5 "$log"
  fi
  rm -f "$log"
done
if [ ${#failed[@]} -eq 0 ]; then
  echo "isolated-tests: all $total suites passed on their own"
  exit 0
fi
echo "isolated-tests: ${#failed[@]} of $total suites failed on their own:"
printf '  %s\n' "${failed[@]}"
exit 1
