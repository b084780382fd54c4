/* The host side of a production build: with -DIKP_ENABLE=0 the same host
   code that records in a profiling build builds and runs, and ikp.h's CUDA
   helpers take nothing (no device memory, no stream, no launch), record
   nothing and write no file, saying so on the summary stream. Built by the
   C compiler with IKP_CUDA against the fake CUDA runtime (no GPU). */
#include "fake_cuda.h"
#define IKP_REALTIME_NS() fake_host_ns()
#define IKP_IMPLEMENTATION
#include "../ikp.h"
#include "check.h"
#include <stdlib.h>

#if IKP_ENABLE
#error "build this test with -DIKP_ENABLE=0"
#endif

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "build/test-out";
    char trace[512], capture[512], said[256] = {0};
    ikp_cuda_buffer buf;
    ikp_dump_desc d;
    ikp_error e;
    FILE *summary = tmpfile(), *f;
    uint64_t host[8];
    fake_reset(1);
    snprintf(trace, sizeof trace, "%s/disabled.json", dir);
    snprintf(capture, sizeof capture, "%s/disabled.ikp", dir);
    remove(trace);
    remove(capture);
    /* what a profiling build's host code does, unchanged */
    CHECK_EQ(ikp_cuda_buffer_create(&buf, 264 * 2, 1024, &e), IKP_OK);
    CHECK(buf.device == NULL);          /* the kernel is given NULL: nothing to write into */
    CHECK_EQ(buf.lanes, 264 * 2);
    CHECK_EQ(fake_live_device_bytes(), 0); /* no device memory taken */
    CHECK_EQ(ikp_cuda_buffer_reset(&buf, 0, &e), IKP_OK);
    CHECK_EQ(ikp_cuda_buffer_download(&buf, 0, host, &e), IKP_OK);
    memset(&d, 0, sizeof d);
    d.trace_path = trace;
    d.capture_path = capture;
    d.summary = summary;
    CHECK_EQ(ikp_cuda_dump(&buf, 0, &d, &e), IKP_OK);
    CHECK((f = fopen(trace, "rb")) == NULL); /* no file written */
    if (f) fclose(f);
    CHECK((f = fopen(capture, "rb")) == NULL);
    if (f) fclose(f);
    if (summary) {
        rewind(summary);
        if (!fgets(said, sizeof said, summary)) said[0] = 0;
        fclose(summary);
    }
    CHECK(strstr(said, "IKP_ENABLE=0: nothing was recorded") != NULL);
    ikp_cuda_buffer_destroy(&buf);
    CHECK_EQ(fake_live_device_bytes(), 0);
    CHECK_EQ(fake_launches(""), 0); /* no kernel of the helpers launched */
    /* argument checks stay */
    CHECK_EQ(ikp_cuda_buffer_create(NULL, 1, 1, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_cuda_dump(NULL, 0, &d, &e), IKP_ERR_INVALID_ARGUMENT);
    return check_report();
}
