# IKP - intra-kernel profiler. Plain make; see README.md.
#   make            build/ikp (the command-line tool)
#   make run        decode the bundled capture (or, with a GPU, profile an example)
#   make test       every test that runs without a GPU
#   make check      its quick part (host runners, tool tests, compile checks): gcc, clang, python3
#   make bench      host decoder benchmark
#   make fuzz       each libFuzzer harness for FUZZ_SECONDS (default 60)
#   make gpu-test   device tests and examples on a machine with a GPU
#   make cutlass    example 6 (CUTLASS's ping-pong GEMM) alone; make check-cutlass
#                   its SASS against CUTLASS's own (also part of make test)
#   make gpu-test-multi  the two-GPU checks (skipped, and said, with one GPU)
#   make bench-gpu  per-event cost of IKP's public macros (this version and the
#                   previous release) beside Triton's Proton, one table; then the
#                   internal-path and GEMM benchmarks as extra rows
CC      ?= cc
NVCC    ?= nvcc
CUDA    ?= $(patsubst %/bin/nvcc,%,$(shell command -v $(NVCC)))
PYTHON  ?= python3
CFLAGS  ?= -O2
WARN     = -std=c99 -Wall -Wextra -pedantic -Werror
SAN      = -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
B        = build

.PHONY: all run test test-build check deps bench clean sample check-tools gpu-test gpu-test-multi gpu-accuracy bench-gpu device fuzz fuzz-seeds cutlass check-cutlass
all: $(B)/ikp

$(B):
	@mkdir -p $(B)/test-out

# -lstdc++: check-sass demangles kernel names with libstdc++'s __cxa_demangle
$(B)/ikp: tools/ikp.c tools/into.c tools/into.h tools/sass.c tools/sass.h ikp.h | $(B)
	$(CC) $(WARN) $(CFLAGS) -o $@ tools/ikp.c tools/into.c tools/sass.c -lstdc++

$(B)/ikp-asan: tools/ikp.c tools/into.c tools/into.h tools/sass.c tools/sass.h ikp.h | $(B)
	$(CC) $(WARN) $(SAN) -o $@ tools/ikp.c tools/into.c tools/sass.c -lstdc++

# The host test runners (test_host, test_fit, test_peers, test_analysis, test_merge),
# plain and under ASan+UBSan.
TEST_DEPS = tests/encoder.h tests/check.h tests/helpers.h ikp.h
$(B)/test_%: tests/test_%.c $(TEST_DEPS) | $(B)
	$(CC) $(WARN) $(CFLAGS) -g -o $@ $<

$(B)/test_%_asan: tests/test_%.c $(TEST_DEPS) | $(B)
	$(CC) $(WARN) $(SAN) -o $@ $<

# The core alone (-DIKP_NO_REPORT: diff and report left out), by its own runner
$(B)/test_host_core: tests/test_host.c $(TEST_DEPS) | $(B)
	$(CC) $(WARN) $(CFLAGS) -DIKP_NO_REPORT -o $@ tests/test_host.c

$(B)/test_threads: tests/test_threads.c tests/encoder.h tests/check.h ikp.h | $(B)
	$(CLANG) -std=c99 -Wall -Wextra -pedantic -Werror -g -O1 -fsanitize=thread -o $@ tests/test_threads.c -lpthread

# ikp.h's CUDA helpers against a fake CUDA runtime (tests/fake_cuda.c): no
# GPU needed. Built by nvcc, whose host code is linked with -cudart none to
# the fake (which plays the helpers' kernels), plain and under ASan+UBSan;
# and by the C compiler with IKP_CUDA (helpers without kernels).
CUDA_TEST_DEPS = tests/test_cuda.c tests/fake_cuda.c tests/fake_cuda.h tests/check.h tests/encoder.h ikp.h
NVHOST = -std=c++17 -Xcompiler -Wall,-Wextra -Werror all-warnings $(SM90) -cudart none
NVSAN  = -Xcompiler -g,-O1,-fsanitize=address,-fsanitize=undefined,-fno-sanitize-recover=all,-fno-omit-frame-pointer
$(B)/test_cuda: $(CUDA_TEST_DEPS) | $(B)
	$(CC) $(WARN) -g -O1 -I$(CUDA)/include -c -o $(B)/fake_cuda.o tests/fake_cuda.c
	$(NVCC) $(NVHOST) -g -O1 -x cu -c -o $(B)/test_cuda.o tests/test_cuda.c
	$(NVCC) -cudart none -o $@ $(B)/test_cuda.o $(B)/fake_cuda.o -lpthread

$(B)/test_cuda_asan: $(CUDA_TEST_DEPS) | $(B)
	$(CC) $(WARN) $(SAN) -I$(CUDA)/include -c -o $(B)/fake_cuda_asan.o tests/fake_cuda.c
	$(NVCC) $(NVHOST) $(NVSAN) -x cu -c -o $(B)/test_cuda_asan.o tests/test_cuda.c
	$(NVCC) -cudart none -Xcompiler -fsanitize=address,-fsanitize=undefined -o $@ $(B)/test_cuda_asan.o $(B)/fake_cuda_asan.o -lpthread

$(B)/test_cuda_cc: $(CUDA_TEST_DEPS) | $(B)
	$(CC) $(WARN) $(SAN) -DIKP_CUDA -I$(CUDA)/include -o $@ tests/test_cuda.c tests/fake_cuda.c -lpthread

