#!/usr/bin/env bash
# Compiles every header under include/smdebug alone (-fsyntax-only, the project's warnings as
# errors): a header that leans on something its includer happened to include first fails here.
# usage: headers_self_contained.sh CXX INCLUDE_DIR JOBS [EXCLUDE_REGEX]
# Prints one line per failing header with the compiler's first error, then "N headers, M failed".
set -u
cxx=$1 include_dir=$2 jobs=${3:-2} exclude=${4:-}
[ -d "$include_dir/smdebug" ] || { echo "no $include_dir/smdebug" >&2; exit 2; }
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT

check_one() {  # header (relative to include_dir) -> exit status; the log in $work
    local h=$1 log
    log="$work/$(printf '%s' "$h" | tr '/' '_').log"
    if ! printf '#include <%s>\n#include <%s>\n' "$h" "$h" |
        "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Werror \
               -I "$include_dir" -x c++ - >"$log" 2>&1; then
        echo "FAIL $h: $(grep -m1 -E 'error' "$log")"
        return 1
    fi
}
export -f check_one
export cxx include_dir work

mapfile -t headers < <(cd "$include_dir" && find smdebug -name '*.hpp' | LC_ALL=C sort | { if [ -n "$exclude" ]; then grep -Ev "$exclude"; else cat; fi; })
[ ${#headers[@]} -gt 0 ] || { echo "no headers found under $include_dir/smdebug" >&2; exit 2; }
printf '%s\n' "${headers[@]}" | xargs -P "$jobs" -I{} bash -c 'check_one "$1"' _ {} >"$work/failures"
failed=$(grep -c '^FAIL' "$work/failures")
cat "$work/failures"
echo "${#headers[@]} headers, $failed failed"
[ "$failed" -eq 0 ]
