#!/usr/bin/env python3
"""Instruments CUTLASS's sm90 ping-pong GEMM kernel with IKP, as a user would.

    python3 examples/cutlass_patch.py IN.hpp OUT.hpp

IN is CUTLASS's include/cutlass/gemm/kernel/sm90_gemm_tma_warpspecialized_pingpong.hpp;
OUT is its copy with IKP's macros inserted, written into a folder that comes
first among -I (build/cutlass-ikp/cutlass/gemm/kernel/), so that CUTLASS's
own #include "cutlass/gemm/kernel/..." finds it. Each insertion sits at a
statement of the kernel (an anchor), matched as a whole line; an anchor not
found, or found a different number of times than below, stops the patch
with the line it looked for: a CUTLASS whose kernel changed is said, never
half patched.

A lane per warp group and CTA: the producer (group 0: its mainloop warp,
which issues the TMA loads) and the two consumers (groups 1 and 2), each
opened by IKP_INIT inside its role's branch after the register change
(setmaxnreg). The buffer is the program's __constant__ cutlass_ikp_buffer,
set before the launch (NULL: nothing recorded). Events, each tile's
payload its (M, N) tile index as M << 16 | N:
  0 load      producer: collective_mainloop.load() of a tile (its TMA issue,
              and its waits for free stages)
  1 wait      consumer: math_wg_order_barrier.wait(), for the MMA turn and
              for the epilogue turn
  2 mma       consumer: collective_mainloop.mma() of a tile, from the order
              barrier's wait to its arrive
  3 tail      consumer: mma_tail(), the last wgmmas done, stages released
  4 epilogue  consumer: the epilogue's store of the tile, up to the arrive
"""
import sys

TILE = "work_tile_info.M_idx << 16 | work_tile_info.N_idx"

# (anchor line, times it occurs, which occurrence (1-based), where, lines)
EDITS = [
    ('#include "cutlass/arch/grid_dependency_control.h"', 1, 1, "after",
     ['#include "ikp_cuda.cuh" // IKP: events 0 load, 1 wait, 2 mma, 3 tail, 4 epilogue (examples/cutlass_patch.py)']),
    # producer: the mainloop warp's lane
    ("if (producer_warp_role == ProducerWarpRole::Mainloop) {", 1, 1, "after",
     ["IKP_LANE(ikp);",
      "IKP_INIT(ikp, cutlass_ikp_buffer, 0, 3, warp_group_thread_idx == 0);"]),
    ("collective_mainloop.load(", 1, 1, "before", ["IKP_BEGIN(ikp, 0); IKP_DATA(ikp, 0, %s);" % TILE]),
    ("mainloop_pipe_producer_state.advance(k_tile_count);", 2, 1, "before", ["IKP_END(ikp, 0);"]),
    ("collective_mainloop.load_tail(mainloop_pipeline, mainloop_pipe_producer_state);", 2, 1, "after",
     ["IKP_FINALIZE(ikp);"]),
    # consumers: a lane each
    ("cutlass::arch::warpgroup_reg_alloc<MmaRegisterRequirement>();", 1, 1, "after",
     ["IKP_LANE(ikp);",
      "IKP_INIT(ikp, cutlass_ikp_buffer, static_cast<int>(warp_group_role), 3, warp_group_thread_idx == 0);"]),
    ("cutlass::arch::launch_dependent_grids();", 2, 1, "after", ["IKP_FINALIZE(ikp);"]),  # early return
    ("math_wg_order_barrier.wait();", 2, 1, "before", ["IKP_BEGIN(ikp, 1);"]),
    ("math_wg_order_barrier.wait();", 2, 1, "after",
     ["IKP_END(ikp, 1); IKP_BEGIN(ikp, 2); IKP_DATA(ikp, 2, %s);" % TILE]),
    ("math_wg_order_barrier.arrive();", 2, 1, "before", ["IKP_END(ikp, 2);"]),
    ("math_wg_order_barrier.arrive();", 2, 1, "after", ["IKP_BEGIN(ikp, 3);"]),
    ("mainloop_pipe_consumer_state.advance(k_tile_count * NumMmaWarpGroups);", 1, 1, "before", ["IKP_END(ikp, 3);"]),
    ("math_wg_order_barrier.wait();", 2, 2, "before", ["IKP_BEGIN(ikp, 1);"]),
    ("math_wg_order_barrier.wait();", 2, 2, "after", ["IKP_END(ikp, 1); IKP_BEGIN(ikp, 4);"]),
    ("math_wg_order_barrier.arrive();", 2, 2, "before", ["IKP_END(ikp, 4);"]),
    ("} // Consumer Warp Groups End", 1, 1, "before", ["IKP_FINALIZE(ikp);"]),
]


def patch(text):
    lines = text.split("\n")
    before, after = {}, {}
    for anchor, count, which, where, new in EDITS:
        at = [i for i, l in enumerate(lines) if l.strip() == anchor]
        if len(at) != count:
            raise SystemExit("cutlass_patch.py: expected %d line(s) '%s' in the kernel, found %d: "
                             "not the CUTLASS version this patch was made for (4.2)" % (count, anchor, len(at)))
        i = at[which - 1]
        indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
        if (where == "after" and anchor.endswith("{")) or (where == "before" and anchor.startswith("}")):
            indent += "  "  # inside the block the anchor opens or closes
        (before if where == "before" else after).setdefault(i, []).extend(indent + n for n in new)
    out = []
    for i, l in enumerate(lines):
        out += before.get(i, []) + [l] + after.get(i, [])
    return "\n".join(out)


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.split("\n\n")[1])
    with open(sys.argv[1]) as f:
        text = f.read()
    out = patch(text)
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(out)
    import os
    os.replace(sys.argv[2] + ".tmp", sys.argv[2])
    print("%s: %d lines inserted" % (sys.argv[2], out.count("\n") - text.count("\n")))


if __name__ == "__main__":
    main()
