# Sourced by scripts/dev: which HDF5 toolchain a command runs with, and the Debian roots that
# provide one where the host has none.
#
# H5SPARSE_HDF5 selects the HDF5 major version: 1.14 or 2. Unset: the host's HDF5 when it has
# one (>= 1.14, headers and a matching h5py), else 1.14. A host whose HDF5 has the selected major
# version is used as it is; otherwise the command runs inside a Debian root:
#   1.14  Debian 13 "trixie"   HDF5 1.14.5, h5py 3.13, CMake 3.31
#   2     Debian "forky"       HDF5 2.2.0,  h5py 3.16, CMake 4.3
# A root is a function of its suite and package list: it lives in
#   $H5SPARSE_ROOTS/<suite>-<hash of suite, recipe and package list>
# (default /var/cache/h5sparse/roots) and is made from nothing when that directory is missing,
# so what was installed before on a machine never leaks into it. Downloaded .deb files are kept
# in $H5SPARSE_DEB_CACHE/<suite> (default /var/cache/h5sparse/debs) and reused. Making a root is
# idempotent and safe to interrupt (built in <root>.partial, renamed when complete) and
# serialised by a lock per suite.

roots_dir=${H5SPARSE_ROOTS:-/var/cache/h5sparse/roots}
deb_cache=${H5SPARSE_DEB_CACHE:-/var/cache/h5sparse/debs}
root_recipe=1  # bump when the way a root is made changes (not its package list)

# Packages of every root. python3-h5py-serial is named so that apt never satisfies h5py with
# the MPI build alone (python3-h5py-mpi is also listed, for the parallel flavour's tests).
# scipy, sparse and dask: the coordinate (COO/CSR) benchmarks and interoperability work;
# distributed: writes from a dask cluster (from_dask) on its schedulers.
# pip and setuptools: the test of `pip install --no-build-isolation .` (test/package).
# netcdf-bin, netCDF4, xarray, h5netcdf and Debian's LZF plugin: the clients and the neighbour
# plugin the package install test (scripts/dev install-test) runs against, offline.
toolchain_packages_common=(
  g++ cmake make ninja-build pkgconf git
  libhdf5-dev hdf5-tools
  python3-h5py python3-h5py-serial python3-numpy python3-pytest python3-tables python3-hdf5plugin
  hdf5-filter-plugin-blosc-serial
  libblosc-dev libzstd-dev liblz4-dev liblzf-dev libxxhash-dev zlib1g-dev libgtest-dev libdeflate-dev
  dpkg-dev time procps valgrind python3-matplotlib
  python3-scipy python3-sparse python3-dask python3-distributed python3-pip python3-setuptools
  netcdf-bin python3-netcdf4 python3-xarray python3-h5netcdf hdf5-plugin-lzf
  libhdf5-mpi-dev openmpi-bin python3-mpi4py python3-h5py-mpi
)
# The fuzz configuration (clang, libFuzzer) runs on the 1.14 toolchain only.
toolchain_packages_trixie=(clang libclang-rt-19-dev libfuzzer-19-dev)
toolchain_packages_forky=()

tc_log() { printf '[dev] %s\n' "$*" >&2; }

# "1.14" or "2" from anything naming a version ("2", "2.2", "2.x", "1.14.5").
normalise_hdf5_major() {
  case "$1" in
    1.14|1.14.*) echo 1.14 ;;
    2|2.*) echo 2 ;;
    *) tc_log "H5SPARSE_HDF5=$1: expected 1.14 or 2"; return 1 ;;
  esac
}

