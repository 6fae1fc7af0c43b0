#!/usr/bin/env bash
# Compiles every header under include/smdebug alone (-fsyntax-only, the project's warnings as
# errors): a header that leans on something its includer happened to include first fails here.
# Each header is checked in separate mode (-DSMDEBUG_SEPARATE_COMPILATION, docs/compile.md), where a
# header that leans on what an impl/*.ipp file happened to include fails. A header whose own text
# depends on the mode (it names SMDEBUG_HEADER_ONLY, SMDEBUG_SEPARATE_COMPILATION, SMDEBUG_INLINE or
# SMDEBUG_SOURCE: the owners of impl/*.ipp files, config.hpp, src.hpp) is also checked header-only,
# its definitions included. The other headers are the same text in both modes: in header-only mode
# they only gain the .ipp files of the headers they include, each checked with its owner, so a
# second compile of theirs would check nothing new (and cost as much as the first).
# usage: headers_self_contained.sh CXX INCLUDE_DIR JOBS [EXCLUDE_REGEX]
# Prints one line per failing header with the compiler's first error, then "N headers, M failed".
# A header that holds nothing but #pragma once and #include lines (smdebug.hpp, local.hpp, ...) is
# not compiled alone: it compiles if each header it includes does, and every one of those is
# checked here.
set -u
cxx=$1 include_dir=$2 jobs=${3:-2} exclude=${4:-}
[ -d "$include_dir/smdebug" ] || { echo "no $include_dir/smdebug" >&2; exit 2; }
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT

check_one() {  # "header mode" (header relative to include_dir; mode header-only|separate) -> exit status
    local h=${1% *} mode=${1#* } log define=()
    log="$work/$(printf '%s' "$h" | tr '/' '_').$mode.log"
    [ "$mode" = separate ] && define=(-DSMDEBUG_SEPARATE_COMPILATION)
    # src.hpp files: separate mode only, by design; and the build compiles each alone, with these
    # warnings, as smdebug::compiled's sources (CMakeLists.txt), so they are not compiled again here.
    case "$h" in smdebug/src.hpp | smdebug/*/src.hpp) return 0 ;; esac
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
mode_dependent() {  # true when the header's own text differs between the two modes
    grep -Eq 'SMDEBUG_(HEADER_ONLY|SEPARATE_COMPILATION|INLINE|SOURCE)' "$include_dir/$1"
}
both=0
for h in "${checked[@]}"; do
    printf '%s separate\n' "$h"
    if mode_dependent "$h"; then printf '%s header-only\n' "$h"; both=$((both + 1)); fi
done >"$work/jobs"
xargs -P "$jobs" -I{} bash -c 'check_one "$1"' _ {} <"$work/jobs" >"$work/failures"
failed=$(grep -c '^FAIL' "$work/failures")
cat "$work/failures"
echo "${#headers[@]} headers, ${#checked[@]} compiled alone in separate mode ($both of them also header-only), $failed failed"
[ "$failed" -eq 0 ]
