/*
 * How the clock reads when a thread wakes on a whole second, as slurmctld's background loop
 * wakes from 23.11 (docs/slurm.md, "What the model follows of each release"): the thread
 * waits with pthread_cond_timedwait until the next whole second, then reads time(), which
 * reads the kernel's coarse clock, and spins until time() reads the second it woke for.
 * One line per wake: how far into the second it woke, whether time() still read the second
 * before (LAG), and how far into the second the coarse clock turned.
 *
 *   gcc -O2 -o /tmp/coarse-clock scripts/slurm/coarse-clock.c -lpthread && /tmp/coarse-clock 40
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
  int wakes = argc > 1 ? atoi(argv[1]) : 20, lagged = 0;
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t never = PTHREAD_COND_INITIALIZER;
  pthread_mutex_lock(&mutex);
  time_t second = time(NULL) + 1;
  for (int i = 0; i < wakes; i++, second++) {
    struct timespec until = {second, 0}, woke, turned;
    pthread_cond_timedwait(&never, &mutex, &until);
    time_t read = time(NULL);
    clock_gettime(CLOCK_REALTIME, &woke);
    while (time(NULL) < second)
      ;
    clock_gettime(CLOCK_REALTIME, &turned);
    lagged += read < second;
    printf("%ld woke +%ld us, read %s, clock turned +%ld us\n", (long)second,
           woke.tv_nsec / 1000, read < second ? "the second before (LAG)" : "its own",
           turned.tv_nsec / 1000);
  }
  printf("%d of %d wakes read the second before\n", lagged, wakes);
  return 0;
}