# The host side of a production build (-DIKP_ENABLE=0), against the fake
$(B)/test_disabled: tests/test_disabled.c tests/fake_cuda.c tests/fake_cuda.h tests/check.h ikp.h | $(B)
	$(CC) $(WARN) $(SAN) -DIKP_CUDA -DIKP_ENABLE=0 -I$(CUDA)/include -o $@ tests/test_disabled.c tests/fake_cuda.c -lpthread

$(B)/bench_host: bench/bench_host.c tests/encoder.h ikp.h | $(B)
	$(CC) $(WARN) -O2 -g -o $@ bench/bench_host.c

# The bundled capture: example 2 recorded on a GPU (see README).
sample: $(B)/warp_specialized
	$(B)/warp_specialized build/warp_specialized && cp build/warp_specialized.ikp examples/data/sample.ikp

check-tools:
	@command -v $(CC) >/dev/null || { echo "make: C compiler '$(CC)' not found"; exit 1; }
	@command -v localedef >/dev/null && [ -f /usr/share/i18n/locales/de_DE ] || { echo "make: localedef and the locale sources are needed for the decimal-comma test (Debian: apt-get install locales)"; exit 1; }
	@command -v $(PYTHON) >/dev/null || { echo "make: $(PYTHON) not found (needed to validate JSON in the tests)"; exit 1; }
	@command -v $(CLANG) >/dev/null || { echo "make: $(CLANG) not found (needed for the libFuzzer harnesses)"; exit 1; }
	@command -v $(NVCC) >/dev/null || { echo "make: $(NVCC) not found (the CUDA Toolkit is needed to compile the device code)"; exit 1; }
	@command -v c++filt >/dev/null || { echo "make: c++filt not found (binutils; test_check_sass.py compares check-sass's kernel names with it)"; exit 1; }

CLANG       ?= clang
FUZZ_SAN     = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_NAMES   = ikp tirx flashinfer capture names e2e apinames tritondist nuggets nuggetscompact
FUZZ_BINS    = $(addprefix $(B)/fuzz_,$(FUZZ_NAMES))
FUZZ_SECONDS ?= 60
# one binary for every target (its name picks the target: fuzz/fuzz.c), and
# a hard link a target
$(B)/fuzz: fuzz/fuzz.c ikp.h | $(B)
	$(CLANG) $(FUZZ_SAN) -o $@ fuzz/fuzz.c
$(FUZZ_BINS): $(B)/fuzz
	ln -f $(B)/fuzz $@

# Long fuzzing; new inputs go to build/fuzz-work, crashes to build/fuzz-crash.
# A crash becomes a regression test by copying it into fuzz/corpus/<target>/.
fuzz: $(FUZZ_BINS)
	@mkdir -p build/fuzz-crash
	@for t in $(FUZZ_NAMES); do mkdir -p build/fuzz-work/$$t; echo "== fuzz_$$t ($(FUZZ_SECONDS) s)"; \
	  if $(B)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -max_len=70000 \
	    -artifact_prefix=build/fuzz-crash/$$t- build/fuzz-work/$$t fuzz/corpus/$$t > build/fuzz-work/$$t.log 2>&1; \
	  then tail -1 build/fuzz-work/$$t.log; else tail -30 build/fuzz-work/$$t.log; exit 1; fi; done

# Regenerate the seed corpora (committed) from the test encoder.
fuzz-seeds: | $(B)
	$(CC) $(WARN) -O1 -o $(B)/gen_seeds fuzz/gen_seeds.c && $(B)/gen_seeds

$(B)/test_nvrtc: tests/test_nvrtc.c tests/check.h ikp_cuda.cuh | $(B)
	$(CC) -std=c99 -Wall -Wextra -Werror -I$(CUDA)/include -o $@ tests/test_nvrtc.c -L$(CUDA)/lib64 -lnvrtc -Wl,-rpath,$(CUDA)/lib64

# nvdisasm and cuobjdump: the toolkit's, else pinned wheels from PyPI
$(B)/tools/nvdisasm:
	sh tests/get_sass_tools.sh $(B)/tools
$(B)/tools/cuobjdump: $(B)/tools/nvdisasm
	sh tests/get_sass_tools.sh $(B)/tools

# CUTLASS's C++ headers (examples/cutlass_gemm.cu): the nvidia-cutlass wheel
# from PyPI, pinned, unpacked into build/cutlass (nothing of CUTLASS is kept
# in the repository)
$(B)/cutlass/.stamp: tests/get_cutlass.sh
	sh tests/get_cutlass.sh $(B)/cutlass

