/**
 * Which waiting document the in-process runner starts next. Fair between keys first, then between
 * jobs: the tenant (tenant-share.ts) with the fewest documents running, then the one whose last
 * turn is oldest; within it, the job with the fewest running, then the oldest turn (a new job
 * goes first). So one key's thousand documents delay another key's one by at most one document
 * per slot.
 */
export interface FairJob {
  tenant: string;
  /** Documents of the job running now. */
  running: number;
  /** Documents of the job waiting for a slot. */
  waiting: number;
  /** The job's last turn (0: none yet). */
  lastTurn: number;
}

/** The job to take a document from, and its tenant; null when nothing waits. */
export function pickFair<T extends FairJob>(jobs: Iterable<T>, tenantTurns: ReadonlyMap<string, number>): { job: T; tenant: string } | null {
  const tenants = new Map<string, { running: number; lastTurn: number; next: T | null }>();
  for (const j of jobs) {
    let t = tenants.get(j.tenant);
    if (!t) tenants.set(j.tenant, (t = { running: 0, lastTurn: tenantTurns.get(j.tenant) ?? 0, next: null }));
    t.running += j.running;
    if (j.waiting === 0) continue;
    const n = t.next;
    if (!n || j.running < n.running || (j.running === n.running && j.lastTurn < n.lastTurn)) t.next = j;
  }
  let pick: { tenant: string; running: number; lastTurn: number; job: T } | null = null;
  for (const [tenant, t] of tenants) {
    if (!t.next) continue;
    if (!pick || t.running < pick.running || (t.running === pick.running && t.lastTurn < pick.lastTurn)) pick = { tenant, running: t.running, lastTurn: t.lastTurn, job: t.next };
  }
  return pick ? { job: pick.job, tenant: pick.tenant } : null;
}
