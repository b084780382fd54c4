// GPU tests' helper: one lane's decoded events of one id, in order.
// Include after ikp.h (with IKP_IMPLEMENTATION in the same file).
#ifndef IKP_TESTS_LANE_EVENTS_H
#define IKP_TESTS_LANE_EVENTS_H
#include <cstring>
#include <vector>

static std::vector<ikp_event> events(const ikp_capture *cap, uint32_t lane, uint32_t id)
{
    ikp_lane_events ev;
    memset(&ev, 0, sizeof ev);
    std::vector<ikp_event> out;
    if (ikp_decode_lane(cap, lane, &ev, NULL) == IKP_OK)
        for (size_t k = 0; k < ev.count; k++) if (ev.events[k].id == id) out.push_back(ev.events[k]);
    ikp_lane_events_free(cap, &ev);
    return out;
}

#endif