# Examples, GPU tests and GPU benchmarks: compiling them needs nvcc, no GPU.
# Warning-free (-Werror all-warnings, host -Wall -Wextra); sm_90, and sm_90a
# for the GEMM (wgmma, setmaxnreg).
NVFLAGS   = -O3 -std=c++17 -Xcompiler -Wall,-Wextra -Werror all-warnings
# The examples, proton_twin and the torch extension (ikp.h's implementation
# in their own file, as in a user's program) compile their host code at
# -O1: nvcc's -O is the host code's level alone (their device code is the
# same SASS at -O1 and -O3), their host side only downloads and decodes,
# and $(IMPL) compiles the implementation as C++ at -O3 with the same
# warnings. One builds in 11 s, not 21.
NVEXFLAGS = $(subst -O3,-O1,$(NVFLAGS))
SM90      = -gencode=arch=compute_90,code=sm_90
SM90A     = -gencode=arch=compute_90a,code=sm_90a
DEV_HDRS  = ikp.h ikp_cuda.cuh
EX_HDRS   = $(DEV_HDRS) examples/common.h
GEMM_HDRS = $(EX_HDRS) examples/gemm_kernel.cuh examples/gemm_common.h
ACC_SRCS  = tests/gpu/test_accuracy.cu tests/gpu/accuracy_gt.cu tests/gpu/accuracy_staged.cu \
            tests/gpu/accuracy_now.cu tests/gpu/accuracy_auto.cu tests/gpu/accuracy_noticks.cu
WAIT_SRCS = tests/gpu/test_waits.cu tests/gpu/waits_default.cu tests/gpu/waits_staged.cu tests/gpu/waits_ring.cu \
            tests/gpu/waits_staged_ring.cu tests/gpu/waits_gt.cu
DEV_TESTS = test_device test_accuracy test_trap test_multi test_waits test_graphs proton_twin
EXAMPLES  = minimal warp_specialized persistent peer_ring gemm harness
GEMM_VARIANTS = $(foreach v,0 1 2 3 4 5 6 7,$(B)/gemm_v$(v).o)
# make bench-gpu's events programs: bench/events.cu built four ways, against the
# current headers and against the previous release's (PREV_COMMIT below)
EVENTS_BUILDS = default ring staged staged_ring
EVENTS_DEFS_default =
EVENTS_DEFS_ring = -DIKP_RING=1
EVENTS_DEFS_staged = -DIKP_STAGED=1
EVENTS_DEFS_staged_ring = -DIKP_STAGED=1 -DIKP_RING=1
# more builds against the current headers, for the rows beside the table: two
# old shapes of the kernel, and four floors (a clock read and a store an event,
# no recorder: bench/events.cu says what they are)
EVENTS_EXTRA = default_unpinned staged_flush_each floor_proton floor_pairs floor_checked floor_global
EVENTS_DEFS_default_unpinned = -DEVENTS_UNPINNED=1
EVENTS_DEFS_staged_flush_each = -DIKP_STAGED=1 -DEVENTS_FLUSH_EACH=1
EVENTS_DEFS_floor_proton = -DEVENTS_FLOOR=1
EVENTS_DEFS_floor_pairs = -DEVENTS_FLOOR=2
EVENTS_DEFS_floor_checked = -DEVENTS_FLOOR=4
EVENTS_DEFS_floor_global = -DEVENTS_FLOOR=3
EVENTS_CUR  = $(addprefix $(B)/events_,$(EVENTS_BUILDS) $(EVENTS_EXTRA))
EVENTS_PREV = $(addprefix $(B)/events_prev_,$(EVENTS_BUILDS))
# The previous release's headers come from git history: its tag, v0.10.0 (a
# clone without tags: the commit the tag names). In a tree without that
# history the prev programs only say they were skipped, and make bench-gpu
# says so.
PREV_RELEASE = 0.10.0
PREV_COMMIT  := $(shell git rev-parse -q --verify v$(PREV_RELEASE)^{commit} 2>/dev/null || \
                 echo 155aa9caef6851a6792fb2d665112f14448561bd)
PREV_HDRS    = $(B)/prev/ikp.h $(B)/prev/ikp_cuda.cuh
# example 6 (CUTLASS's ping-pong GEMM): recording, -DIKP_ENABLE=0, and CUTLASS's
# own kernel (device code only) for tests/check_cutlass_sass.py
CUTLASS_BINS = $(B)/cutlass_gemm $(B)/cutlass_gemm_off $(B)/cutlass_gemm_orig.cubin
# what make test needs of them: the -DIKP_ENABLE=0 build's device code only
# (its host side is test_disabled's; the program is make device's)
CUTLASS_TEST_BINS = $(B)/cutlass_gemm $(B)/cutlass_gemm_off.cubin $(B)/cutlass_gemm_orig.cubin
DEVICE_BINS = $(addprefix $(B)/,$(EXAMPLES) $(DEV_TESTS) overhead gemm_bench libikp_torch_example.so) $(EVENTS_CUR) $(EVENTS_PREV) \
              $(CUTLASS_BINS)
# what make test compiles of them (every program but the previous release's
# and the -DIKP_ENABLE=0 GEMM's host side)
TEST_DEVICE_BINS = $(addprefix $(B)/,$(EXAMPLES) $(DEV_TESTS) overhead gemm_bench libikp_torch_example.so) $(EVENTS_CUR) \
                   $(CUTLASS_TEST_BINS)

# ikp.h's implementation, compiled once for the GPU tests and benchmarks
# (their host code then compiles in a second, not ten)
IMPL = $(B)/ikp_impl.o
$(IMPL): tests/gpu/ikp_impl.cu $(DEV_HDRS) | $(B)
	$(NVCC) $(NVFLAGS) $(SM90) -c -o $@ $<
$(B)/minimal: examples/minimal.cu $(DEV_HDRS) | $(B)
	$(NVCC) $(NVEXFLAGS) $(SM90) -o $@ $<
