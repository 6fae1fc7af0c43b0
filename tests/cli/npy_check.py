#!/usr/bin/env python3
"""npy_check.py FILE.npy EXPECTED.txt: loads FILE.npy with numpy.load and compares it with the
expected value written by the C++ test from the library's API: line 1 the numpy dtype name, line 2
the shape (space-separated), then one element per line (floats as %.17g or nan/inf/-inf, complex as
"re im", strings as hex of their bytes). Exit 0 when dtype, shape and every element match exactly."""
import math
import sys

import numpy

arr = numpy.load(sys.argv[1], allow_pickle=False)
lines = open(sys.argv[2]).read().split("\n")
dtype, shape, elements = lines[0], tuple(int(x) for x in lines[1].split()), lines[2:2 + arr.size]


def same_float(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


problems = []
if dtype == "str":
    if arr.dtype.kind != "S":
        problems.append(f"dtype {arr.dtype} is not a byte string")
elif arr.dtype.name != dtype:
    problems.append(f"dtype {arr.dtype.name} != {dtype}")
if arr.shape != shape:
    problems.append(f"shape {arr.shape} != {shape}")
for i, (got, want) in enumerate(zip(arr.reshape(-1).tolist(), elements)):
    if dtype == "str":
        ok = got == bytes.fromhex(want)
    elif dtype.startswith("complex"):
        re, im = (float(x) for x in want.split())
        ok = same_float(got.real, re) and same_float(got.imag, im)
    elif dtype == "bool":
        ok = got == (want == "1")
    elif dtype.startswith("float"):
        ok = same_float(float(got), float(want))
    else:
        ok = got == int(want)
    if not ok:
        problems.append(f"element {i}: {got!r} != {want}")
        break
if len(elements) != arr.size:
    problems.append(f"expected {len(elements)} elements, file has {arr.size}")
if problems:
    print(sys.argv[1] + ": " + "; ".join(problems))
    sys.exit(1)
