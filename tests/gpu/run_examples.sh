#!/bin/sh
# make gpu-test, part 2: the examples on the GPU, their traces checked, and
# each example under compute-sanitizer memcheck, racecheck and synccheck;
# example 1 also under Nsight Compute. Arguments: only these examples.
cd "$(dirname "$0")/../.." || exit 1
exec python3 tests/gpu/check_examples.py "$@"
