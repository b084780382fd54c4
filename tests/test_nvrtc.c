/* ikp_cuda.cuh is NVRTC-safe: a kernel using every macro compiles through
   NVRTC (no standard library headers), with profiling on and off. */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n;
    char *s;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    s = (char *)malloc((size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) { fclose(f); free(s); return NULL; }
    s[n] = 0;
    fclose(f);
    return s;
}

static const char *kernel =
    "#include \"ikp_cuda.cuh\"\n"
    "extern \"C\" __global__ void k(float *x, unsigned long long *prof) {\n"
    "  IKP_LANE(lane);\n"
    "  IKP_INIT(lane, prof, threadIdx.x / 32, blockDim.x / 32, threadIdx.x % 32 == 0);\n"
    "  IKP_BEGIN(lane, 1); float v = x[threadIdx.x]; IKP_PIN(v); IKP_END(lane, 1);\n"
    "  { IKP_SCOPE(lane, 2); v = v * 2.f; }\n"
    "  IKP_INSTANT(lane, 3); IKP_DATA(lane, 3, 42);\n"
    "  x[threadIdx.x] = v;\n"
    "  IKP_FINALIZE(lane);\n"
    "}\n";

static void compile(const char *hdr, const char *define, int expect_store)
{
    nvrtcProgram prog;
    const char *headers[1] = {hdr};
    const char *names[1] = {"ikp_cuda.cuh"};
    const char *opts[2] = {"--gpu-architecture=compute_90", define};
    nvrtcResult r;
    size_t n;
    char *ptx;
    CHECK_EQ(nvrtcCreateProgram(&prog, kernel, "k.cu", 1, headers, names), NVRTC_SUCCESS);
    r = nvrtcCompileProgram(prog, 2, opts);
    CHECK_EQ(r, NVRTC_SUCCESS);
    if (r != NVRTC_SUCCESS) {
        char *log;
        nvrtcGetProgramLogSize(prog, &n);
        log = (char *)malloc(n + 1);
        nvrtcGetProgramLog(prog, log);
        fprintf(stderr, "%s\n", log);
        free(log);
    } else {
        nvrtcGetPTXSize(prog, &n);
        ptx = (char *)malloc(n + 1);
        nvrtcGetPTX(prog, ptx);
        /* timer reads and 64-bit stores are there with profiling on, absent with it off */
        CHECK_EQ(strstr(ptx, "%clock64") != NULL, expect_store);
        CHECK_EQ(strstr(ptx, "st.global.u64") != NULL, expect_store);
        free(ptx);
    }
    nvrtcDestroyProgram(&prog);
}

int main(void)
{
    char *hdr = slurp("ikp_cuda.cuh");
    CHECK(hdr != NULL);
    if (hdr) {
        compile(hdr, "-DIKP_ENABLE=1", 1);
        compile(hdr, "-DIKP_ENABLE=0", 0);
        compile(hdr, "-DIKP_RING=1", 1);
        free(hdr);
    }
    return check_report();
}
