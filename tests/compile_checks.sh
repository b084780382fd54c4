#!/bin/sh
# Compile-only checks of ikp.h in every configuration: C99 and C++,
# gcc and clang, with and without the CUDA runtime header, IKP_STATIC,
# custom allocator macros. -Wall -Wextra -pedantic -Werror throughout.
cd "$(dirname "$0")/.." || exit 1
out=build/compile-checks
mkdir -p "$out"
pass=0; fail=0
W="-Wall -Wextra -pedantic -Werror"
CUDA_INC=""
if command -v nvcc >/dev/null 2>&1; then
  CUDA_INC="-I$(dirname "$(dirname "$(command -v nvcc)")")/include"
fi
printf '#define IKP_IMPLEMENTATION\n#include "ikp.h"\n#include "ikp.h"\nint main(void){return ikp_result_string(IKP_OK)[0] != 0 ? 0 : 1;}\n' > $out/impl.c
printf '#include "ikp.h"\nint f(void);\nint f(void){return (int)IKP_OK;}\n' > $out/decl.c
printf '#define IKP_STATIC\n#define IKP_IMPLEMENTATION\n#include "ikp.h"\nint main(void){return (int)ikp_buffer_words(1,1) == 17 ? 0 : 1;}\n' > $out/static.c
printf '#include <stdlib.h>\n#define IKP_MALLOC(n) malloc(n)\n#define IKP_REALLOC(p,n) realloc(p,n)\n#define IKP_FREE(p) free(p)\n#define IKP_IMPLEMENTATION\n#include "ikp.h"\nint main(void){return 0;}\n' > $out/alloc.c
printf '#define IKP_MALLOC(n) 0\n#define IKP_IMPLEMENTATION\n#include "ikp.h"\nint main(void){return 0;}\n' > $out/partial_alloc.c
try() { # name, expect (ok|fail), command...
  name=$1; expect=$2; shift 2
  if "$@" > $out/$name.log 2>&1; then got=ok; else got=fail; fi
  if [ "$got" = "$expect" ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL compile: $name (expected $expect)"; cat $out/$name.log | head -20; fi
}
for cc in gcc clang; do
  command -v $cc >/dev/null 2>&1 || { fail=$((fail+1)); echo "FAIL: $cc not found"; continue; }
  try $cc-c99 ok $cc -std=c99 $W -DIKP_NO_CUDA -I. $out/impl.c -o $out/$cc-c99
  try $cc-c99-run ok $out/$cc-c99
  try $cc-c11 ok $cc -std=c11 $W -Wundef -Wshadow -Wconversion -Wno-sign-conversion -DIKP_NO_CUDA -I. -c $out/impl.c -o $out/$cc-c11.o
  try $cc-cxx ok $cc -x c++ -std=c++11 $W -DIKP_NO_CUDA -I. -c $out/impl.c -o $out/$cc-cxx.o
  try $cc-cxx17 ok $cc -x c++ -std=c++17 $W -DIKP_NO_CUDA -I. -c $out/impl.c -o $out/$cc-cxx17.o
  try $cc-decl ok $cc -std=c99 $W -I. -c $out/decl.c -o $out/$cc-decl.o
  try $cc-static ok $cc -std=c99 $W -DIKP_NO_CUDA -I. $out/static.c -o $out/$cc-static
  try $cc-alloc ok $cc -std=c99 $W -DIKP_NO_CUDA -I. -c $out/alloc.c -o $out/$cc-alloc.o
  try $cc-partial-alloc fail $cc -std=c99 $W -DIKP_NO_CUDA -I. -c $out/partial_alloc.c -o $out/$cc-pa.o
  if [ -n "$CUDA_INC" ]; then
    try $cc-c99-cuda ok $cc -std=c99 $W $CUDA_INC -I. -c $out/impl.c -o $out/$cc-c99-cuda.o
    try $cc-cxx-cuda ok $cc -x c++ -std=c++11 $W $CUDA_INC -I. -c $out/impl.c -o $out/$cc-cxx-cuda.o
  fi
done
if [ -n "$CUDA_INC" ]; then
  # the CUDA helpers link against the runtime
  try link-cudart ok gcc -std=c99 $W $CUDA_INC -I. $out/impl.c -o $out/impl-cuda -L$(dirname "$(dirname "$(command -v nvcc)")")/lib64 -lcudart
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
