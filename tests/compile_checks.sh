#!/bin/sh
# Compile checks of the two headers (sources in tests/compile/):
#  - ikp.h as C99, C11 and C++ with gcc and clang, -Wall -Wextra -pedantic
#    -Werror, IKP_STATIC, custom allocator macros (a partial set must fail);
#  - a plain decoder built with no CUDA flags links and runs with libc only,
#    also with the CUDA headers on the include path; IKP_CUDA + -lcudart links;
#  - the two headers refuse to compile together at different versions;
#  - ikp_cuda.cuh compiles for every architecture it claims (default build
#    sm_75 and up, IKP_STAGED=1 sm_90 and up) and IKP_STAGED=1 below sm_90
#    stops with its own error message;
#  - the staging macros check their arguments in every build (IKP_STAGE of an
#    undeclared array fails staged, unstaged and disabled);
#  - IKP_NO_REPORT leaves diff and report out, IKP_NO_PERFETTO the Perfetto
#    writer (a .pftrace path is then refused), IKP_NO_MERGE merged
#    timelines: the core builds alone, and a call of a left-out part fails;
#    IKP_NO_EXPORT the Parquet export: every combination of the four builds
#    as C99 and C++;
#  - ikp_cuda.cuh's recording builds: every combination of the switches the
#    docs name (IKP_TIMER, IKP_RING, IKP_STAGED, IKP_DEFER_BEGIN, IKP_TICKS,
#    IKP_ANCHOR_EVERY where it applies: 28 builds) and IKP_ENABLE=0; a
#    combination IKP_TICKS=1 cannot serve stops with its own error.
#  Arguments: the parts to run (default all): gcc and clang (ikp.h with
#  each), decode (the plain decoder), cuda (what needs nvcc); make test runs
#  them as two runners, make check all but cuda.
parts=${*:-gcc clang decode cuda}
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
cd "$(dirname "$0")/.." || exit 1
src=tests/compile
out=build/compile-checks
mkdir -p "$out"
pass=0; fail=0
W="-Wall -Wextra -pedantic -Werror"
NVCC=${NVCC:-nvcc}
CUDA_INC=""
CUDA_LIB=""
if command -v "$NVCC" >/dev/null 2>&1; then
  CUDA=$(dirname "$(dirname "$(command -v "$NVCC")")")
  CUDA_INC="-I$CUDA/include"
  CUDA_LIB="-L$CUDA/lib64 -Wl,-rpath,$CUDA/lib64"
