#!/usr/bin/env bash
# Compile cost of smdebug-cpp for its users: each consumer TU of this folder compiled as a user's
# build would compile it, header-only (smdebug::smdebug) and separately compiled (smdebug::compiled:
# -DSMDEBUG_SEPARATE_COMPILATION), reporting the wall time and the compiler's peak memory per TU
# (medians of N runs), and the cost of <smdebug/src.hpp> itself, compiled once per program.
#   benchmarks/compile/run.sh [-n RUNS] [-O LEVEL] [--quick]
# --quick: one run of each consumer TU, at -O0, separate mode only (what CI runs: that it works;
# src.hpp and the header-only headers are compiled by the build and its header-only consumers).
# Figures go to benchmarks/RESULTS.md by hand, dated; this is not a timed test.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
include=$(cd "$here/../../include" && pwd)
runs=3 opt=-O2 quick=0
while (($#)); do
  case $1 in
    -n) runs=$2; shift 2 ;;
    -O) opt=-O$2; shift 2 ;;
    --quick) quick=1 runs=1 opt=-O0; shift ;;
    *) echo "usage: $0 [-n RUNS] [-O LEVEL] [--quick]" >&2; exit 2 ;;
  esac
done
cxx=${CXX:-g++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-std=c++20 "$opt" -I"$include" -c)

# measure NAME ARGS...: the median wall time (s) and peak memory (MB) of `$cxx ARGS` over $runs runs.
measure() {
  local name=$1; shift
  local walls=() mems=() i
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -f "%e %M" -o "$work/time" "$cxx" "$@" -o "$work/out.o" || { echo "compile failed: $name" >&2; exit 1; }
    read -r w m <"$work/time"
    walls+=("$w") mems+=("$m")
  done
  local mw mm
  mw=$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p")
  mm=$(printf '%s\n' "${mems[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p")
  printf '| %-28s | %8.2f s | %7d MB |\n' "$name" "$mw" "$((mm / 1024))"
}

echo "compile cost per translation unit: $cxx $opt, median of $runs run(s), $(date -u +%Y-%m-%d)"
echo "| TU | wall | peak memory |"
echo "|---|---|---|"
for tu in include_only read_local open_s3 hook_write custom_rule builtin_rule; do
  ((quick)) || measure "$tu (header-only)" "${flags[@]}" "$here/$tu.cpp"
  measure "$tu (separate)" "${flags[@]}" -DSMDEBUG_SEPARATE_COMPILATION "$here/$tu.cpp"
done
((quick)) && exit 0
measure "smdebug.hpp -fsyntax-only (header-only)" -std=c++20 -I"$include" -fsyntax-only -x c++ "$here/include_only.cpp"
for src in src.hpp rules/src.hpp; do
  printf '#include <smdebug/%s>\n' "$src" >"$work/src.cpp"
  measure "$src" "${flags[@]}" -DSMDEBUG_SEPARATE_COMPILATION "$work/src.cpp"
done
