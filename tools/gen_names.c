/*
 * gen_names.c - build-time generator of the framework names the option
 * table's help text quotes.
 *
 *   gen_names > build/gen/framework_names.h
 *
 * engine/job/jobopts.def is a header of data read by the thin SPANK plugin too,
 * which links no engine code, so the --ft-framework help it shows under
 * `sbatch --help` must be a string known at compile time.  This tool reads
 * engine/stack/framework.c's table (compiled into it: the one list of rows) and
 * writes that string, FG_FRAMEWORK_CHOICES ("hf|lit-gpt|...|sglang"), so a
 * framework row is added in framework.c alone.  It compiles framework.c
 * itself (not build/engine/framework.o), as the objects that include
 * jobopts.def wait for its output.  Exit 0, or 1 with a message on stderr.
 */
#include <stdio.h>

#include "stack/framework.h"

int main(void)
{
    char names[1024] = {0};
    fg_framework_names(names, sizeof names);
    if (!names[0] || names[sizeof names - 2]) {
        fprintf(stderr, "gen_names: the framework table is empty or too long\n");
        return 1;
    }
    printf("/* framework_names.h - generated from engine/stack/framework.c's table by\n"
           " * tools/gen_names.c at build time: do not edit. */\n"
           "#ifndef FG_FRAMEWORK_NAMES_H\n#define FG_FRAMEWORK_NAMES_H\n"
           "#define FG_FRAMEWORK_CHOICES \"%s\"\n#endif\n", names);
    return ferror(stdout) ? 1 : 0;
}
