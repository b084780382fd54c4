"""Peer-format buffers as 64-bit words, written from the formats'
descriptions (not from ikp.h), for the Python tests that need them without
numpy."""

T0 = 1763000000000000000  # a globaltimer reading, ns
EMPTY = 0x7FFFFFFFFFFFFFFF  # triton-dist's empty slot


# Triton-distributed: word 0 = groups << 32 | blocks; word 1 + b = sm << 32 | b;
# record k of lane L at 1 + blocks + L + k * blocks * groups, stamp << 32 | L << 12 | task << 1 | is_start
def triton_dist(nb, ng, lanes, slots, fill=EMPTY, sms=None):
    """lanes: {(block, group): [(is_start, task, t_ns), ...]}"""
    w = [fill] * (1 + nb + nb * ng * slots)
    w[0] = ng << 32 | nb
    for (b, g), recs in lanes.items():
        w[1 + b] = (sms[b] if sms else 0) << 32 | b
        lane = b * ng + g
        for k, (s, task, t) in enumerate(recs):
            w[1 + nb + lane + k * nb * ng] = (t & 0xFFFFFFFF) << 32 | lane << 12 | task << 1 | s
    return w
