/*
 * blackhole.c - helpers for tests/integration/slurm.sh.
 *
 *   blackhole freeport N            print N free loopback TCP ports, one a line
 *   blackhole serve PORTFILE SECS   listen on 127.0.0.1:0, write the port to
 *                                   PORTFILE, accept connections and never answer
 *                                   (a hub that takes the request and hangs);
 *                                   exit after SECS
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int listen_any(int *port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 64) ||
        getsockname(s, (struct sockaddr *)&a, &len)) {
        close(s);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "freeport")) {
        int n = atoi(argv[2]), socks[16], port;
        if (n < 1 || n > 16)
            return 2;
        /* hold them all open so the n ports differ */
        for (int i = 0; i < n; i++) {
            if ((socks[i] = listen_any(&port)) < 0)
                return 1;
            printf("%d\n", port);
        }
        for (int i = 0; i < n; i++)
            close(socks[i]);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "serve")) {
        int port, s = listen_any(&port);
        if (s < 0)
            return 1;
        FILE *f = fopen(argv[2], "w");
        if (!f)
            return 1;
        fprintf(f, "%d\n", port);
        fclose(f);
        signal(SIGPIPE, SIG_IGN);
        alarm((unsigned)atoi(argv[3]));
        int held[1024], n = 0;
        for (;;) {
            int c = accept(s, NULL, NULL);
            if (c >= 0 && n < 1024)
                held[n++] = c; /* read nothing, answer nothing, keep it open */
            else if (c >= 0)
                close(c);
        }
    }
    fprintf(stderr, "usage: blackhole freeport N | blackhole serve PORTFILE SECONDS\n");
    return 2;
}