fi
try() { # name, expect (ok|fail), command...
  name=$1; expect=$2; shift 2
  if "$@" > $out/$name.log 2>&1; then got=ok; else got=fail; fi
  if [ "$got" = "$expect" ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL compile: $name (expected $expect)"; head -20 $out/$name.log; fi
}
# name, needle: the last check's log must say why it failed
says() {
  if grep -q "$2" $out/$1.log; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $1 does not say '$2'"; head -5 $out/$1.log; fi
}
for cc in gcc clang; do
  has $cc || continue
  command -v $cc >/dev/null 2>&1 || { fail=$((fail+1)); echo "FAIL: $cc not found"; continue; }
  # the core alone (IKP_NO_REPORT: no diff, no report): it builds, and a call
  # of the left-out part is an error
  try $cc-no-report ok $cc -std=c99 $W -DIKP_NO_REPORT -I. $src/impl.c -o $out/$cc-no-report
  try $cc-no-report-run ok $out/$cc-no-report
  try $cc-no-report-cxx ok $cc -x c++ -std=c++11 $W -DIKP_NO_REPORT -I. -c $src/impl.c -o $out/$cc-no-report.o
  try $cc-no-report-left-out fail $cc -std=c99 $W -DIKP_NO_REPORT -I. -c $src/no_report_call.c -o $out/$cc-nr.o
  says $cc-no-report-left-out ikp_diff_compute
  # without the Perfetto writer and merged timelines (and report): JSON as
  # ever, a .pftrace path refused before anything is written; their calls
  # are errors
  try $cc-core ok $cc -std=c99 $W -DIKP_NO_PERFETTO -DIKP_NO_MERGE -DIKP_NO_REPORT -I. $src/no_perfetto.c -o $out/$cc-core
  try $cc-core-run ok $out/$cc-core $out
  try $cc-core-cxx ok $cc -x c++ -std=c++11 $W -DIKP_NO_PERFETTO -DIKP_NO_MERGE -I. -c $src/impl.c -o $out/$cc-core.o
  try $cc-no-perfetto ok $cc -std=c99 $W -DIKP_NO_PERFETTO -I. $src/no_perfetto.c -o $out/$cc-no-perfetto
  try $cc-no-perfetto-run ok $out/$cc-no-perfetto $out
  try $cc-no-merge ok $cc -std=c99 $W -DIKP_NO_MERGE -I. $src/impl.c -o $out/$cc-no-merge
  # every combination of the four layers left out (16): gcc compiles each as
  # C99; clang reads each as C99 and as C++ (-fsyntax-only: its warnings,
  # an unused static function among them, without the code generation)
  for r in "" -DIKP_NO_REPORT; do for p in "" -DIKP_NO_PERFETTO; do for m in "" -DIKP_NO_MERGE; do for e in "" -DIKP_NO_EXPORT; do
    x="$r $p $m $e"
    n=$cc-layers$(echo "$x" | tr -d ' ' | sed 's/-DIKP_NO_/-/g' | tr 'A-Z' 'a-z')
    if [ $cc = gcc ]; then
      try $n ok $cc -std=c99 $W $x -I. -c $src/impl.c -o $out/$n.o
    else
      try $n ok $cc -std=c99 $W $x -I. -fsyntax-only $src/impl.c
      try $n-cxx ok $cc -x c++ -std=c++11 $W $x -I. -fsyntax-only $src/impl.c
    fi
  done; done; done; done
  try $cc-no-perfetto-left-out fail $cc -std=c99 $W -DIKP_NO_PERFETTO -I. -c $src/no_perfetto_call.c -o $out/$cc-np.o
  says $cc-no-perfetto-left-out ikp_write_perfetto
  try $cc-no-merge-left-out fail $cc -std=c99 $W -DIKP_NO_MERGE -I. -c $src/no_merge_call.c -o $out/$cc-nm.o
  says $cc-no-merge-left-out ikp_write_merged
  try $cc-c99 ok $cc -std=c99 $W -I. $src/impl.c -o $out/$cc-c99
  try $cc-c99-run ok $out/$cc-c99
  try $cc-c11 ok $cc -std=c11 $W -Wundef -Wshadow -Wconversion -Wno-sign-conversion -I. -c $src/impl.c -o $out/$cc-c11.o
  try $cc-cxx ok $cc -x c++ -std=c++11 $W -I. -c $src/impl.c -o $out/$cc-cxx.o
  try $cc-cxx17 ok $cc -x c++ -std=c++17 $W -I. -c $src/impl.c -o $out/$cc-cxx17.o
  try $cc-decl ok $cc -std=c99 $W -I. -c $src/decl.c -o $out/$cc-decl.o
  try $cc-static ok $cc -std=c99 $W -I. $src/static.c -o $out/$cc-static
  try $cc-alloc ok $cc -std=c99 $W -I. -c $src/alloc.c -o $out/$cc-alloc.o
  try $cc-partial-alloc fail $cc -std=c99 $W -I. -c $src/partial_alloc.c -o $out/$cc-pa.o
  says $cc-partial-alloc "define all of IKP_MALLOC"
  try $cc-version-mismatch fail $cc -std=c99 $W -I. -c $src/version_mismatch.c -o $out/$cc-vm.o
  says $cc-version-mismatch "different IKP versions"
done
# a plain decoder: gcc, clang and g++, no CUDA flags, libc only
if has decode; then
try decode-gcc ok gcc -std=c99 $W -I. $src/decode.c -o $out/decode-gcc
try decode-gcc-run ok $out/decode-gcc
try decode-clang ok clang -std=c99 $W -I. $src/decode.c -o $out/decode-clang
try decode-clang-run ok $out/decode-clang
try decode-gxx ok g++ -x c++ -std=c++11 $W -I. $src/decode.c -o $out/decode-gxx
try decode-gxx-run ok $out/decode-gxx
fi
if ! has cuda; then
  :
elif [ -n "$CUDA_INC" ]; then
  # the CUDA headers on the include path (as on a machine where they are on
  # the default one): still no CUDA library needed
  try decode-cuda-path ok env CPATH="$CUDA/include" gcc -std=c99 $W -I. $src/decode.c -o $out/decode-cuda-path
  try decode-cuda-path-run ok $out/decode-cuda-path
  try decode-cuda-path-cxx ok env CPATH="$CUDA/include" g++ -x c++ $W -I. $src/decode.c -o $out/decode-cuda-path-cxx
  # asked for with IKP_CUDA: compiled, and links against the runtime
  for cc in gcc clang; do
    try $cc-cuda-helpers ok $cc -std=c99 $W $CUDA_INC -I. $src/cuda_helpers.c -o $out/$cc-cuda-helpers $CUDA_LIB -lcudart
    try $cc-cuda-helpers-cxx ok $cc -x c++ -std=c++11 $W $CUDA_INC -I. -c $src/cuda_helpers.c -o $out/$cc-cuda-helpers-cxx.o
  done
  # nvcc: both headers together, the version check, the architectures
  try nvcc-both ok $NVCC -std=c++17 -I. -gencode=arch=compute_90,code=sm_90 $src/both_headers.cu -o $out/both
  try nvcc-version-mismatch fail $NVCC -I. -c $src/version_mismatch.cu -o $out/vm.o
  says nvcc-version-mismatch "different IKP versions"
  G=""
  for a in 75 80 86 89 90 100 120; do G="$G -gencode=arch=compute_$a,code=sm_$a"; done
  try nvcc-arch-default ok $NVCC -I. $G -c $src/arch.cu -o $out/arch-default.o
  try nvcc-arch-staged ok $NVCC -I. -DIKP_STAGED=1 -gencode=arch=compute_90,code=sm_90 \
      -gencode=arch=compute_100,code=sm_100 -gencode=arch=compute_120,code=sm_120 -c $src/arch.cu -o $out/arch-staged.o
  try nvcc-arch-staged-sm80 fail $NVCC -I. -DIKP_STAGED=1 -gencode=arch=compute_80,code=sm_80 -c $src/arch.cu -o $out/arch-s80.o
  says nvcc-arch-staged-sm80 "IKP_STAGED=1 needs sm_90 or newer"
  # every recording build the docs name, compiled as make device compiles
  # (warnings are errors), two at a time
  jobs=0; builds=""
  for t in CYCLES GLOBAL; do for r in 0 1; do for s in 0 1; do for d in 1 0; do
    ticks="x"; [ $t = CYCLES ] && [ $r = 0 ] && [ $d = 1 ] && ticks="1 0"
    anchors="x"; [ $t = CYCLES ] && anchors="0 65536"
    for k in $ticks; do for a in $anchors; do
      f="-DIKP_TIMER=IKP_TIMER_$t -DIKP_RING=$r -DIKP_STAGED=$s -DIKP_DEFER_BEGIN=$d"
      [ $k = x ] || f="$f -DIKP_TICKS=$k"
      [ $a = x ] || f="$f -DIKP_ANCHOR_EVERY=$a"
      n=nvcc-build-$(echo "$f" | sed 's/-DIKP_//g; s/IKP_TIMER_//; s/ /,/g' | tr 'A-Z' 'a-z')
      builds="$builds $n"
      ( $NVCC -std=c++17 -O3 -Xcompiler -Wall,-Wextra -Werror all-warnings -I. $f \
          -gencode=arch=compute_90,code=sm_90 -c $src/arch.cu -o $out/$n.o > $out/$n.log 2>&1; echo $? > $out/$n.rc ) &
      jobs=$((jobs+1)); [ $((jobs % 2)) = 0 ] && wait
    done; done
  done; done; done; done
  wait
  nb=0
  for n in $builds; do
    nb=$((nb+1))
    if [ "$(cat $out/$n.rc)" = 0 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL compile: $n"; head -20 $out/$n.log; fi
  done
  # the switches above are those ikp_cuda.cuh's CONFIGURATION names
  named=$(awk '/CONFIGURATION \(define/,/^   MACROS/' ikp_cuda.cuh | grep -o '^       IKP_[A-Z_]*' | tr -d ' ' | tr '\n' ' ')
  if [ "$named" = "IKP_ENABLE IKP_TIMER IKP_RING IKP_STAGED IKP_DEFER_BEGIN IKP_TICKS IKP_ANCHOR_EVERY " ]; then pass=$((pass+1));
  else fail=$((fail+1)); echo "FAIL: ikp_cuda.cuh's CONFIGURATION names '$named': build every new switch here"; fi
  if [ $nb = 28 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $nb recording builds, not the 28 the docs name"; fi
  try nvcc-ticks-ring fail $NVCC -I. -DIKP_RING=1 -DIKP_TICKS=1 -gencode=arch=compute_90,code=sm_90 -c $src/arch.cu -o $out/tr.o
  says nvcc-ticks-ring "IKP_TICKS=1 needs the cycle timer"
  # the staging macros check their arguments in every build
  try nvcc-arch-disabled ok $NVCC -I. -DIKP_ENABLE=0 -gencode=arch=compute_90,code=sm_90 -c $src/arch.cu -o $out/arch-off.o
  for b in "" "-DIKP_STAGED=1" "-DIKP_ENABLE=0"; do
    n=nvcc-stage-unknown$(echo "$b" | tr -d ' =' | tr 'A-Z' 'a-z')
    try $n fail $NVCC -I. $b -gencode=arch=compute_90,code=sm_90 -c $src/stage_unknown.cu -o $out/$n.o
    says $n "no_such_array"
  done
else
  fail=$((fail+1)); echo "FAIL: nvcc not found: the CUDA checks cannot run"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
