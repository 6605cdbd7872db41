// A producer and a consumer joined by a pipe, in progress: the producer writes a
// record every millisecond, the consumer reads them as they come.
#include "corpus_roles.h"

int main(void) {
  int fds[2];
  if (pipe(fds)) return 1;
  pid_t consumer = fork();
  if (consumer == 0) {
    close(fds[1]);
    char record[16];
    while (read(fds[0], record, sizeof record) > 0) {
    }
    return 0;
  }
  close(fds[0]);
  hb_role("producer", getpid());
  hb_role("producer.main", hb_gettid());
  hb_role("consumer", consumer);
  hb_role("consumer.main", consumer);
  hb_roles_publish(NULL);
  for (;;) {
    (void)!write(fds[1], "record\n", 7);
    usleep(1000);
  }
}
