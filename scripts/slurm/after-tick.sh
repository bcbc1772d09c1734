# Sourced by the workload scripts (jobs.sh, jobs-many.sh): waits for slurmctld's next decay
# tick, so that a workload starts just after one and no job ends in the same second as a tick
# (the accounting dates ends to the second, and which of the two slurmctld saw first decides
# whether that tick decays the job's last charge: one tick's decay, 6.7 % here). Exits the
# sourcing script with a message if no tick comes within 75 s.
tick_file=/var/spool/slurmctld/priority_last_decay_ran
tick() { stat -c %Y "$tick_file" 2>/dev/null || echo none; }
before=$(tick)
for _ in $(seq 150); do
  [ "$(tick)" != "$before" ] && break
  sleep 0.5
done
if [ "$(tick)" = "$before" ]; then
  echo "$(basename "$0"): slurmctld ran no decay tick in 75 s ($tick_file unchanged)" >&2
  exit 1
fi
