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
    echo "---- $suite: $why; its last lines:"
    grep -E '✘|error|Fatal|fatal|Crash|crash|^bounded-test|^  [A-Za-z]' "$log" | tail -n 20
    tail -n 5 "$log"
    # The tests a crash or a hang hit, named by bounded-test.py: the rest of the suite runs once more
    # without them, so that one broken test does not hide its neighbours' results.
    mapfile -t hit < <(sed -n '/^bounded-test: /,$p' "$log" | sed -nE 's#^  ([^ (][^ ]*)/[^/]*\.swift:[0-9]+:[0-9]+$#\1#p' | sort -u)
    if [ $status -ne 124 ] && [ ${#hit[@]} -gt 1 ] && [ ${#hit[@]} -le 40 ]; then
      # A crash ends every test running beside the one that crashed: each runs alone to tell them apart.
      crashed=()
      for test in "${hit[@]}"; do
        python3 .ci/bounded-test.py "$limit" --skip-build "$@" --filter "^$(printf '%s' "$test" | sed 's/[][\.*^$()+?{}|]/\\&/g')" >"$log" 2>&1 ||
          crashed+=("$test")
      done
      echo "---- $suite: ${#crashed[@]} of the ${#hit[@]} tests the crash hit fail alone: ${crashed[*]}"
      why="$why; alone, ${#crashed[@]} of the ${#hit[@]} tests it hit fail: ${crashed[*]}"
      hit=("${crashed[@]}")
    fi
    if [ ${#hit[@]} -gt 0 ]; then
      skips=()
      for test in "${hit[@]}"; do skips+=(--skip "^$(printf '%s' "$test" | sed 's/[][\.*^$()+?{}|]/\\&/g')"); done
      python3 .ci/bounded-test.py "$limit" --skip-build "$@" --filter "^${suite//./\\.}/" "${skips[@]}" >"$log" 2>&1
      rest=$?
      echo "---- $suite without ${hit[*]}: $(tail -n 1 "$log")"
      [ $rest -eq 0 ] && why="$why; the rest of the suite passed" || why="$why; the rest of the suite failed too (status $rest)"
    fi
    failed+=("$suite ($why)")
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
