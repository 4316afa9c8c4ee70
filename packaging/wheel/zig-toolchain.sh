# Sourced by build-deps and build-wheel: the C and C++ compilers of the wheel, Zig's clang from
# PyPI targeting glibc 2.28 (manylinux_2_28) with its own C++ runtime, without a container.
#
# zig_tools CACHE BIN: makes sure CACHE/tools is a venv with ziglang $ZIGLANG_VERSION, then writes
# BIN/cc, BIN/c++, BIN/ar and BIN/ranlib calling it (Zig's cache in CACHE/zig-cache) and sets
# zig_bin=BIN.
readonly ZIGLANG_VERSION=0.17.1
readonly ZIG_TARGET=x86_64-linux-gnu.2.28

zig_tools() {
  local cache=$1 py=$1/tools/bin/python zig tool
  if [ "$("$py" -m ziglang version 2>/dev/null)" != "$ZIGLANG_VERSION" ]; then
    printf 'zig-toolchain: installing ziglang %s into %s\n' "$ZIGLANG_VERSION" "$cache/tools" >&2
    rm -rf "$cache/tools"
    python3 -m venv "$cache/tools" >&2
    "$py" -m pip install -q --disable-pip-version-check "ziglang==$ZIGLANG_VERSION" >&2
  fi
  zig=$("$py" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
  zig_bin=$2
  mkdir -p "$zig_bin" "$cache/zig-cache"
  for tool in cc:"cc -target $ZIG_TARGET" c++:"c++ -target $ZIG_TARGET" ar:ar ranlib:ranlib; do
    printf '#!/bin/sh\nexport ZIG_GLOBAL_CACHE_DIR=%q ZIG_LOCAL_CACHE_DIR=%q\nexec %q %s "$@"\n' \
      "$cache/zig-cache" "$cache/zig-cache" "$zig" "${tool#*:}" >"$zig_bin/${tool%%:*}"
    chmod +x "$zig_bin/${tool%%:*}"
  done
}
