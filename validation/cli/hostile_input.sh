#!/bin/sh
# Malformed and hostile inputs, one generated file per class: each must end `moreau` with exit
# status 2 and a message naming the file, the JSON path or dataset and the rule, quickly and
# without allocating what the input declares (the test runs under a 1 GiB address-space limit,
# so a reader that trusted a declared size would die of std::bad_alloc instead).
# usage: hostile_input.sh MOREAU SCENES_DIRECTORY WORK_DIRECTORY
set -eu
moreau=$1
scenes=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
failures=0
# AddressSanitizer reserves terabytes of address space: the limit applies to release builds.
limit=1048576
if ldd "$moreau" 2>/dev/null | grep -q libasan; then limit=unlimited; fi

# expect STATUS FRAGMENT COMMAND...: runs COMMAND, checks its exit status and that its standard
# error holds FRAGMENT.
expect() {
  want=$1
  fragment=$2
  shift 2
  status=0
  (ulimit -v "$limit"; "$@") >"$work/out" 2>"$work/err" || status=$?
  if [ "$status" -ne "$want" ] || ! grep -qF -- "$fragment" "$work/err"; then
    echo "FAIL: $*: status $status (expected $want), message: $(cat "$work/err")"
    echo "      expected the message to hold: $fragment"
    failures=$((failures + 1))
  else
    echo "ok: $(head -c 300 "$work/err")"
  fi
}

# ---- scene files, from the shipped sliding ball ----
base="$scenes/sliding_ball.json"
py=/usr/bin/python3
$py - "$base" "$work" <<'EOF'
import json, sys
base, work = sys.argv[1], sys.argv[2]
text = open(base).read()
def write(name, content, mode="w"):
    with open(f"{work}/{name}", mode) as f:
        f.write(content)
# A duplicate at the top level and one two objects deep.
write("duplicate_top.json", text.replace('"dimension": 3,', '"dimension": 3,\n  "dimension": 2,', 1))
scene = json.loads(text)
nested = json.dumps(scene, indent=2).replace('"margin":', '"margin": 0.001, "margin":', 1)
write("duplicate_nested.json", nested)
# Bytes after the JSON value: NUL bytes (the parser would stop at the first).
write("trailing_nul.json", text.encode() + b"\0\0garbage", "wb")
# 2^63 steps: one more than a long holds.
big = dict(scene); big["steps"] = 0
write("steps_2_63.json", json.dumps(big).replace('"steps": 0', '"steps": 9223372036854775808'))
# A cell size far below the bodies.
tiny = json.loads(text); tiny["collision"]["cell_size"] = 1e-9
write("tiny_cell.json", json.dumps(tiny))
# A time step that makes the simulated time infinite.
huge_dt = json.loads(text); huge_dt["time_step"] = 1e308
write("infinite_time.json", json.dumps(huge_dt))
# A generator asked for 10^12 bodies.
many = json.loads(text); many["generators"] = [{"type": "random_spheres", "count": 1e12,
    "radius_min": 0.001, "box_min": [0, 0, 0], "box_max": [1, 1, 1]}]
write("too_many_bodies.json", json.dumps(many))
EOF
expect 2 "dimension: duplicate key (first given at line" "$moreau" check "$work/duplicate_top.json"
expect 2 "collision.margin: duplicate key" "$moreau" check "$work/duplicate_nested.json"
expect 2 "a NUL byte" "$moreau" check "$work/trailing_nul.json"
expect 2 "steps: must lie in [0, 9223372036854775807], got 9223372036854775808" \
  "$moreau" check "$work/steps_2_63.json"
expect 2 "collision.cell_size: 1e-09 m is below 1/8 of the largest" \
  "$moreau" check "$work/tiny_cell.json"
expect 2 "do not make a finite simulated time" "$moreau" check "$work/infinite_time.json"
expect 2 "generators[0].count: 1000000000000 bodies would take the scene past its limit of 10000000" "$moreau" check "$work/too_many_bodies.json"
expect 2 "not a regular file" "$moreau" check /dev/zero
# A 100 MB file of whitespace (sparse: it takes no disk).
truncate -s 100000000 "$work/huge.json"
expect 2 "bytes, more than a scene file may hold" "$moreau" check "$work/huge.json"
expect 2 "bytes, more than a scene file may hold" "$moreau" run "$work/huge.json"

