/**
 * Waiting for a condition in a test: poll it with a generous deadline instead of sleeping a fixed
 * time or asserting how many milliseconds something took. The deadline only bounds a failure (on
 * a loaded two-core machine a process can be descheduled for seconds); a passing test waits only
 * as long as the condition takes.
 */
export async function pollUntil(check: () => boolean | Promise<boolean>, what: string, opts: { timeoutMs?: number; everyMs?: number } = {}): Promise<void> {
  const { timeoutMs = 60_000, everyMs = 20 } = opts;
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * `promise`, or a rejection naming `what` once `ms` passed. For "this ends promptly" checks: make
 * the slow alternative (a backoff, a handler's own sleep) an hour long, so a deadline of a minute
 * tells the two apart on any machine, however loaded.
 */
export function within<T>(promise: Promise<T>, what: string, ms = 60_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** An hour: the slow alternative `within` tells apart from a prompt answer. */
export const AN_HOUR_MS = 3_600_000;

/**
 * Event-loop turns (setImmediate rounds) from the first one after `call` started (where `onFirst`
 * runs, e.g. an abort) until it settles; `error` is what it rejected with. For "this stops at
 * once" checks counted in turns, not milliseconds: a call that stops when told settles within a
 * turn or two, while one that runs on (a worker's OCR, more slices) lets the loop spin many turns
 * meanwhile, however loaded the machine.
 */
export async function turnsUntilSettled(call: Promise<unknown>, onFirst?: () => void): Promise<{ turns: number; error: unknown }> {
  let settled = false;
  let turns = 0;
  const done = call.then(
    () => null,
    (e: unknown) => e,
  );
  void done.then(() => (settled = true));
  const count = () => {
    if (settled) return;
    turns++;
    setImmediate(count);
  };
  setImmediate(() => {
    onFirst?.();
    setImmediate(count);
  });
  const error = await done;
  return { turns, error };
}
