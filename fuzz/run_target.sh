#!/usr/bin/env bash
# run_target.sh TARGET CORPUS DICT SECONDS: one fuzz target for SECONDS from a scratch copy of its
# committed corpus (new inputs stay out of the tree), 2 s per input at most; prints libFuzzer's
# closing statistics. A finding leaves crash-*/timeout-*/leak-* in the scratch directory and
# fails with libFuzzer's status. First, each file of fuzz/regressions/<corpus name>/ runs once:
# reproducers too large to seed (libFuzzer mutates up to its largest seed's size, and a 350 KB
# seed cut fuzz_constraint's rate fifteenfold).
set -euo pipefail
target=$(readlink -f "$1") corpus=$(readlink -f "$2") dict=$(readlink -f "$3") seconds=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/indexsim-fuzz.XXXXXX")
cp -r "$corpus/." "$work/"
mkdir -p "$work/artifacts"
cd "$work"
regressions=$(realpath -m "$corpus/../../regressions/$(basename "$corpus")")
if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
  set +e
  "$target" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$work/artifacts/" "$regressions"/* >"$work/regressions.log" 2>&1
  status=$?
  set -e
  grep -E "^(Executed|==[0-9]+==|SUMMARY)" "$work/regressions.log" | cut -c1-200 || true
  if [ "$status" -ne 0 ]; then
    echo "fuzz regression failed (status $status): see $work/regressions.log"
    exit 1
  fi
fi
set +e
"$target" -max_total_time="$seconds" -timeout=2 -rss_limit_mb=2048 -dict="$dict" -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$work" 2>&1 | grep -E "^(#[0-9]+.*DONE|INFO: Loaded|stat::|==[0-9]+==|SUMMARY|artifact_prefix|Test unit|ParseDictionaryFile|ERROR)" | tail -20
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ] || [ -n "$(ls -A "$work/artifacts")" ]; then
  echo "fuzz finding: $(ls "$work/artifacts") in $work/artifacts (status $status)"
  exit 1
fi
rm -rf "$work"