$(B)/warp_specialized $(B)/persistent $(B)/harness: $(B)/%: examples/%.cu $(EX_HDRS) | $(B)
	$(NVCC) $(NVEXFLAGS) $(SM90) -o $@ $<
$(B)/peer_ring: examples/peer_ring.cu examples/peer_ring.cuh $(EX_HDRS) | $(B)
	$(NVCC) $(NVEXFLAGS) $(SM90) -o $@ $<
$(B)/gemm: examples/gemm.cu $(GEMM_HDRS) | $(B)
	$(NVCC) $(NVEXFLAGS) $(SM90A) -o $@ $<
$(B)/test_device: tests/gpu/test_device.cu tests/gpu/ring.cu tests/gpu/ring_staged.cu tests/gpu/ring_kernel.cuh tests/gpu/staged.cu tests/check.h $(DEV_HDRS) $(IMPL) | $(B)
	$(NVCC) $(NVFLAGS) $(SM90) -o $@ $(filter %.cu,$^) $(IMPL)
$(B)/test_accuracy: $(ACC_SRCS) tests/gpu/accuracy_kernels.cuh tests/gpu/lane_events.h tests/check.h $(DEV_HDRS) $(IMPL) | $(B)
	$(NVCC) $(NVFLAGS) $(SM90) -o $@ $(ACC_SRCS) $(IMPL)
$(B)/test_waits: $(WAIT_SRCS) tests/gpu/waits_wgmma.cu tests/gpu/waits_kernels.cuh tests/gpu/lane_events.h tests/check.h $(DEV_HDRS) $(IMPL) | $(B)
	$(NVCC) $(NVFLAGS) $(SM90A) -c -o $(B)/waits_wgmma.o tests/gpu/waits_wgmma.cu
	$(NVCC) $(NVFLAGS) $(SM90) -o $@ $(WAIT_SRCS) $(B)/waits_wgmma.o $(IMPL)
$(B)/test_trap: tests/gpu/test_trap.cu tests/check.h $(DEV_HDRS) $(IMPL) | $(B)
	$(NVCC) $(NVFLAGS) $(SM90) -o $@ $< $(IMPL)
$(B)/test_graphs: tests/gpu/test_graphs.cu tests/check.h $(DEV_HDRS) $(IMPL) | $(B)
	$(NVCC) $(NVFLAGS) $(SM90) -o $@ $< $(IMPL)
$(B)/proton_twin: tests/gpu/proton_twin.cu $(DEV_HDRS) | $(B)
	$(NVCC) $(NVEXFLAGS) $(SM90) -o $@ $<
$(B)/test_multi: tests/gpu/test_multi.cu examples/peer_ring.cuh tests/check.h $(EX_HDRS) $(IMPL) | $(B)
	$(NVCC) $(NVFLAGS) $(SM90) -o $@ $< $(IMPL)
$(B)/overhead: bench/overhead.cu $(DEV_HDRS) $(IMPL) | $(B)
	$(NVCC) $(NVFLAGS) $(SM90) -o $@ $< $(IMPL)
$(EVENTS_CUR): $(B)/events_%: bench/events.cu $(DEV_HDRS) $(IMPL) | $(B)
	$(NVCC) $(NVFLAGS) $(SM90) -I. $(EVENTS_DEFS_$*) -o $@ $< $(IMPL)
$(B)/prev/ikp.h $(B)/prev/ikp_cuda.cuh: | $(B)
	@mkdir -p $(B)/prev && rm -f $@ && \
	  { git cat-file -e $(PREV_COMMIT) 2>/dev/null && git show $(PREV_COMMIT):$(notdir $@) > $@.tmp && mv $@.tmp $@ || \
	    { rm -f $@.tmp; : > $@; echo "make: $(PREV_RELEASE)'s $(notdir $@) not found (git history, commit $(PREV_COMMIT)): the prev rows of make bench-gpu will be skipped"; }; }
# the previous release's implementation, for its events programs
$(B)/prev/ikp_impl.o: $(PREV_HDRS)
	@if [ -s $(B)/prev/ikp.h ]; then printf '#define IKP_IMPLEMENTATION\n#include "ikp.h"\n' > $(B)/prev/ikp_impl.cu && \
	  echo "$(NVCC) $(NVFLAGS) $(SM90) -I$(B)/prev -c -o $@ $(B)/prev/ikp_impl.cu" && \
	  $(NVCC) $(NVFLAGS) $(SM90) -I$(B)/prev -c -o $@ $(B)/prev/ikp_impl.cu; else : > $@; fi
$(EVENTS_PREV): $(B)/events_prev_%: bench/events.cu $(PREV_HDRS) $(B)/prev/ikp_impl.o | $(B)
	@if [ -s $(B)/prev/ikp.h ] && [ -s $(B)/prev/ikp_cuda.cuh ]; then \
	  echo "$(NVCC) $(NVFLAGS) $(SM90) -I$(B)/prev $(EVENTS_DEFS_$*) -o $@ $< $(B)/prev/ikp_impl.o"; \
	  $(NVCC) $(NVFLAGS) $(SM90) -I$(B)/prev $(EVENTS_DEFS_$*) -o $@ $< $(B)/prev/ikp_impl.o; \
	else printf '#!/bin/sh\necho "skipped: prev $* ($(PREV_RELEASE)'"'"'s headers need the git history, commit $(PREV_COMMIT))"\n' > $@ && chmod +x $@; fi
