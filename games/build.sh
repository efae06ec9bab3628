#!/bin/sh
# Builds games/*.gb with Debian's SDCC 4.2 (sdcc -msm83, sdasgb). Run from anywhere.
set -e
cd "$(dirname "$0")"
B=build
mkdir -p $B
sdasgb -o $B/crt0.rel common/crt0.s
sdasgb -o $B/fast.rel common/fast.s
CF="-msm83 --std-c11 --opt-code-size -Icommon"

build() { # name title carttype rombanks ramcode
    name=$1
    python3 $name/assets.py $B/$name
    sdcc $CF -I$B/$name -c common/common.c -o $B/$name/common.rel
    sdcc $CF -I$B/$name -c $name/$name.c -o $B/$name/$name.rel
    sdcc -msm83 --no-std-crt0 --code-loc 0x0150 --data-loc 0xC200 \
        -o $B/$name/$name.ihx $B/crt0.rel $B/fast.rel $B/$name/common.rel $B/$name/$name.rel
    python3 tools/mkrom.py $name.gb $B/$name/$name.ihx "$2" $3 $4 $5 $B/$name/bank*.bin
}

build dodge  "EMURUST DODGE"  0x01 4 0x00   # MBC1, 64 KiB (4 banks), no RAM
build snake  "EMURUST SNAKE"  0x13 2 0x02   # MBC3+RAM+BATTERY, 32 KiB, 8 KiB RAM
build runner "EMURUST RUNNER" 0x1B 4 0x02   # MBC5+RAM+BATTERY, 64 KiB, 8 KiB RAM