# The host's usable HDF5 ("1.14" or "2"), or nothing: headers >= 1.14 for C++ and an h5py
# built on the same major version.
host_hdf5_major() {
  [ -n "${H5SPARSE_FORCE_ROOT:-}" ] && return 0
  command -v c++ >/dev/null 2>&1 && command -v cmake >/dev/null 2>&1 || return 0
  local flags headers h5py_version
  flags=$(pkg-config --cflags hdf5-serial 2>/dev/null || pkg-config --cflags hdf5 2>/dev/null || true)
  headers=$(printf '#include <hdf5.h>\nH5_VERS_MAJOR.H5_VERS_MINOR\n' | c++ -E -P -x c++ $flags - 2>/dev/null | tail -1 |
    tr -d ' ')
  h5py_version=$(python3 -c 'import h5py; print(h5py.version.hdf5_version)' 2>/dev/null) || return 0
  case "$headers" in 1.14) ;; [2-9].*) headers=2 ;; *) return 0 ;; esac
  [ "$(normalise_hdf5_major "$h5py_version" 2>/dev/null)" = "$headers" ] && echo "$headers"
  return 0
}

suite_of() { case "$1" in 1.14) echo trixie ;; 2) echo forky ;; esac; }

toolchain_package_list() {  # sorted, one per line
  local -n extra="toolchain_packages_$1"
  printf '%s\n' "${toolchain_packages_common[@]}" "${extra[@]}" | sort -u
}

root_path() {
  local suite=$1 hash
  hash=$( { echo "$suite recipe=$root_recipe"; toolchain_package_list "$suite"; } | sha256sum | cut -c1-12)
  echo "$roots_dir/$suite-$hash"
}

# The host's Debian mirror, so the roots use the same package source as the host's apt.
host_debian_mirror() {
  local uri
  uri=$(grep -hE '^\s*URIs:\s*\S+/debian/?\s*$' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 |
    awk '{print $2}')
  [ -n "$uri" ] || uri=$(grep -hoE '^\s*deb\s+\S+/debian/?\s' /etc/apt/sources.list 2>/dev/null | head -1 |
    awk '{print $2}')
  printf '%s' "${uri:-http://deb.debian.org/debian}"
}

