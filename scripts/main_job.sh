#!/usr/bin/env bash
# The main job: installs and builds (scripts/setup.sh), then runs the default study
# (configs/studies/default.yaml) into results/default-study.sqlite and prints its table.
# A re-run reuses the runs it stored (those of another code version too: `study --rerun-stale`
# simulates them again, `--rerun` everything). From an empty database: about 7 minutes for the decode
# rows and 9 more for the three whole prefills (time to first token) on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p results
BUILD=${INDEXSIM_BUILD_DIR:-build}
"$BUILD/sim/indexsim" trace gen --workload glm-5.2 --context 1048576 -o results/glm-5.2-decode-1M.itr
"$BUILD/sim/indexsim" trace info results/glm-5.2-decode-1M.itr | head -40
exec "$BUILD/sim/indexsim" study "${1:-default}" --db results/default-study.sqlite
