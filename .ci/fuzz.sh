#!/usr/bin/env bash
# Builds readerkit-fuzz with libFuzzer and AddressSanitizer and runs every harness for a bounded time
# over its kept corpus (Tests/FuzzCorpusTests/Corpus/<harness>). A crash, a leak of the bounds (out of
# memory) or a hang fails the script and leaves the input in .build-fuzz/findings/<harness>/: copy it
# into the harness's corpus directory, so that FuzzCorpusTests replays it on every test run.
# A finding is also printed (base64), since a CI machine's files are gone after the run, with the
# libFuzzer seed (READERKIT_FUZZ_SEED, random unless set). A run bounded by time explores as far as the
# machine's speed lets it, so the same seed need not find the same input again: the printed input is
# what reproduces a finding, `readerkit-fuzz <harness> FILE` replays it in a normal build.
# Usage: .ci/fuzz.sh [seconds per harness, default 20]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
seed=${READERKIT_FUZZ_SEED:-$((RANDOM * 32768 + RANDOM + 1))}
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1

swift build --product readerkit-fuzz --scratch-path .build-fuzz -c debug \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DFUZZING
binary=$(swift build --product readerkit-fuzz --scratch-path .build-fuzz -c debug --show-bin-path \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DFUZZING)/readerkit-fuzz

harnesses=$(ls Tests/FuzzCorpusTests/Corpus)
failed=()
for harness in $harnesses; do
  work=$(mktemp -d)
  cp -R "Tests/FuzzCorpusTests/Corpus/$harness/." "$work/"
  findings=".build-fuzz/findings/$harness"
  mkdir -p "$findings"
  started=$(mktemp)
  echo "fuzz: $harness for ${seconds} s over $(ls "$work" | wc -l) kept inputs, seed $seed"
  if ! READERKIT_FUZZ=$harness timeout -k 5 $((seconds + 60)) "$binary" "$work" \
    -seed="$seed" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$findings/" -print_final_stats=1 >"$work.log" 2>&1; then
    failed+=("$harness")
    tail -n 40 "$work.log"
    # The inputs this run wrote (the directory may hold older ones).
    find "$findings" -type f -newer "$started" | while read -r finding; do
      echo "fuzz: $harness finding $(basename "$finding") ($(wc -c <"$finding") bytes), base64:"
      head -c 65536 "$finding" | base64 -w 0
      echo
    done
  else
    grep -E '^(stat::number_of_executed_units|stat::new_units_added)' "$work.log" | sed "s/^/fuzz: $harness /" || true
  fi
  rm -rf "$work" "$work.log" "$started"
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: findings in ${failed[*]} (inputs in .build-fuzz/findings/)" >&2
  exit 1
fi
echo "fuzz: no findings"
