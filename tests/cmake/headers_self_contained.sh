#!/usr/bin/env bash
# Compiles every header under include/smdebug alone (-fsyntax-only, the project's warnings as
# errors): a header that leans on something its includer happened to include first fails here.
# Each header is checked in both modes of docs/compile.md: header-only (its impl/*.ipp included) and
# separate (-DSMDEBUG_SEPARATE_COMPILATION: declarations only).
# usage: headers_self_contained.sh CXX INCLUDE_DIR JOBS [EXCLUDE_REGEX]
# Prints one line per failing header with the compiler's first error, then "N headers, M failed".
# A header that holds nothing but #pragma once and #include lines (smdebug.hpp, local.hpp, ...) is
# not compiled alone: it compiles if each header it includes does, and every one of those is
# checked here (about 45 CPU-seconds of the check's 9 minutes).
set -u
cxx=$1 include_dir=$2 jobs=${3:-2} exclude=${4:-}
[ -d "$include_dir/smdebug" ] || { echo "no $include_dir/smdebug" >&2; exit 2; }
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT

check_one() {  # "header mode" (header relative to include_dir; mode header-only|separate) -> exit status
    local h=${1% *} mode=${1#* } log define=()
    log="$work/$(printf '%s' "$h" | tr '/' '_').$mode.log"
    [ "$mode" = separate ] && define=(-DSMDEBUG_SEPARATE_COMPILATION)
    [ "$h" = smdebug/src.hpp ] && [ "$mode" = header-only ] && return 0  # separate mode only, by design
    if ! printf '#include <%s>\n#include <%s>\n' "$h" "$h" |
        "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Werror \
               "${define[@]}" -I "$include_dir" -x c++ - >"$log" 2>&1; then
        echo "FAIL $h ($mode): $(grep -m1 -E 'error' "$log")"
        return 1
    fi
}
export -f check_one
export cxx include_dir work

mapfile -t headers < <(cd "$include_dir" && find smdebug -name '*.hpp' | LC_ALL=C sort | { if [ -n "$exclude" ]; then grep -Ev "$exclude"; else cat; fi; })
[ ${#headers[@]} -gt 0 ] || { echo "no headers found under $include_dir/smdebug" >&2; exit 2; }
only_includes() {  # true when the header has no line but blanks, // comments, #pragma once and #include <...>
    ! grep -Ev '^[[:space:]]*($|//|#[[:space:]]*pragma[[:space:]]+once[[:space:]]*$|#[[:space:]]*include[[:space:]]*<[^>]+>[[:space:]]*(//.*)?$)' "$include_dir/$1" >/dev/null
}
checked=()
for h in "${headers[@]}"; do
    if only_includes "$h"; then echo "only includes (each checked alone): $h"; else checked+=("$h"); fi
done
for h in "${checked[@]}"; do printf '%s header-only\n%s separate\n' "$h" "$h"; done |
    xargs -P "$jobs" -I{} bash -c 'check_one "$1"' _ {} >"$work/failures"
failed=$(grep -c '^FAIL' "$work/failures")
cat "$work/failures"
echo "${#headers[@]} headers, ${#checked[@]} compiled alone in both modes, $failed failed"
[ "$failed" -eq 0 ]
