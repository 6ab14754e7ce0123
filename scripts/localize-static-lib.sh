#!/usr/bin/env bash
# Makes a static libcodeoid.a whose only global symbols are the C API's `codeoid_*` functions.
#
#   scripts/localize-static-lib.sh IN.a OUT.a
#
# Cargo's staticlib carries every symbol of its dependencies as a global: the bundled SQLite
# (`sqlite3_*`), compiler-rt, BLAKE3, aws-lc, Rust's std. A program that links its own SQLite
# (the system libsqlite3, an amalgamation, Go's mattn/go-sqlite3) then fails with "multiple
# definition of sqlite3_...", or silently calls codeoid's copy instead of its own. This script
#
#   1. links the archive's members that the `codeoid_*` functions need into one relocatable
#      object (`ld -r -u codeoid_...`), so every reference between them is resolved inside it;
#   2. makes every symbol that object defines local except the `codeoid_*` functions
#      (`objcopy --keep-global-symbols`); references to the C library, libm and libgcc stay
#      undefined and are resolved when the program is linked, exactly as before;
#   3. archives that one object as OUT.a, and checks the result: the globals it defines are
#      exactly the `codeoid_*` functions of IN.a, and it needs nothing IN.a defined.
#
# Linux / ELF with GNU binutils only (`ld`, `objcopy`, `readelf`); LD, OBJCOPY, READELF and AR
# override the tools. The result links like the original archive (same system libraries after
# it) and keeps its debug information.
set -euo pipefail

if [ "$#" -ne 2 ]; then
  echo "usage: $0 IN.a OUT.a" >&2
  exit 2
fi
in="$1"
out="$2"
ld="${LD:-ld}"
objcopy="${OBJCOPY:-objcopy}"
readelf="${READELF:-readelf}"
# gcc-ar passes GCC's LTO plugin explicitly; plain `ar` loads every plugin in bfd-plugins/, and
# LLVM 14's LLVMgold aborts ("Invalid encoding") on an object with more than 65535 sections,
# which the partial link of a Rust crate graph easily has.
if [ -z "${AR:-}" ]; then
  if command -v gcc-ar > /dev/null; then AR=gcc-ar; else AR=ar; fi
fi

if [ ! -f "$in" ]; then
  echo "$0: $in does not exist; build it first (cargo build -p codeoid-ffi)" >&2
  exit 1
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Defined symbols (name per line) of an object or archive, by binding. readelf rather than nm:
# GNU nm, like ar, loads the bfd plugins.
defined() { # file binding-regex
  "$readelf" --wide --syms "$1" 2> /dev/null |
    awk -v bind="$2" '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $5 ~ bind && $8 != "" {print $8}' |
    sort -u
}
undefined() { # file
  "$readelf" --wide --syms "$1" 2> /dev/null |
    awk '$1 ~ /^[0-9]+:$/ && $7 == "UND" && $8 != "" {print $8}' | sort -u
}

defined "$in" '^(GLOBAL|WEAK)$' > "$work/in-defined"
grep '^codeoid_' "$work/in-defined" > "$work/keep" || true
if [ ! -s "$work/keep" ]; then
  echo "$0: $in defines no codeoid_* symbol; is it libcodeoid.a?" >&2
  exit 1
fi

roots=()
while read -r symbol; do roots+=(-u "$symbol"); done < "$work/keep"
"$ld" -r "${roots[@]}" -o "$work/codeoid.o" "$in"
"$objcopy" --keep-global-symbols="$work/keep" "$work/codeoid.o" "$work/libcodeoid.o"

defined "$work/libcodeoid.o" '^(GLOBAL|WEAK|UNIQUE)$' > "$work/out-global"
if ! diff -u "$work/keep" "$work/out-global" >&2; then
  echo "$0: the localized object's globals are not exactly the codeoid_* functions" >&2
  exit 1
fi
undefined "$work/libcodeoid.o" > "$work/out-undefined"
comm -12 "$work/out-undefined" "$work/in-defined" > "$work/unresolved"
if [ -s "$work/unresolved" ]; then
  echo "$0: symbols $in defines were left undefined:" >&2
  head -20 "$work/unresolved" >&2
  exit 1
fi

mkdir -p "$(dirname "$out")"
rm -f "$out.tmp"
"$AR" rcs "$out.tmp" "$work/libcodeoid.o"
mv -f "$out.tmp" "$out"
echo "$out: $(wc -l < "$work/keep") global symbols, all codeoid_*" >&2
