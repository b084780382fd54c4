#!/bin/sh
# Device code compiles (no GPU needed): examples, GPU tests, GPU benchmark,
# warning-free (-Werror all-warnings, host -Wall -Wextra). One check each.
cd "$(dirname "$0")/.." || exit 1
NVCC=${NVCC:-nvcc}
F="-O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -Xcompiler -Wall,-Wextra -Werror all-warnings"
F90A=$(echo "$F" | sed 's/compute_90,code=sm_90/compute_90a,code=sm_90a/') # the GEMM: wgmma, setmaxnreg
mkdir -p build
pass=0; fail=0
build() { # out, sources...
  out=$1; shift
  if $NVCC ${FLAGS:-$F} -o "build/$out" "$@" > "build/$out.log" 2>&1; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: build/$out"; cat "build/$out.log"; fi
}
build minimal examples/minimal.cu
build warp_specialized examples/warp_specialized.cu
build persistent examples/persistent.cu
build peer_ring examples/peer_ring.cu
build test_multi tests/gpu/test_multi.cu
build test_device tests/gpu/test_device.cu tests/gpu/ring.cu tests/gpu/ring_staged.cu tests/gpu/staged.cu
build test_accuracy tests/gpu/test_accuracy.cu tests/gpu/accuracy_gt.cu tests/gpu/accuracy_staged.cu tests/gpu/accuracy_now.cu tests/gpu/accuracy_auto.cu
build test_trap tests/gpu/test_trap.cu
build overhead bench/overhead.cu
FLAGS=$F90A build gemm examples/gemm.cu
for v in 0 1 2 3 4 5 6 7; do
  if $NVCC $F90A -DGV=$v -c -o build/gemm_v$v.o bench/gemm_variant.cu > build/gemm_v$v.log 2>&1; then :; else fail=$((fail+1)); echo "FAIL: gemm_v$v"; cat build/gemm_v$v.log; fi
done
FLAGS=$F90A build gemm_bench bench/gemm_bench.cu build/gemm_v0.o build/gemm_v1.o build/gemm_v2.o build/gemm_v3.o build/gemm_v4.o build/gemm_v5.o build/gemm_v6.o build/gemm_v7.o -lcublas
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
