# IKP - intra-kernel profiler. Plain make; see README.md.
#   make            build/ikp (the command-line tool)
#   make run        decode the bundled capture (or, with a GPU, profile an example)
#   make test       every test that runs without a GPU
#   make bench      host decoder benchmark
CC      ?= cc
PYTHON  ?= python3
CFLAGS  ?= -O2
WARN     = -std=c99 -Wall -Wextra -pedantic -Werror
SAN      = -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
B        = build

.PHONY: all run test bench clean sample check-tools
all: $(B)/ikp

$(B):
	@mkdir -p $(B)/test-out

$(B)/ikp: tools/ikp.c ikp.h | $(B)
	$(CC) $(WARN) $(CFLAGS) -o $@ tools/ikp.c

$(B)/ikp-asan: tools/ikp.c ikp.h | $(B)
	$(CC) $(WARN) $(SAN) -o $@ tools/ikp.c

$(B)/test_host: tests/test_host.c tests/encoder.h tests/check.h ikp.h | $(B)
	$(CC) $(WARN) $(CFLAGS) -g -o $@ tests/test_host.c

$(B)/test_host_asan: tests/test_host.c tests/encoder.h tests/check.h ikp.h | $(B)
	$(CC) $(WARN) $(SAN) -o $@ tests/test_host.c

$(B)/gen_sample: tests/gen_sample.c tests/encoder.h ikp.h | $(B)
	$(CC) $(WARN) $(CFLAGS) -o $@ tests/gen_sample.c

$(B)/bench_host: bench/bench_host.c tests/encoder.h ikp.h | $(B)
	$(CC) $(WARN) -O2 -g -o $@ bench/bench_host.c

# The bundled capture: made by the test encoder (see README).
sample: $(B)/gen_sample
	$(B)/gen_sample examples/data/sample.ikp

check-tools:
	@command -v $(CC) >/dev/null || { echo "make: C compiler '$(CC)' not found"; exit 1; }
	@command -v $(PYTHON) >/dev/null || { echo "make: $(PYTHON) not found (needed to validate JSON in the tests)"; exit 1; }

run: $(B)/ikp
	$(B)/ikp trace examples/data/sample.ikp -o trace.json
	$(B)/ikp summary examples/data/sample.ikp

HOST_TESTS = "sh tests/compile_checks.sh" \
             "$(B)/test_host" \
             "$(B)/test_host_asan" \
             "$(PYTHON) tests/test_tool.py" \
             "IKP_TOOL=$(B)/ikp-asan $(PYTHON) tests/test_tool.py"

test: check-tools $(B)/ikp $(B)/ikp-asan $(B)/test_host $(B)/test_host_asan
	@sh tests/run_all.sh $(HOST_TESTS)

bench: $(B)/bench_host
	$(B)/bench_host

clean:
	rm -rf $(B) trace.json
