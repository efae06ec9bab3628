#!/usr/bin/env bash
# Build the game-wrapper test ROMs (wrap_*.s, sharing wrapgame.inc) into roms/wrappers/*.gb.
# Same toolchain and header fixing as roms/build.sh; deterministic.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$here/build"
rm -rf "$build"
mkdir -p "$build"
for f in "$here"/wrap_*.s; do
    name="$(basename "$f" .s)"
    code="$(sed -n 's/^ROM_SIZE_CODE *= *\(0x[0-9A-Fa-f]*\).*/\1/p' "$f")"
    size=$(( 32768 << code ))
    (cd "$here" && sdasgb -plosgff -o "$build/$name.rel" "$name.s")
    sdldgb -m -i "$build/$name.ihx" "$build/$name.rel" > "$build/$name.link.log"
    [ -s "$build/$name.ihx" ] || { echo "build.sh: link failed for $name" >&2; cat "$build/$name.link.log" >&2; exit 1; }
    makebin -s "$size" "$build/$name.ihx" "$build/$name.gb"
    python3 "$here/../fix_header.py" "$build/$name.gb"
    cp "$build/$name.gb" "$here/$name.gb"
    echo "built roms/wrappers/$name.gb ($size bytes)"
done
