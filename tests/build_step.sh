#!/bin/sh
# make test's shell for its build (the Makefile's test target): runs each
# recipe line as /bin/sh does; a line that builds a file (it holds " -o ")
# then prints its progress, "-- [build k/N] FILE: S s", N the build's such
# lines as make -n counted them (IKP_BUILD_STEPS).
[ "$1" = "-c" ] && [ $# -eq 2 ] || exec /bin/sh "$@"
case "$2" in
  *" -o "*) ;;
  *) exec /bin/sh -c "$2" ;;
esac
t0=$(date +%s)
/bin/sh -c "$2"; rc=$?
count=${IKP_BUILD_COUNT:-build/.build-steps}
while ! mkdir "$count.lock" 2>/dev/null; do sleep 0.05; done
k=$(( $(cat "$count" 2>/dev/null || echo 0) + 1 ))
echo $k > "$count"
rmdir "$count.lock"
out=$(printf '%s\n' "$2" | sed -n 's/.* -o \([^ ]*\).*/\1/p')
[ $rc -eq 0 ] && echo "-- [build $k/${IKP_BUILD_STEPS:-?}] $out: $(( $(date +%s) - t0 )) s" \
              || echo "-- [build $k/${IKP_BUILD_STEPS:-?}] $out: failed (exit $rc)"
exit $rc
