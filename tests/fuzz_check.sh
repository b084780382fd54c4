#!/bin/sh
# make test, fuzz part: each libFuzzer harness replays its committed corpus
# (fuzz/corpus/<target>, crash reproducers included), then fuzzes for
# FUZZ_TEST_SECONDS (default 4, at most 20). A crash, a leak, a sanitizer
# report, an input slower than 10 s or over 2 GB of memory fails the run.
# Arguments: the targets (default: all ten).
cd "$(dirname "$0")/.." || exit 1
secs=${FUZZ_TEST_SECONDS:-4}
[ "$secs" -gt 20 ] && secs=20
pass=0; fail=0
targets=${*:-ikp tirx flashinfer capture names e2e apinames tritondist nuggets nuggetscompact}
for t in $targets; do
  bin=build/fuzz_$t
  work=build/fuzz-work/$t
  mkdir -p "$work" build/fuzz-crash
  if [ ! -x "$bin" ]; then echo "FAIL: $bin not built"; fail=$((fail+2)); continue; fi
  if $bin -runs=0 -timeout=10 -rss_limit_mb=2048 fuzz/corpus/$t > build/fuzz-work/$t.replay.log 2>&1; then
    pass=$((pass+1))
  else
    fail=$((fail+1)); echo "FAIL: $t corpus replay"; tail -30 build/fuzz-work/$t.replay.log
  fi
  # apinames: long inputs, for names of 65,000 bytes and more
  len=4096; [ $t = apinames ] && len=70000
  if $bin -max_total_time=$secs -timeout=10 -rss_limit_mb=2048 -max_len=$len -artifact_prefix=build/fuzz-crash/$t- \
       "$work" fuzz/corpus/$t > build/fuzz-work/$t.fuzz.log 2>&1; then
    pass=$((pass+1))
  else
    fail=$((fail+1)); echo "FAIL: $t fuzzing found a problem (reproducer in build/fuzz-crash/)"; tail -30 build/fuzz-work/$t.fuzz.log
  fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