$(B)/libikp_torch_example.so: tests/gpu/torch_example.cu $(DEV_HDRS) | $(B)
	$(NVCC) $(NVEXFLAGS) $(SM90) -shared -Xcompiler -fPIC -o $@ $<
$(B)/gemm_v%.o: bench/gemm_variant.cu $(GEMM_HDRS) | $(B)
	$(NVCC) $(NVFLAGS) $(SM90A) -DGV=$* -c -o $@ $<
$(B)/gemm_bench: bench/gemm_bench.cu $(GEMM_VARIANTS) $(GEMM_HDRS) $(IMPL) | $(B)
	$(NVCC) $(NVFLAGS) $(SM90A) -o $@ $< $(GEMM_VARIANTS) $(IMPL) -lcublas

device: $(DEVICE_BINS)

# Example 6: CUTLASS's own sm90 ping-pong GEMM, its kernel header copied with
# IKP's macros inserted (examples/cutlass_patch.py) into build/cutlass-ikp,
# which comes first among the includes, ahead of CUTLASS's own. CUTLASS's
# flags; its headers as system headers (their own warnings are CUTLASS's).
# One translation unit a build, 3.3 GB of memory and 1-2 minutes of a core
# each: they run one at a time (flock; CUTLASS_LOCK= lets them overlap).
# tests/check_cutlass_sass.py compares the -DIKP_ENABLE=0 build's kernel
# with CUTLASS's own (the device code alone, its header unpatched).
CUTLASS_KERNEL = cutlass/gemm/kernel/sm90_gemm_tma_warpspecialized_pingpong.hpp
CUTLASS_IKP    = $(B)/cutlass-ikp/$(CUTLASS_KERNEL)
CUTLASS_FLAGS  = -std=c++17 -O3 -DNDEBUG --expt-relaxed-constexpr $(SM90A) -Xcompiler -Wall,-Wextra -Werror all-warnings
CUTLASS_INC    = -isystem $(B)/cutlass/include -isystem $(B)/cutlass/tools/util/include
CUTLASS_SRC    = examples/cutlass_gemm.cu $(EX_HDRS) $(B)/cutlass/.stamp
CUTLASS_LOCK  ?= $(shell command -v flock >/dev/null 2>&1 && echo flock $(B)/.cutlass-lock)
$(CUTLASS_IKP): examples/cutlass_patch.py $(B)/cutlass/.stamp
	@mkdir -p $(dir $@)
	$(PYTHON) examples/cutlass_patch.py $(B)/cutlass/include/$(CUTLASS_KERNEL) $@
$(B)/cutlass_gemm: $(CUTLASS_SRC) $(CUTLASS_IKP) | $(B)
	$(CUTLASS_LOCK) $(NVCC) $(CUTLASS_FLAGS) -I. -I$(B)/cutlass-ikp $(CUTLASS_INC) -o $@ $<
$(B)/cutlass_gemm_off: $(CUTLASS_SRC) $(CUTLASS_IKP) | $(B)
	$(CUTLASS_LOCK) $(NVCC) $(CUTLASS_FLAGS) -DIKP_ENABLE=0 -I. -I$(B)/cutlass-ikp $(CUTLASS_INC) -o $@ $<
$(B)/cutlass_gemm_off.cubin: $(CUTLASS_SRC) $(CUTLASS_IKP) | $(B)
	$(CUTLASS_LOCK) $(NVCC) $(CUTLASS_FLAGS) -DIKP_ENABLE=0 -I. -I$(B)/cutlass-ikp $(CUTLASS_INC) -cubin -o $@ $<
$(B)/cutlass_gemm_orig.cubin: $(CUTLASS_SRC) | $(B)
	$(CUTLASS_LOCK) $(NVCC) $(CUTLASS_FLAGS) -DIKP_ENABLE=0 -I. $(CUTLASS_INC) -cubin -o $@ $<
cutlass: $(CUTLASS_BINS)
check-cutlass: $(CUTLASS_TEST_BINS) $(B)/ikp $(B)/tools/cuobjdump
	@SASS_TOOLS=$(B)/tools $(PYTHON) tests/check_cutlass_sass.py

# With a GPU: profile example 2 (warp-specialized) into trace.json.
# Without: decode the bundled capture.
run: | $(B)
	@if nvidia-smi -L >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory $(B)/warp_specialized && $(B)/warp_specialized build/warp_specialized && \
	  cp build/warp_specialized.json trace.json && echo "trace.json: warp-specialized example on this GPU"; \
	else \
	  $(MAKE) -s --no-print-directory $(B)/ikp && \
	  $(B)/ikp trace examples/data/sample.ikp -o trace.json && $(B)/ikp summary examples/data/sample.ikp && \
	  echo "trace.json: the bundled capture examples/data/sample.ikp (no GPU here: nvidia-smi -L lists none)"; \
	fi

