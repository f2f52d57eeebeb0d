#!/usr/bin/env bash
# run_target.sh TARGET CORPUS DICT SECONDS: one fuzz target for SECONDS from a scratch copy of its
# committed corpus (new inputs stay out of the tree), 2 s per input at most; prints libFuzzer's
# closing statistics. A finding leaves crash-*/timeout-*/leak-* in the scratch directory and
# fails with libFuzzer's status.
set -euo pipefail
target=$(readlink -f "$1") corpus=$(readlink -f "$2") dict=$(readlink -f "$3") seconds=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/indexsim-fuzz.XXXXXX")
cp -r "$corpus/." "$work/"
mkdir -p "$work/artifacts"
cd "$work"
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
