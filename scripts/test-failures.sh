#!/usr/bin/env bash
# After a failed ctest run: each failed test's failure messages (gtest's "Failure" blocks,
# their traces with the KILN_TEST_SEED that replays them, sanitizer reports), at most 20 lines
# a test, so that the end of a long log says what failed and how to replay it.
# Usage: scripts/test-failures.sh BUILD_DIR
set -euo pipefail
log="$1/Testing/Temporary/LastTest.log"
failed="$1/Testing/Temporary/LastTestsFailed.log"
[[ -f "$failed" && -f "$log" ]] || exit 0
echo "=== failures in $1"
while IFS=: read -r _ name; do
  echo "--- $name"
  awk -v name="$name" '
    /^[0-9]+\/[0-9]+ Test: / { inside = ($3 == name); next }
    !inside { next }
    /: Failure$|^Google Test trace:|ERROR: AddressSanitizer|runtime error:|\[  FAILED  \]|Segmentation|Aborted/ { left = 6 }
    left > 0 { print; --left; if (++printed >= 20) exit }
  ' "$log"
done < "$failed"