# Test-only Python packages, pinned, installed into build/pydeps (nothing
# system-wide). Without network access to PyPI: pip install the same
# versions from a wheel directory (PIP_FIND_LINKS=DIR PIP_NO_INDEX=1).
NUMPY_VERSION = 2.4.6
PERFETTO_VERSION = 0.59.1
PROTOBUF_VERSION = 7.36.2
PYARROW_VERSION = 26.0.1
DUCKDB_VERSION = 2.0.1
PYDEPS = $(B)/pydeps
PYDEPS_STAMP = $(PYDEPS)/.numpy-$(NUMPY_VERSION)-perfetto-$(PERFETTO_VERSION)-protobuf-$(PROTOBUF_VERSION)-pyarrow-$(PYARROW_VERSION)-duckdb-$(DUCKDB_VERSION)
$(PYDEPS_STAMP): | $(B)
	@$(PYTHON) -m pip install --quiet --disable-pip-version-check --target $(PYDEPS) numpy==$(NUMPY_VERSION) \
	  perfetto==$(PERFETTO_VERSION) protobuf==$(PROTOBUF_VERSION) pyarrow==$(PYARROW_VERSION) duckdb==$(DUCKDB_VERSION) \
	  || { echo "make: cannot install numpy==$(NUMPY_VERSION), perfetto==$(PERFETTO_VERSION), protobuf==$(PROTOBUF_VERSION), pyarrow==$(PYARROW_VERSION) and duckdb==$(DUCKDB_VERSION) from PyPI into $(PYDEPS) (needed to test .npy input, to parse Perfetto traces with Perfetto's schema and to read the Parquet export with two engines; see the Makefile for installing them offline)"; exit 1; }
	@touch $@

# rsvg-convert renders the report's SVG picture to PNG in the tests
# (tests/test_report_tool.py). Debian 12's librsvg2-bin, pinned, installed
# with apt-get when missing and run as root; otherwise install it yourself
# (any librsvg 2.5x renders these pictures the same).
RSVG_VERSION = 2.54.7+dfsg-1~deb12u1
$(B)/.rsvg-convert: | $(B)
	@command -v rsvg-convert >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "make: installing librsvg2-bin=$(RSVG_VERSION) (rsvg-convert, to render the report's picture in the tests)"; \
	    (apt-get install -y -qq --no-install-recommends librsvg2-bin=$(RSVG_VERSION) >/dev/null 2>&1 || \
	     { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq --no-install-recommends librsvg2-bin=$(RSVG_VERSION) >/dev/null 2>&1; }) || \
	    { echo "make: apt-get could not install librsvg2-bin=$(RSVG_VERSION): install rsvg-convert (Debian/Ubuntu: librsvg2-bin) and run make test again"; exit 1; }; \
	  else echo "make: rsvg-convert not found (needed to render the report's picture in the tests): install librsvg2-bin (Debian/Ubuntu) or librsvg2-tools (Fedora)"; exit 1; fi; }
	@touch $@

# A decimal-comma locale for the locale test, made here (no system change).
$(B)/locale/de_DE.UTF-8: | $(B)
	@mkdir -p $(B)/locale && localedef -i de_DE -f UTF-8 $@ 2>/dev/null || [ -d $@ ]

# Each runner as GROUP|COMMAND: the runners of one group run one after
# another (they share files), a group named after '<' waits for those
# groups (it reads what they wrote); tests/run_all.py runs a runner a core.
# runners at once (default: one more than the cores: some runners wait on
# timeouts and child processes, and a core idles while they do)
TEST_JOBS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 1 )))
# the host runners that make check runs too
QUICK_TESTS = "compile|sh tests/compile_checks.sh gcc decode" \
              "host|LOCPATH=$(B)/locale IKP_SAVE_CAPTURES=$(B)/test-out/captures $(B)/test_host" \
              "host|LOCPATH=$(B)/locale $(B)/test_host_core" \
              "fit|$(B)/test_fit" \
              "peers|IKP_SAVE_CAPTURES=$(B)/test-out/captures $(B)/test_peers" \
              "analysis|IKP_ANALYSIS_OUT=$(B)/test-out/analysis $(B)/test_analysis" \
              "merge|$(B)/test_merge" \
              "proton|$(PYTHON) tests/test_proton_tool.py" \
              "iket|$(PYTHON) tests/test_iket_tool.py" \
              "names|$(PYTHON) tests/test_names_apart.py"
