#!/usr/bin/env bash
# Runs the Catch2 v2 test cases named in NAMEFILE (one name a line, as --list-test-names-only
# prints them) in one process of PROGRAM, and fails unless every one of them ran:
#
#   scripts/run-catch-shard.sh PROGRAM NAMEFILE
#
# The names are quoted and escaped for Catch2's test-spec parser (--input-file); a name that the
# parser would read differently selects nothing, and the count check below catches it.
set -euo pipefail
program=${1:?usage: run-catch-shard.sh PROGRAM NAMEFILE}
names=${2:?usage: run-catch-shard.sh PROGRAM NAMEFILE}
spec=$names.spec
# Inside quotes only '\', ',' and '"' are special to Catch2 v2.
sed -e 's/\\/\\\\/g' -e 's/,/\\,/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$/"/' "$names" >"$spec"
want=$(grep -c . "$names")
out=$names.out
set +e
"$program" -f "$spec" --warn NoTests 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
set -e
# "All tests passed (A assertions in N test cases)" or "test cases: N | P passed | F failed".
ran=$(sed -n -e 's/^All tests passed ([0-9]* assertions\{0,1\} in \([0-9]*\) test cases\{0,1\}).*/\1/p' \
             -e 's/^test cases: *\([0-9]*\) .*/\1/p' "$out" | tail -n 1)
if [ "$rc" -eq 0 ] && [ "${ran:-0}" != "$want" ]; then
  echo "run-catch-shard.sh: $names names $want test cases but $program ran ${ran:-none} (a name Catch2 reads as a pattern, e.g. one starting with exclude:?)" >&2
  exit 1
fi
exit "$rc"
