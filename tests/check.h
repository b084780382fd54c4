/* Minimal test harness: CHECK counts, a runner prints "N passed, N failed". */
#ifndef IKP_TEST_CHECK_H
#define IKP_TEST_CHECK_H
#include <stdio.h>
#include <string.h>
static int check_passed, check_failed;
#define CHECK(cond) do { if (cond) check_passed++; else { check_failed++; \
    fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_EQ(a, b) do { long long check_a_ = (long long)(a), check_b_ = (long long)(b); \
    if (check_a_ == check_b_) check_passed++; else { check_failed++; \
    fprintf(stderr, "FAIL %s:%d: %s == %s (%lld vs %lld)\n", __FILE__, __LINE__, #a, #b, check_a_, check_b_); } } while (0)
#define CHECK_NEAR(a, b, tol) do { double check_a_ = (double)(a), check_b_ = (double)(b); \
    if (check_a_ - check_b_ <= (tol) && check_b_ - check_a_ <= (tol)) check_passed++; else { check_failed++; \
    fprintf(stderr, "FAIL %s:%d: %s ~ %s (%.3f vs %.3f, tol %g)\n", __FILE__, __LINE__, #a, #b, check_a_, check_b_, (double)(tol)); } } while (0)
#ifdef IKP_H
/* one lane's figures, by value (ikp_capture_lane fills a struct) */
#if defined(__GNUC__)
__attribute__((unused))
#endif
static ikp_lane_info lane_info(const ikp_capture *cap, uint32_t lane)
{
    ikp_lane_info li;
    memset(&li, 0, sizeof li);
    if (ikp_capture_lane(cap, lane, &li, NULL) != IKP_OK) { check_failed++; fprintf(stderr, "FAIL: ikp_capture_lane(%u)\n", lane); }
    return li;
}
#endif
static int check_report(void)
{
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed != 0;
}
#endif