# Runs "$@" inside ROOT with the repository (and /dev, /proc) mounted at the same paths; extra
# bind mounts come as "src:dst" words in H5SPARSE_ROOT_BINDS. The mounts live in a private
# mount namespace and vanish when the command ends. With H5SPARSE_ROOT_OVERLAY=DIR the command
# sees a copy of ROOT instead: an overlay whose changes go to DIR (kept across commands, so
# several commands see one copy), while ROOT itself stays as it was.
run_in_root() {
  local root=$1; shift
  local cwd=$PWD
  case "$cwd" in "$repo"|"$repo"/*) ;; *) cwd=$repo ;; esac
  local passthrough=() var
  for var in CI TERM BLOSC_NTHREADS H5SPARSE_NTHREADS H5SPARSE_BENCH_MB CTEST_PARALLEL_LEVEL H5SPARSE_BUILD_DIR \
             H5SPARSE_HDF5 H5SPARSE_COMMIT; do
    [ -n "${!var:-}" ] && passthrough+=("$var=${!var}")
  done
  unshare --mount --propagation private /bin/sh -c '
    set -e
    root=$1; repo=$2; binds=$3; overlay=$4; shift 4
    if [ -n "$overlay" ]; then
      mkdir -p "$overlay/upper" "$overlay/work" "$overlay/merged"
      mount -t overlay overlay -o "lowerdir=$root,upperdir=$overlay/upper,workdir=$overlay/work" "$overlay/merged"
      root=$overlay/merged
    fi
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    mkdir -p "$root$repo"
    mount --bind "$repo" "$root$repo"
    [ -d "$repo/../shared" ] && mkdir -p "$root$repo/../shared" && mount --bind "$repo/../shared" "$root$repo/../shared"
    for b in $binds; do mkdir -p "$root${b#*:}" && mount --bind "${b%%:*}" "$root${b#*:}"; done
    exec chroot "$root" "$@"' sh "$root" "$repo" "${H5SPARSE_ROOT_BINDS:-}" "${H5SPARSE_ROOT_OVERLAY:-}" \
    /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 "${passthrough[@]}" /bin/bash -c 'cd "$1" && shift && exec "$@"' sh "$cwd" "$@"
}

# Makes the root of SUITE from nothing unless it is complete already; prints its path.
ensure_root() {
  local suite=$1 root
  root=$(root_path "$suite")
  [ -f "$root/.h5sparse-complete" ] && { echo "$root"; return 0; }
  [ "$(id -u)" = 0 ] || { tc_log "making the $suite toolchain root needs root"; return 1; }
  mkdir -p "$roots_dir" "$deb_cache/$suite/bootstrap" "$deb_cache/$suite/apt/partial"
  (
    # The lock guards the making only: the command that runs afterwards does not hold it.
    exec 9>"$roots_dir/$suite.lock"
    flock 9
    [ -f "$root/.h5sparse-complete" ] && exit 0
    make_root "$suite" "$root.partial" && mv "$root.partial" "$root"
  ) >&2 || return 1
  echo "$root"
}

make_root() {
  local suite=$1 tmp=$2 start=$SECONDS mirror script=
  mirror=$(host_debian_mirror)
  command -v debootstrap >/dev/null 2>&1 || {
    tc_log "installing debootstrap on the host"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  }
  # Debian 12's debootstrap has no script for forky; sid's serves.
  [ "$suite" = forky ] && [ ! -e /usr/share/debootstrap/scripts/forky ] && script=/usr/share/debootstrap/scripts/sid
  rm -rf --one-file-system "$tmp"
  tc_log "making the Debian $suite root $tmp from nothing (debootstrap from $mirror)"
  debootstrap --variant=minbase --include=ca-certificates --cache-dir="$deb_cache/$suite/bootstrap" \
    "$suite" "$tmp" "$mirror" $script >"$tmp.log" 2>&1 ||
    { tail -20 "$tmp.log"; tc_log "debootstrap failed, see $tmp.log"; return 1; }
  if [ "$suite" = forky ]; then
    # The mirror's forky Release file is past its Valid-Until date (testing is re-signed only
    # when it changes); without this, apt refuses every update.
    echo 'Acquire::Check-Valid-Until "false";' >"$tmp/etc/apt/apt.conf.d/99h5sparse-valid-until"
  fi
  tc_log "installing the $suite toolchain packages"
  local packages
  mapfile -t packages < <(toolchain_package_list "$suite")
  H5SPARSE_ROOT_BINDS="$deb_cache/$suite/apt:/var/cache/apt/archives" run_in_root "$tmp" /bin/sh -c '
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@" >/var/log/h5sparse-apt.log 2>&1 ||
      { tail -30 /var/log/h5sparse-apt.log; exit 1; }' sh "${packages[@]}" || return 1
  toolchain_package_list "$suite" >"$tmp/.h5sparse-packages"
  mv "$tmp.log" "$tmp/var/log/h5sparse-debootstrap.log"
  run_in_root "$tmp" /bin/sh -c 'h5dump --version; python3 -c "import h5py; print(\"h5py\", h5py.version.version, \"HDF5\", h5py.version.hdf5_version)"' \
    >"$tmp/.h5sparse-complete" || return 1
  tc_log "root $suite ready in $((SECONDS - start)) s: $(tr '\n' ' ' <"$tmp/.h5sparse-complete")"
  local older
  older=$(ls -d "$roots_dir/$suite"-* 2>/dev/null | grep -vE '\.(partial|lock|log)$' | grep -vxF "${tmp%.partial}" | tr '\n' ' ')
  [ -z "$older" ] || tc_log "roots of earlier package lists, unused unless a checkout still names them: $older"
}

# Sets tc_hdf5 (1.14 or 2) and tc_root (empty for the host) for H5SPARSE_HDF5.
select_toolchain() {
  local host
  host=$(host_hdf5_major)
  if [ -n "${H5SPARSE_HDF5:-}" ]; then
    tc_hdf5=$(normalise_hdf5_major "$H5SPARSE_HDF5") || return 1
  else
    tc_hdf5=${host:-1.14}
  fi
  tc_root=
  [ "$host" = "$tc_hdf5" ] || tc_root=$(ensure_root "$(suite_of "$tc_hdf5")") || return 1
}

# Runs a command with the selected toolchain (host or root).
tc() {
  if [ -z "$tc_root" ]; then "$@"; else run_in_root "$tc_root" "$@"; fi
}
