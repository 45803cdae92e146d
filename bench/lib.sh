# Shared by every bench/<module>/run.sh (sourced, not run): one rule for
# running a benchmark program and for what a missing program means.
#
#   bench_module=core          # names the module in notes
#   source "$(dirname "$0")/../lib.sh"
#   bench_run "$bin/core_sem_pingpong" --rounds=1000
#   exit $bench_status
#
# bench_run PROGRAM ARGS... runs PROGRAM (a path) and passes only its RESULT
# lines to stdout; notes go to stderr. A missing program is
#   - a peer twin (a name with a peer's marker: _std_, _boost_fiber_, caf_,
#     _caf_, _mpi_, _baseline_, _tbb_, _openmp_; or a program outside $BUILD/bench, such as
#     the Go twins): skipped, with one note per program (its peer was not
#     installed when the build was configured);
#   - one of troupe's own programs: a failure (bench/run builds them all, so
#     it is missing only if the build is broken).
# A program that exits non-zero (or outlives $bench_timeout seconds,
# default 600) is a failure. Failures set bench_status=1 and the run goes
# on. $TIMED (set by bench/run) prefixes each program; an array
# bench_launch (e.g. mpirun ...) prefixes the next bench_run call instead.
#
# bench_setup MODULE [RUNS] opens every run.sh (after sourcing this file):
# checks BUILD (the absolute build directory bench/run passes), defaults
# QUICK to 0 and RUNS to the given count (5), names the module in notes
# and sets bin=$BUILD/bench/MODULE.
#
# bench_go_twins NAME... builds the Go twins bench/peers/go/NAME.go (each
# with the shared bench/peers/go/common.go, plus the files named in the
# array bench_go_extra, e.g. bench_go_extra=(io_server.go)) into
# gobin=$BUILD/go, offline (GO111MODULE=off, caches under $BUILD); a failed
# build or a missing go leaves the twin missing (skipped by bench_run, with
# a note).
bench_status=0
bench_timeout=${bench_timeout:-600}
bench_launch=()
declare -A bench_noted=()

bench_is_twin() {  # bench_is_twin PATH
  case "${1##*/}" in
    *_std_* | *_boost_fiber_* | caf_* | *_caf_* | *_mpi_* | *_baseline_* | *_tbb_* | *_openmp_*) return 0 ;;
  esac
  case "$1" in
    "${BUILD:-}"/bench/*) return 1 ;;
  esac
  return 0
}

bench_run() {  # bench_run PROGRAM ARGS...
  local prog=$1 name=${1##*/} out
  shift
  if [ ! -x "$prog" ]; then
    if bench_is_twin "$prog"; then
      [ -n "${bench_noted[$name]:-}" ] ||
        echo "${bench_module:-bench}: twin $name not built (its peer is not installed), skipped" >&2
      bench_noted[$name]=1
    else
      echo "${bench_module:-bench}: $name not built: troupe's own program is missing (broken build?)" >&2
      bench_status=1
    fi
    return 0
  fi
  local -a pre=()
  if [ ${#bench_launch[@]} -gt 0 ]; then
    pre=("${bench_launch[@]}")
  elif [ -n "${TIMED:-}" ]; then
    read -r -a pre <<<"$TIMED"
  fi
  if ! out=$(timeout "$bench_timeout" ${pre[@]+"${pre[@]}"} "$prog" "$@"); then
    echo "${bench_module:-bench}: $name $* failed" >&2
    bench_status=1
  fi
  printf '%s\n' "$out" | grep '^RESULT ' || true
}

bench_setup() {  # bench_setup MODULE [RUNS]
  : "${BUILD:?BUILD must be the absolute build directory}"
  QUICK=${QUICK:-0}
  RUNS=${RUNS:-${2:-5}}
  bench_module=$1
  bin="$BUILD/bench/$1"
}

bench_go_twins() {  # bench_go_twins NAME...
  local src g x stale
  local -a extra=(${bench_go_extra[@]+"${bench_go_extra[@]}"})
  src="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/peers/go"
  gobin="$BUILD/go"
  if ! command -v go >/dev/null 2>&1; then
    echo "${bench_module:-bench}: go not installed, Go twins skipped" >&2
    return 0
  fi
  mkdir -p "$gobin"
  for g in "$@"; do
    stale=0
    for x in "$g.go" common.go ${extra[@]+"${extra[@]}"}; do
      [ "$src/$x" -nt "$gobin/$g" ] && stale=1
    done
    if [ ! -x "$gobin/$g" ] || [ $stale = 1 ]; then
      (cd "$src" && GOCACHE="$gobin/cache" GOPATH="$gobin/path" GOFLAGS=-mod=mod \
         GO111MODULE=off go build -o "$gobin/$g" "$g.go" common.go ${extra[@]+"${extra[@]}"}) >&2 ||
        echo "${bench_module:-bench}: go build of $g failed, skipped" >&2
    fi
  done
}
