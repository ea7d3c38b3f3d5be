/*
 * bad_server.c - the servers a hub client must survive, for hub.sh.
 *
 *   bad_server freeport              print a free loopback port and exit
 *   bad_server MODE PORTFILE SECONDS listen on 127.0.0.1:0, write the port to
 *                                    PORTFILE, serve MODE, exit after SECONDS
 * MODE:
 *   silent   accept, read the request, never answer (the deadline case)
 *   trickle  answer headers with Content-Length 1 MB, then 1 byte a second
 *   flood    answer 200 without a length and stream bytes until the client
 *            hangs up (the size-cap case when no Content-Length warns)
 *   garbage  answer with bytes that are not HTTP
 *
 * Plain C so the test needs nothing beyond the compiler the build needs.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* The whole process group goes: no child may outlive the test's kill. */
static void die(int sig)
{
    (void)sig;
    kill(0, SIGKILL);
}

static int listen_any(int *port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 16) ||
        getsockname(s, (struct sockaddr *)&a, &len)) {
        perror("bad_server: listen");
        exit(1);
    }
    *port = ntohs(a.sin_port);
    return s;
}

static void serve(int c, const char *mode)
{
    char buf[4096];
    ssize_t n = read(c, buf, sizeof buf); /* the request; its content does not matter */
    (void)n;
    if (!strcmp(mode, "silent")) {
        for (;;)
            pause();
    } else if (!strcmp(mode, "trickle")) {
        const char *h = "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n{";
        if (write(c, h, strlen(h)) < 0)
            return;
        for (;;) {
            sleep(1);
            if (write(c, " ", 1) < 0)
                return;
        }
    } else if (!strcmp(mode, "flood")) {
        const char *h = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n";
        if (write(c, h, strlen(h)) < 0)
            return;
        memset(buf, ' ', sizeof buf);
        buf[0] = '{';
        while (write(c, buf, sizeof buf) > 0)
            buf[0] = ' ';
    } else if (!strcmp(mode, "garbage")) {
        const char *h = "SSH-2.0-OpenSSH_9.2\r\n\r\nthis is not HTTP\r\n";
        if (write(c, h, strlen(h)) < 0)
            return;
        sleep(1);
    }
}

int main(int argc, char **argv)
{
    int port;
    if (argc == 2 && !strcmp(argv[1], "freeport")) {
        int s = listen_any(&port);
        close(s);
        printf("%d\n", port);
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: bad_server freeport | bad_server MODE PORTFILE SECONDS\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGCHLD, SIG_IGN); /* children reap themselves */
    setpgid(0, 0);
    signal(SIGTERM, die);
    signal(SIGINT, die);
    signal(SIGALRM, die);
    int s = listen_any(&port);
    FILE *f = fopen(argv[2], "w");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    fprintf(f, "%d\n", port);
    fclose(f);
    alarm((unsigned)atoi(argv[3])); /* never outlive the test, even if nobody kills us */
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0)
            continue;
        pid_t p = fork();
        if (p == 0) {
            close(s);
            serve(c, argv[1]);
            _exit(0);
        }
        close(c);
    }
}
