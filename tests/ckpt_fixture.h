/*
 * ckpt_fixture.h - the loopback hub's checkpoints (tests/fixtures/hub) staged as a real
 * checkout: every file of repos/<repo> copied into a directory, each header-only
 * safetensors file extended (sparse, no disk used) to the full size manifest.tsv gives, so
 * its data_offsets lie inside the file as in the release.  Include after <cmocka.h>.
 */
#ifndef FG_TEST_CKPT_FIXTURE_H
#define FG_TEST_CKPT_FIXTURE_H

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HUB_FIXTURES "tests/fixtures/hub"

/* The full size manifest.tsv gives repo/file, or 0 when it lists none. */
static inline long long hub_full_size(const char *repo, const char *file)
{
    char want[512], line[1024];
    long long size = 0;
    FILE *f = fopen(HUB_FIXTURES "/manifest.tsv", "r");
    assert_non_null(f);
    snprintf(want, sizeof want, "%s/%s\t", repo, file);
    while (!size && fgets(line, sizeof line, f))
        if (!strncmp(line, want, strlen(want)))
            size = atoll(line + strlen(want));
    fclose(f);
    return size;
}

/* Copy repos/<repo>'s files into dir (made when absent), safetensors extended. */
static inline void stage_repo(const char *repo, const char *dir)
{
    char src[512], from[1024], to[1024], buf[65536];
    snprintf(src, sizeof src, HUB_FIXTURES "/repos/%s", repo);
    mkdir(dir, 0700);
    DIR *d = opendir(src);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(from, sizeof from, "%s/%s", src, e->d_name);
        snprintf(to, sizeof to, "%s/%s", dir, e->d_name);
        FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
        assert_non_null(in);
        assert_non_null(out);
        for (size_t n; (n = fread(buf, 1, sizeof buf, in)) > 0;)
            assert_int_equal(fwrite(buf, 1, n, out), n);
        fclose(in);
        assert_int_equal(fclose(out), 0);
        long long full = hub_full_size(repo, e->d_name);
        if (full)
            assert_int_equal(truncate(to, (off_t)full), 0);
    }
    closedir(d);
}

/* A fresh temporary directory under /tmp, in buf. */
static inline char *stage_tmpdir(char *buf, size_t cap)
{
    snprintf(buf, cap, "/tmp/fg-ckpt-XXXXXX");
    assert_non_null(mkdtemp(buf));
    return buf;
}

static inline int stage_rm_one(const char *p, const struct stat *st, int flag,
                               struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

/* Remove a staged directory and everything under it. */
static inline void stage_remove(const char *dir)
{
    nftw(dir, stage_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