HOST_TESTS = $(QUICK_TESTS) \
             "proton|ASAN_OPTIONS=detect_leaks=1 IKP_TOOL=$(B)/ikp-asan $(PYTHON) tests/test_proton_tool.py" \
             "iket|ASAN_OPTIONS=detect_leaks=1 IKP_TOOL=$(B)/ikp-asan $(PYTHON) tests/test_iket_tool.py" \
             "compile2|sh tests/compile_checks.sh clang cuda" \
             "fuzz1|sh tests/fuzz_check.sh ikp tirx flashinfer capture names" \
             "fuzz2|sh tests/fuzz_check.sh e2e apinames tritondist nuggets nuggetscompact" \
             "sass|NVCC=$(NVCC) NVDISASM=$(B)/tools/nvdisasm $(PYTHON) tests/sass/check_sass.py" \
             "checksass|NVCC=$(NVCC) SASS_TOOLS=$(B)/tools $(PYTHON) tests/test_check_sass.py" \
             "checksass|NVCC=$(NVCC) SASS_TOOLS=$(B)/tools IKP_TOOL=$(B)/ikp-asan $(PYTHON) tests/test_check_sass.py" \
             "snippets|$(PYTHON) tests/test_snippets.py" \
             "host|LOCPATH=$(B)/locale ASAN_OPTIONS=detect_leaks=1 $(B)/test_host_asan" \
             "fit|ASAN_OPTIONS=detect_leaks=1 $(B)/test_fit_asan" \
             "peers|ASAN_OPTIONS=detect_leaks=1 $(B)/test_peers_asan" \
             "tool|PYTHONPATH=$(PYDEPS) $(PYTHON) tests/test_tool.py" \
             "toolasan|PYTHONPATH=$(PYDEPS) ASAN_OPTIONS=detect_leaks=1 IKP_TOOL=$(B)/ikp-asan $(PYTHON) tests/test_tool.py" \
             "peerstool|PYTHONPATH=$(PYDEPS) $(PYTHON) tests/test_peers_tool.py" \
             "peerstool|PYTHONPATH=$(PYDEPS) ASAN_OPTIONS=detect_leaks=1 IKP_TOOL=$(B)/ikp-asan $(PYTHON) tests/test_peers_tool.py" \
             "bounds|$(PYTHON) tests/test_bounds.py" \
             "makepeers|$(B)/make_peers --check examples/data/peers" \
             "analysis|ASAN_OPTIONS=detect_leaks=1 $(B)/test_analysis_asan" \
             "report<analysis|$(PYTHON) tests/test_report_tool.py" \
             "report<analysis|ASAN_OPTIONS=detect_leaks=1 IKP_TOOL=$(B)/ikp-asan $(PYTHON) tests/test_report_tool.py" \
             "cuda|$(B)/test_cuda $(B)/test-out" \
             "cuda|ASAN_OPTIONS=detect_leaks=1 $(B)/test_cuda_asan $(B)/test-out" \
             "cuda|ASAN_OPTIONS=detect_leaks=1 $(B)/test_cuda_cc $(B)/test-out" \
             "cuda|ASAN_OPTIONS=detect_leaks=1 $(B)/test_disabled $(B)/test-out" \
             "merge|ASAN_OPTIONS=detect_leaks=1 $(B)/test_merge_asan" \
             "perfetto<host,peers,analysis,cuda,merge|PYTHONPATH=$(PYDEPS) $(PYTHON) tests/test_perfetto.py" \
             "perfettoasan<host,peers,analysis,cuda,merge|PYTHONPATH=$(PYDEPS) ASAN_OPTIONS=detect_leaks=1 IKP_TOOL=$(B)/ikp-asan $(PYTHON) tests/test_perfetto.py" \
             "export<host,peers,analysis,cuda,merge|PYTHONPATH=$(PYDEPS) $(PYTHON) tests/test_export.py" \
             "export<host,peers,analysis,cuda,merge|PYTHONPATH=$(PYDEPS) ASAN_OPTIONS=detect_leaks=1 IKP_TOOL=$(B)/ikp-asan $(PYTHON) tests/test_export.py" \
             "threads|$(B)/test_threads" \
             "nvrtc|$(B)/test_nvrtc" \
             "cutlass|SASS_TOOLS=$(B)/tools $(PYTHON) tests/check_cutlass_sass.py"

$(B)/make_peers: examples/data/peers/make_peers.c tests/encoder.h | $(B)
	$(CC) $(CFLAGS) -O2 -o $@ $<

# What the tests need beyond the compilers, pinned, fetched once (make test
# runs it first; nothing is installed by the tests themselves): numpy,
# perfetto and protobuf into build/pydeps; nvdisasm and cuobjdump wheels into
# build/tools when the toolkit lacks them; CUTLASS's headers (the
# nvidia-cutlass wheel) into build/cutlass; rsvg-convert (Debian's
# librsvg2-bin, with apt-get when run as root); a decimal-comma locale under
# build/locale.
deps: check-tools $(PYDEPS_STAMP) $(B)/.rsvg-convert $(B)/locale/de_DE.UTF-8 $(B)/tools/nvdisasm $(B)/tools/cuobjdump $(B)/cutlass/.stamp

# the build, then the runners; the build says its progress (tests/build_step.sh)
test: deps
	@rm -f $(B)/.build-steps && n=$$($(MAKE) -n --no-print-directory test-build 2>/dev/null | grep -c -- ' -o '; true) && \
	  $(MAKE) --no-print-directory test-build SHELL=$(CURDIR)/tests/build_step.sh IKP_BUILD_STEPS=$$n
	@rm -rf $(B)/test-out/captures && mkdir -p $(B)/test-out/captures $(B)/test-out/analysis && $(PYTHON) tests/run_all.py -j $(TEST_JOBS) $(HOST_TESTS)

test-build: deps $(B)/make_peers $(B)/ikp $(B)/ikp-asan $(B)/test_host $(B)/test_host_asan $(B)/test_host_core $(B)/test_fit $(B)/test_fit_asan $(B)/test_peers $(B)/test_peers_asan $(B)/test_nvrtc $(B)/tools/nvdisasm $(B)/tools/cuobjdump $(FUZZ_BINS) $(B)/test_threads \
      $(B)/test_analysis $(B)/test_analysis_asan $(B)/test_merge $(B)/test_merge_asan \
      $(B)/test_cuda $(B)/test_cuda_asan $(B)/test_cuda_cc $(B)/test_disabled $(PYDEPS_STAMP) $(B)/locale/de_DE.UTF-8 $(B)/.rsvg-convert \
      $(TEST_DEVICE_BINS)