# ---- FCLIB files, written with h5py ----
$py - "$work" <<'EOF'
import sys
import h5py
import numpy as np
work = sys.argv[1]

def local(path, edit=None):
    """A valid two-contact local problem (W 6 x 6 in CSC), changed by `edit`."""
    with h5py.File(path, "w") as f:
        g = f.create_group("fclib_local")
        g["spacedim"] = np.array([3], dtype=np.int32)
        W = g.create_group("W")
        n = 6
        W["m"] = np.array([n], dtype=np.int32)
        W["n"] = np.array([n], dtype=np.int32)
        W["nz"] = np.array([-1], dtype=np.int32)
        W["nzmax"] = np.array([n], dtype=np.int32)
        W["p"] = np.arange(n + 1, dtype=np.int32)
        W["i"] = np.arange(n, dtype=np.int32)
        W["x"] = np.ones(n)
        v = g.create_group("vectors")
        v["q"] = np.array([-1.0, 0.1, 0.0, -1.0, 0.0, 0.2])
        v["mu"] = np.array([0.3, 0.3])
        info = g.create_group("info")
        info["title"] = "hostile input test"
        if edit:
            edit(f, g)

local(f"{work}/valid.hdf5")

def declared_empty(f, g):
    del g["vectors"]["q"]
    g["vectors"].create_dataset("q", shape=(6,), dtype="f8")  # declared, never written
local(f"{work}/declared_empty.hdf5", declared_empty)

def declared_huge(f, g):
    del g["W"]["x"]
    g["W"].create_dataset("x", shape=(268435456,), dtype="f8")
local(f"{work}/declared_huge.hdf5", declared_huge)

def disagreeing(f, g):
    del g["W"]["n"]
    g["W"]["n"] = np.array([805306368], dtype=np.int32)
local(f"{work}/disagreeing.hdf5", disagreeing)

def decreasing(f, g):
    del g["W"]["p"]
    g["W"]["p"] = np.array([0, 2, 1, 3, 4, 5, 6], dtype=np.int32)
local(f"{work}/decreasing.hdf5", decreasing)

def offset(f, g):
    del g["W"]["p"]
    g["W"]["p"] = np.array([1, 1, 2, 3, 4, 5, 6], dtype=np.int32)
local(f"{work}/offset.hdf5", offset)

def title_array(f, g):
    del g["info"]["title"]
    g["info"].create_dataset("title", data=["one", "two"], dtype=h5py.string_dtype())
local(f"{work}/title_array.hdf5", title_array)
EOF
if "$moreau" fclib info "$work/valid.hdf5" >"$work/out" 2>"$work/err"; then
  echo "ok: the valid sample reads"
else
  echo "FAIL: the valid sample does not read: $(cat "$work/err")"
  failures=$((failures + 1))
fi
expect 2 "/fclib_local/vectors/q: declares 6 elements but stores none" \
  "$moreau" fclib info "$work/declared_empty.hdf5"
expect 2 "/fclib_local/W/x: declares 268435456 elements, more than a problem file may hold" \
  "$moreau" fclib info "$work/declared_huge.hdf5"
expect 2 "/fclib_local/W: is 6 x 805306368 but /fclib_local/vectors/q has 6 entries" \
  "$moreau" fclib info "$work/disagreeing.hdf5"
expect 2 "/fclib_local/W/p: pointer 2 (1) is below pointer 1 (2)" \
  "$moreau" fclib info "$work/decreasing.hdf5"
expect 2 "/fclib_local/W/p: starts at 1; pointers start at 0" \
  "$moreau" fclib info "$work/offset.hdf5"
expect 2 "/fclib_local/info/title: holds 2 strings; FCLIB stores one" \
  "$moreau" fclib solve "$work/title_array.hdf5"

echo "$failures failures"
test "$failures" -eq 0
