#!/bin/sh
# embed_text.sh SYMBOL FILE - write to stdout a C file that defines
#   const char SYMBOL[]
# holding FILE's text, so a conf file can be compiled in (the GPU table:
# conf/gpus.conf -> build/gen/gpus_conf.c) and read by the same parser as a
# site file.  '\' and '"' are escaped; '?' too, because -std=c11 turns
# "??=" style trigraphs into other characters.
set -eu
sym=$1
file=$2
printf '/* Generated from %s by tools/embed_text.sh; do not edit. */\n' "$file"
printf 'extern const char %s[];\n' "$sym"
printf 'const char %s[] =\n' "$sym"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/\r$//' -e 's/^/    "/' -e 's/$/\\n"/' "$file"
printf '    "";\n'
