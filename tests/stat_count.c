/* LD_PRELOAD shim for tests: counts the calls of the stat family a process
   makes and writes the count to the file $IKP_STAT_COUNT at exit. (A count
   of calls, not a time: test_export.py checks that a directory export
   stats each input a bounded number of times, however many there are.) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static unsigned long calls;

static void save(void) __attribute__((destructor));
static void save(void)
{
    const char *p = getenv("IKP_STAT_COUNT");
    FILE *f = p ? fopen(p, "w") : NULL;
    if (f) {
        fprintf(f, "%lu\n", calls);
        fclose(f);
    }
}

#define FORWARD(name, params, args)                                  \
    int name params                                                  \
    {                                                                \
        static int(*real) params;                                    \
        if (!real) *(void **)&real = dlsym(RTLD_NEXT, #name);         \
        calls++;                                                     \
        return real ? real args : -1;                                \
    }
FORWARD(stat, (const char *p, struct stat *s), (p, s))
FORWARD(lstat, (const char *p, struct stat *s), (p, s))
FORWARD(fstatat, (int d, const char *p, struct stat *s, int f), (d, p, s, f))
FORWARD(stat64, (const char *p, struct stat64 *s), (p, s))
FORWARD(lstat64, (const char *p, struct stat64 *s), (p, s))
