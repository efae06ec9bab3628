#!/usr/bin/env bash
# Build every test ROM in roms/src/*.s into roms/<name>.gb.
# Toolchain: Debian SDCC 4.2 (sdasgb assembler, sdldgb linker, makebin) + python3.
# Deterministic: no timestamps end up in the images; unused ROM space is 0xFF.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$here/src"
build="$here/build"
rm -rf "$build"
mkdir -p "$build"

for f in "$src"/*.s; do
    name="$(basename "$f" .s)"
    # ROM size from the source's header definition: 32 KiB << code
    code="$(sed -n 's/^ROM_SIZE_CODE *= *\(0x[0-9A-Fa-f]*\).*/\1/p' "$f")"
    [ -n "$code" ] || { echo "build.sh: $f lacks ROM_SIZE_CODE" >&2; exit 1; }
    size=$(( 32768 << code ))
    banks=$(( size / 16384 ))
    rels=("$build/$name.rel")
    bflags=()
    if [ -f "$here/gen/${name}_gen.py" ]; then
        # generated include (stubs + expected values from a reference model)
        python3 "$here/gen/${name}_gen.py" "$build/${name}_tests.inc"
    fi
    (cd "$src" && sdasgb -I"$build" -plosgff -o "$build/$name.rel" "$name.s")
    if [ "$banks" -gt 2 ]; then
        # multi-bank ROM: generate the bank tags (see gen_banks.py)
        read -r -a bflags <<< "$(python3 "$here/gen_banks.py" "$banks" "$build/${name}_banks.s")"
        sdasgb -plosgff -o "$build/${name}_banks.rel" "$build/${name}_banks.s"
        rels+=("$build/${name}_banks.rel")
    fi
    sdldgb -m -i "${bflags[@]}" "$build/$name.ihx" "${rels[@]}" > "$build/$name.link.log"
    [ -s "$build/$name.ihx" ] || { echo "build.sh: link failed for $name" >&2; cat "$build/$name.link.log" >&2; exit 1; }
    makebin -s "$size" "$build/$name.ihx" "$build/$name.gb"
    python3 "$here/fix_header.py" "$build/$name.gb"
    cp "$build/$name.gb" "$here/$name.gb"
    echo "built roms/$name.gb ($size bytes)"
done