GPU_TESTS = "$(B)/test_device" \
            "$(B)/test_accuracy" \
            "$(B)/test_waits" \
            "$(B)/test_trap" \
            "mkdir -p $(B)/gpu-out && $(B)/test_graphs $(B)/gpu-out" \
            "sh tests/gpu/run_examples.sh" \
            "mkdir -p $(B)/gpu-out && $(B)/cutlass_gemm $(B)/gpu-out/cutlass_gemm" \
            "mkdir -p $(B)/gpu-out && $(B)/cutlass_gemm_off $(B)/gpu-out/cutlass_gemm_off" \
            "$(PYTHON) tests/gpu/torch_merge.py" \
            "$(PYTHON) tests/gpu/test_proton.py $(B)"

# The quick loop while editing: the host runners, the tool's tests and the
# compile checks, with gcc, clang and python3 alone (no make deps, no CUDA
# Toolkit needed; the checks that need numpy, nvcc or rsvg-convert are
# make test's). What make test adds: the ASan builds, the fuzzers, the SASS,
# CUDA, Perfetto-schema and Parquet checks, the snippets and the report's
# picture.
CHECK_TESTS = $(QUICK_TESTS) "compile2|sh tests/compile_checks.sh clang" \
              "tool|IKP_QUICK=1 $(PYTHON) tests/test_tool.py" \
              "bounds|$(PYTHON) tests/test_bounds.py"

check: $(B)/ikp $(B)/test_host $(B)/test_host_core $(B)/test_fit $(B)/test_peers $(B)/test_analysis $(B)/test_merge \
       $(B)/locale/de_DE.UTF-8
	@rm -rf $(B)/test-out/captures && mkdir -p $(B)/test-out/captures $(B)/test-out/analysis && \
	  $(PYTHON) tests/run_all.py -j $(TEST_JOBS) $(CHECK_TESTS)

gpu-test: device $(B)/ikp
	@$(PYTHON) tests/run_all.py -j 1 $(GPU_TESTS)

# The two-GPU checks (GPU-GPU clocks, causality in a merged timeline, the
# two-GPU example); on a machine with one GPU they are skipped and say so.
GPU_MULTI_TESTS = "mkdir -p $(B)/test-out/multi; IKP_MULTI_OUT=$(B)/test-out/multi $(B)/test_multi" \
                  "sh tests/gpu/run_peer_ring.sh"

gpu-test-multi: device $(B)/ikp
	@$(PYTHON) tests/run_all.py -j 1 $(GPU_MULTI_TESTS)

# The timing-accuracy suite alone (also part of gpu-test)
gpu-accuracy: device
	@$(PYTHON) tests/run_all.py -j 1 "$(B)/test_accuracy"

# The table: bench/bench_gpu.py runs the events programs and Proton, twice
# (BENCH_GPU_ARGS=--quick: a short run). Then the extra rows, also when the
# table's run failed (the recipe then fails at the end); without a GPU each
# part says it skipped.
BENCH_GPU_ARGS ?=
bench-gpu: $(EVENTS_CUR) $(EVENTS_PREV) $(B)/overhead $(B)/gemm_bench $(B)/ikp
	@$(PYTHON) bench/bench_gpu.py --bin $(B) $(BENCH_GPU_ARGS); rc=$$?; \
	if nvidia-smi -L >/dev/null 2>&1; then \
	  echo "== extra rows: $(B)/overhead (calls IKP's internal entry points, not the public macros)" && $(B)/overhead && \
	  echo "== extra rows: $(B)/gemm_bench" && $(B)/gemm_bench || rc=1; \
	else echo "skipped: $(B)/overhead and $(B)/gemm_bench (no GPU on this machine)"; fi; \
	if [ $$rc -ne 0 ]; then echo "bench-gpu: failed (the table's FAILED lines, or the extra rows' own error above)"; fi; exit $$rc

# make bench's export rows run the previous release's tool beside this one,
# built from git history (without it those rows are left out, and said so)
TOOL_PREV_RELEASE = 0.13.0
TOOL_PREV_COMMIT  := $(shell git rev-parse -q --verify v$(TOOL_PREV_RELEASE)^{commit} 2>/dev/null || \
                      echo 1ccc69afbf6c3d558068b335c004bdebf88a82d3)
$(B)/prev-tool/ikp: | $(B)
	@mkdir -p $(B)/prev-tool/tools && rm -f $@ && \
	  if git cat-file -e $(TOOL_PREV_COMMIT) 2>/dev/null; then \
	    for f in ikp.h tools/ikp.c tools/sass.c tools/sass.h; do git show $(TOOL_PREV_COMMIT):$$f > $(B)/prev-tool/$$f || exit 1; done && \
	    echo "$(CC) $(CFLAGS) -o $@ ($(TOOL_PREV_RELEASE)'s tool, commit $(TOOL_PREV_COMMIT))" && \
	    $(CC) $(CFLAGS) -o $@ $(B)/prev-tool/tools/ikp.c $(B)/prev-tool/tools/sass.c -lstdc++; \
	  else echo "make: $(TOOL_PREV_RELEASE)'s tool not found (git history, commit $(TOOL_PREV_COMMIT)): make bench leaves its rows out"; fi

bench: $(B)/bench_host $(B)/ikp $(B)/prev-tool/ikp
	$(B)/bench_host $(B)/ikp "" $(B)/prev-tool/ikp

clean:
	rm -rf $(B) trace.json
