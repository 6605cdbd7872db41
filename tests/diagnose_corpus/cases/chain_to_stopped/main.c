// A chain that ends at a stopped process: c reads a pipe that only a would write;
// a is blocked in recv on a TCP connection whose peer b is stopped (SIGSTOP).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "corpus_roles.h"

int main(void) {
  struct sockaddr_in addr = {0};
  socklen_t len = sizeof addr;
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (bind(listener, (struct sockaddr*)&addr, sizeof addr) || listen(listener, 1)) return 1;
  getsockname(listener, (struct sockaddr*)&addr, &len);
  pid_t b = fork();
  if (b == 0) {
    close(listener);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr*)&addr, sizeof addr)) return 1;
    raise(SIGSTOP);
    (void)!send(fd, "x", 1, 0);
    return 0;
  }
  int fd = accept(listener, NULL, NULL);
  close(listener);
  int status;
  waitpid(b, &status, WUNTRACED);  // returns once b has stopped
  int to_c[2];
  if (pipe(to_c)) return 1;
  if (fork() == 0) {
    close(fd);
    close(to_c[1]);
    hb_role("c", getpid());
    hb_role("c.main", hb_gettid());
    hb_roles_publish("c");
    char byte;
    (void)!read(to_c[0], &byte, 1);
    return 0;
  }
  close(to_c[0]);
  hb_role("a", getpid());
  hb_role("a.main", hb_gettid());
  hb_role("b", b);
  hb_role("b.main", b);
  hb_roles_publish("a");
  char byte;
  if (recv(fd, &byte, 1, 0) == 1) (void)!write(to_c[1], &byte, 1);
  return 0;
}
