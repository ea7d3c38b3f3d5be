/*
 * bench_dlopen.c - what loading a shared object costs a fresh process: dlopen(PATH,
 * RTLD_NOW | RTLD_LOCAL) as the SPANK plugin loads fitgate_engine.so for a tagged job,
 * then exit.  Timed from outside by bench_exec (tools/bench.sh):
 *     bench_exec none=build/bench/bench_dlopen engine=build/bench/bench_dlopen build/fitgate_engine.so
 * -g LIB loads LIB first with RTLD_GLOBAL: the engine part expects the spank_* symbols
 * that sbatch provides through libslurmfull.
 * Exit 0 when every PATH loaded, 1 otherwise (dlerror on stderr).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        int global = !strcmp(argv[i], "-g") && i + 1 < argc;
        if (global)
            i++;
        if (!dlopen(argv[i], RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL))) {
            fprintf(stderr, "bench_dlopen: %s\n", dlerror());
            rc = 1;
        }
    }
    return rc;
}
