#!/usr/bin/env bash
# One CTest of HDF5's API test suite (see CMakeLists.txt here).
#
#   run_api_test.sh group  MODE GROUP PASSED FAILED SKIPPED RUN
#       runs `h5_api_test GROUP` through the connector stack MODE and fails unless its totals are
#       exactly PASSED/FAILED/SKIPPED of RUN (the native connector's numbers), the stack named by
#       MODE really was the one in use, and a single HDF5 library was in the process.
#   run_api_test.sh totals MODE PASSED FAILED SKIPPED RUN GROUP...
#       sums what the group runs of MODE recorded and compares with the suite's totals.
#
# MODE: native                  no VOL connector set (HDF5's native connector)
#       h5sparse                h5sparse on top of native
#       h5sparse_passthru       h5sparse on top of HDF5's built-in pass_through, on top of native
#
# Environment (from CTest): H5_API_TEST (the h5_api_test program), H5_API_TEST_LIBDIR (its
# libhdf5_test and the libhdf5.so.N link to the toolchain's HDF5), H5SPARSE_PLUGIN_DIR,
# H5_API_RESULTS_DIR (where group runs leave their numbers for the totals test).
set -uo pipefail

fail() { printf 'FAIL: %s\n' "$*"; exit 1; }

connector_string() {  # the HDF5_VOL_CONNECTOR value of a mode
  case "$1" in
    native) printf '' ;;
    h5sparse) printf '%s' 'h5sparse under_vol=0;under_info={}' ;;
    h5sparse_passthru) printf '%s' 'h5sparse under_vol=1;under_info={under_vol=0;under_info={}}' ;;
    *) fail "unknown mode $1" ;;
  esac
}

# "N/M (x%) API tests <what> with VOL connector 'NAME'": prints "N M NAME".
totals_line() {
  sed -nE "s|^([0-9]+)/([0-9]+) \([0-9.]+%\) API tests $1 with VOL connector '([^']*)'\$|\1 \2 \3|p" "$2" | tail -1
}

