/**
 * A pid no process has now, for tests of leftovers "of a dead process" (temp folders, moved-aside
 * snapshots, leases): the sweeps take a pid that does not answer signal 0 as gone.
 */
let found: number | undefined;

export function deadPid(): number {
  if (found !== undefined) return found;
  for (let pid = 4_000_000; pid > 1000; pid -= 7919) {
    try {
      process.kill(pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') return (found = pid);
    }
  }
  throw new Error('no free pid found');
}
