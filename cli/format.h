/* format.h - numbers as the CLI and the HTML report print them. */
#ifndef FG_CLI_FORMAT_H
#define FG_CLI_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* Decimal gigabytes, 3 significant digits ("178 GB", "16.4 GB", "1.30 GB"); returns buf. */
const char *fg_cli_gb(uint64_t bytes, char *buf, size_t cap);

/* Thousands separated by commas ("8,888,227,328"); returns buf. */
const char *fg_cli_count(uint64_t v, char *buf, size_t cap);

#endif
