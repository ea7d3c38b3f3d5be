/*
 * plugin_abi.c - what a built spank_fitgate.so tells Slurm's loader, for
 * tests/integration/slurm.sh; compiled against the headers of the release under test.
 *
 *   plugin_abi PLUGIN.so [LIBSLURMFULL.so]
 *
 * prints one line:
 *   plugin_version=26.05 headers=26.05 failure_mode=J job_failure=J node_failure=N
 * plugin_version is the major.minor the loader compares (SchedMD/slurm src/common/plugin.c,
 * plugin_load_from_file); failure_mode is slurm_spank_init_failure_mode's value, or "none"
 * when the plugin does not export it; job_failure / node_failure are ESPANK_JOB_FAILURE /
 * ESPANK_NODE_FAILURE of these headers ("none" before 25.05, which has neither).
 * The plugin's slurm_* / spank_* functions come from the process that loads it (sbatch,
 * slurmstepd: libslurmfull); a plugin linked with -z now (Debian's hardening) needs them at
 * dlopen, so LIBSLURMFULL.so, when given, is loaded first (RTLD_GLOBAL), as in Slurm.
 * Exit 0, or 1 when a library cannot be opened.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <slurm/spank.h>

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: plugin_abi PLUGIN.so [LIBSLURMFULL.so]\n");
        return 2;
    }
    if (argc == 3 && !dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "plugin_abi: %s\n", dlerror());
        return 1;
    }
    void *h = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "plugin_abi: %s\n", dlerror());
        return 1;
    }
    const uint32_t *version = dlsym(h, "plugin_version");
    const int *mode = dlsym(h, "slurm_spank_init_failure_mode");
    uint32_t v = version ? *version : 0;
    printf("plugin_version=%d.%02d headers=%d.%02d", (int)SLURM_VERSION_MAJOR(v),
           (int)SLURM_VERSION_MINOR(v), (int)SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
           (int)SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER));
    if (mode)
        printf(" failure_mode=%d", *mode);
    else
        printf(" failure_mode=none");
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
    printf(" job_failure=%d node_failure=%d\n", (int)ESPANK_JOB_FAILURE,
           (int)ESPANK_NODE_FAILURE);
#else
    printf(" job_failure=none node_failure=none\n");
#endif
    dlclose(h);
    return 0;
}
