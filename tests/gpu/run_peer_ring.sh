#!/bin/sh
# make gpu-test-multi, part 2: the two-GPU example (examples/peer_ring.cu)
# runs, and its two captures merge with the ikp tool, placed over peer
# memory. Skipped, and said, on a machine with fewer than two GPUs.
cd "$(dirname "$0")/../.." || exit 1
out=build/test-out/multi
mkdir -p "$out"
pass=0; fail=0
ok() { if [ "$1" = 0 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $2"; fi; }
build/peer_ring "$out/peer_ring"; rc=$?
if [ $rc -eq 2 ]; then
  echo "skipped: 4 two-GPU checks of examples/peer_ring (it needs two GPUs with peer access)"
  echo "0 passed, 0 failed"; exit 0
fi
ok $rc "build/peer_ring exits 0"
[ -s "$out/peer_ring_gpu0.ikp" ] && [ -s "$out/peer_ring_gpu1.ikp" ] && [ -s "$out/peer_ring.json" ]; ok $? "the example wrote both captures and the merged trace"
build/ikp merge "$out/peer_ring_gpu0.ikp" "$out/peer_ring_gpu1.ikp" -o "$out/peer_ring.pftrace" 2> "$out/merge.log"
rc=$?; cat "$out/merge.log"; ok $rc "ikp merge of the two captures"
build/ikp info "$out/peer_ring_gpu0.ikp" "$out/peer_ring_gpu1.ikp" > "$out/info.log"
rc=$?; tail -n 4 "$out/info.log"
[ $rc -eq 0 ] && grep -q "(peer memory, from GPU 0)" "$out/info.log"; ok $? "ikp info places GPU 1 over peer memory"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
