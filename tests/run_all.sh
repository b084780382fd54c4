#!/bin/sh
# Runs every test runner given as arguments (each prints "N passed, N failed"
# as its last line), then prints the totals as the final line.
# Progress: each runner's number among them before it starts, and the
# seconds it took after its output.
tp=0; tf=0; status=0; i=0; n=$#
for t in "$@"; do
  i=$((i+1))
  echo "== [$i/$n] $t"
  log=$(mktemp)
  t0=$(date +%s)
  sh -c "$t" > "$log" 2>&1; rc=$?
  cat "$log"
  echo "-- [$i/$n] $(( $(date +%s) - t0 )) s"
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  if [ -z "$line" ]; then echo "runner printed no result line: $t"; tf=$((tf+1)); status=1
  else
    p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/'); f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
    tp=$((tp+p)); tf=$((tf+f))
    if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then echo "runner exited $rc: $t"; tf=$((tf+1)); fi
  fi
  [ $rc -ne 0 ] && status=1
  rm -f "$log"
done
echo "$tp passed, $tf failed"
[ $status -eq 0 ] && [ $tf -eq 0 ]
