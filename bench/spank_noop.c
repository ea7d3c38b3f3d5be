/*
 * spank_noop.c - a control for tools/bench_slurm.sh: a SPANK plugin that does nothing, so
 * that the cost of having any plugin in plugstack.conf (Slurm loading and calling it) can be
 * told apart from what spank_fitgate.so itself adds to an untagged job.
 */
#include <slurm/spank.h>

SPANK_PLUGIN(noop, 1);

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    (void)sp;
    (void)ac;
    (void)av;
    return 0;
}