run_group() {
  local mode=$1 group=$2 want_passed=$3 want_failed=$4 want_skipped=$5 want_run=$6
  local conn want_name want_info
  conn=$(connector_string "$mode") || exit 1
  [ -n "${H5_API_TEST:-}" ] && [ -n "${H5_API_TEST_LIBDIR:-}" ] && [ -n "${H5_API_RESULTS_DIR:-}" ] ||
    fail "H5_API_TEST, H5_API_TEST_LIBDIR and H5_API_RESULTS_DIR must be set (run through ctest)"
  [ -x "$H5_API_TEST" ] ||
    fail "$H5_API_TEST is missing: build it with 'scripts/dev run scripts/hdf5-api-tests ensure' (scripts/dev test does)"

  mkdir -p "$H5_API_RESULTS_DIR"
  local result=$H5_API_RESULTS_DIR/$mode.$group
  rm -f "$result"
  # A private working directory: the suite writes its files into the current directory.
  local work=$PWD/$mode.$group
  rm -rf "$work" && mkdir -p "$work" && cd "$work" || fail "cannot make $work"

  if [ -n "$conn" ]; then
    export HDF5_VOL_CONNECTOR=$conn
    export HDF5_PLUGIN_PATH=${H5SPARSE_PLUGIN_DIR:?}
    want_name=${conn%% *}
    want_info=${conn#* }
  else
    unset HDF5_VOL_CONNECTOR
    unset HDF5_PLUGIN_PATH
    want_name=native
    want_info=
  fi
  printf 'h5_api_test %s with HDF5_VOL_CONNECTOR=%s HDF5_PLUGIN_PATH=%s\n' "$group" \
    "${HDF5_VOL_CONNECTOR-(unset)}" "${HDF5_PLUGIN_PATH-(unset)}"

  # LD_DEBUG=files records every shared object the process loads, to prove what ran.
  LD_LIBRARY_PATH=$H5_API_TEST_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    LD_DEBUG=files LD_DEBUG_OUTPUT=$work/ld-debug \
    "$H5_API_TEST" "$group" >"$work/output.log" 2>&1
  local rc=$?
  cat "$work/output.log"
  printf -- '\n---- h5_api_test exit status %d\n' "$rc"
  if [ "$rc" -gt 128 ]; then
    printf 'h5_api_test died of signal %d in: %s\n' $((rc - 128)) \
      "$(grep -o 'Testing [^ ].*[^ ]' "$work/output.log" | tail -1)"
  fi

  # Which tests did not pass (the suite prints "*FAILED*" after the test's "Testing" line).
  awk '/Testing /{ t = $0; sub(/^ */, "", t); sub(/ *(PASSED|-SKIP-|\*FAILED\*|HDF5-DIAG).*$/, "", t) }
       /\*FAILED\*/{ print "failed test: " t }' "$work/output.log"

  # 1. The suite ran with the connector we meant (h5_api_test itself also checks that a
  #    connector named in HDF5_VOL_CONNECTOR is registered and is the default FAPL's).
  grep -qxF "Running API tests with VOL connector '$want_name' and info string '$want_info'" "$work/output.log" ||
    fail "h5_api_test did not report running with VOL connector '$want_name' and info '$want_info'"

  # 2. What the dynamic loader did: our plugin loaded (or not, for native), one HDF5 library.
  local plugin=${H5SPARSE_PLUGIN_DIR:-/nonexistent}/libh5sparse_vol.so loads hdf5_inits
  loads=$(cat "$work"/ld-debug.* 2>/dev/null | grep -c "calling init: $plugin\$")
  hdf5_inits=$(cat "$work"/ld-debug.* 2>/dev/null | grep -cE 'calling init: .*/libhdf5(_serial)?\.so\.[0-9]+$')
  if [ -n "$conn" ]; then
    [ "$loads" -ge 1 ] || fail "the dynamic loader never initialised $plugin"
  else
    [ "$(cat "$work"/ld-debug.* 2>/dev/null | grep -c 'libh5sparse_vol\.so')" = 0 ] ||
      fail "the native run loaded libh5sparse_vol.so"
  fi
  [ "$hdf5_inits" = 1 ] || fail "expected one HDF5 library in the process, the loader initialised $hdf5_inits"
  printf 'loader: %s initialised %s time(s); one HDF5 library (%s)\n' "$plugin" "$loads" \
    "$(readlink -f "$H5_API_TEST_LIBDIR"/libhdf5.so.* | head -1)"

  # 3. The numbers.
  local passed failed skipped
  passed=$(totals_line passed "$work/output.log")
  failed=$(totals_line 'did not pass' "$work/output.log")
  skipped=$(totals_line 'were skipped' "$work/output.log")
  [ -n "$passed" ] && [ -n "$failed" ] && [ -n "$skipped" ] || fail "h5_api_test printed no totals"
  local n_passed n_run name n_failed n_skipped
  read -r n_passed n_run name <<<"$passed"
  read -r n_failed _ <<<"$failed"
  read -r n_skipped _ <<<"$skipped"
  [ "$name" = "$want_name" ] || fail "totals are for VOL connector '$name', not '$want_name'"
  printf '%s %s %s %s\n' "$n_passed" "$n_failed" "$n_skipped" "$n_run" >"$result"
  printf 'group %s, %s: passed %s, failed %s, skipped %s of %s (native: %s, %s, %s of %s)\n' "$group" "$mode" \
    "$n_passed" "$n_failed" "$n_skipped" "$n_run" "$want_passed" "$want_failed" "$want_skipped" "$want_run"
  [ "$n_passed $n_failed $n_skipped $n_run" = "$want_passed $want_failed $want_skipped $want_run" ] ||
    fail "counts differ from the native connector's"
  if [ "$want_failed" = 0 ] && [ "$rc" != 0 ]; then fail "h5_api_test exited with status $rc"; fi
  printf 'OK\n'
}

run_totals() {
  local mode=$1 want="$2 $3 $4 $5"; shift 5
  local p=0 f=0 s=0 r=0 group
  for group in "$@"; do
    local result=${H5_API_RESULTS_DIR:?}/$mode.$group
    [ -f "$result" ] || fail "no result of group $group in mode $mode ($result)"
    read -r gp gf gs gr <"$result"
    printf '%-10s passed %4s failed %2s skipped %3s of %4s\n' "$group" "$gp" "$gf" "$gs" "$gr"
    p=$((p + gp)); f=$((f + gf)); s=$((s + gs)); r=$((r + gr))
  done
  printf '%-10s passed %4s failed %2s skipped %3s of %4s (expected %s)\n' total "$p" "$f" "$s" "$r" "$want"
  [ "$p $f $s $r" = "$want" ] || fail "totals of $mode differ from the expected $want"
  printf 'OK\n'
}

case "${1:-}" in
  group) shift; [ $# = 6 ] || fail "usage: $0 group MODE GROUP PASSED FAILED SKIPPED RUN"; run_group "$@" ;;
  totals) shift; [ $# -ge 6 ] || fail "usage: $0 totals MODE PASSED FAILED SKIPPED RUN GROUP..."; run_totals "$@" ;;
  *) fail "usage: $0 group|totals ..." ;;
esac
