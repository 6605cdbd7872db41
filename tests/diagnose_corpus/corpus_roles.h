// The corpus programs' side of the roles contract (README.md): a program records
// the pids and tids that play a part in its case, then publishes them as one JSON
// object {"name": id, ...} in $HB_CORPUS_ROLES (or $HB_CORPUS_ROLES.<part> when
// several processes each publish their own), written to a temporary file and
// renamed so that the driver never reads half a file. Publish just before the
// wait the case is about: the driver gives the case a moment to settle after
// every role it expects is there.
#ifndef HB_CORPUS_ROLES_H
#define HB_CORPUS_ROLES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HB_ROLES_MAX 32

struct hb_role {
  char name[64];
  long id;
};

static struct hb_role hb_roles[HB_ROLES_MAX];
static int hb_roles_count;

static inline long hb_gettid(void) { return (long)syscall(SYS_gettid); }

// Records one role; a role named again takes the new id.
static inline void hb_role(const char* name, long id) {
  for (int i = 0; i < hb_roles_count; ++i) {
    if (strcmp(hb_roles[i].name, name) == 0) {
      hb_roles[i].id = id;
      return;
    }
  }
  if (hb_roles_count == HB_ROLES_MAX) return;
  snprintf(hb_roles[hb_roles_count].name, sizeof hb_roles[hb_roles_count].name, "%s", name);
  hb_roles[hb_roles_count].id = id;
  ++hb_roles_count;
}

// Writes the roles recorded so far; part is NULL for the file itself, else a
// suffix (e.g. "a" or "rank1") for one process's share.
static inline void hb_roles_publish(const char* part) {
  const char* base = getenv("HB_CORPUS_ROLES");
  if (!base || !*base) return;
  char path[4096], tmp[4200];
  if (part)
    snprintf(path, sizeof path, "%s.%s", base, part);
  else
    snprintf(path, sizeof path, "%s", base);
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  FILE* f = fopen(tmp, "w");
  if (!f) return;
  fputc('{', f);
  for (int i = 0; i < hb_roles_count; ++i) fprintf(f, "%s\"%s\": %ld", i ? ", " : "", hb_roles[i].name, hb_roles[i].id);
  fputs("}\n", f);
  fclose(f);
  rename(tmp, path);
}

// Waits (up to 10 s) until thread TID of this process sleeps in a futex call whose word
// lies outside [SKIP, SKIP + SKIP_LEN) (a barrier the threads just left): a case that
// publishes its roles only then is diagnosed in its wait, not on its way there, however
// loaded the machine. /proc/self/task/TID/syscall reads "NR ARG1 ...".
static inline void hb_wait_in_futex_outside(long tid, const void* skip, unsigned long skip_len) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", tid);
  for (int i = 0; i < 1000; ++i) {
    FILE* f = fopen(path, "r");
    int waits = 0;
    if (f) {
      if (fgets(line, sizeof line, f)) {
        char* rest = NULL;
        if (strtol(line, &rest, 10) == SYS_futex) {
          const unsigned long word = strtoul(rest, NULL, 16), lo = (unsigned long)skip;
          waits = word < lo || word >= lo + skip_len;
        }
      }
      fclose(f);
    }
    if (waits) return;
    usleep(10000);
  }
}

#endif
