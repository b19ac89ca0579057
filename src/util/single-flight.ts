/**
 * Coalesces concurrent work on the same key: the first caller starts it, later callers await the
 * same promise. The shared work runs under its own AbortSignal that fires only when EVERY waiting
 * caller has gone, so one impatient client cannot cancel a download others are waiting for.
 * Bounded: past maxInFlight distinct keys, new keys run uncoalesced.
 */
import { abortError } from './abort.ts';

interface Flight<T> {
  promise: Promise<T>;
  controller: AbortController;
  waiters: number;
}

export class SingleFlight<T> {
  private readonly flights = new Map<string, Flight<T>>();

  constructor(private readonly maxInFlight = 256) {}

  get size(): number {
    return this.flights.size;
  }

  run(key: string, signal: AbortSignal, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (signal.aborted) return Promise.reject(abortError(signal));
    let flight = this.flights.get(key);
    if (!flight) {
      if (this.flights.size >= this.maxInFlight) return work(signal);
      const controller = new AbortController();
      const created: Flight<T> = { controller, waiters: 0, promise: undefined as unknown as Promise<T> };
      created.promise = Promise.resolve()
        .then(() => work(controller.signal))
        .finally(() => {
          if (this.flights.get(key) === created) this.flights.delete(key);
        });
      // The shared promise may reject after every waiter left; that rejection is nobody's to handle.
      created.promise.catch(() => undefined);
      this.flights.set(key, created);
      flight = created;
    }
    return this.join(key, flight, signal);
  }

  private join(key: string, flight: Flight<T>, signal: AbortSignal): Promise<T> {
    flight.waiters++;
    return new Promise<T>((resolve, reject) => {
      let left = false;
      const leave = () => {
        if (left) return;
        left = true;
        signal.removeEventListener('abort', onAbort);
        flight.waiters--;
      };
      const onAbort = () => {
        leave();
        if (flight.waiters === 0) {
          // Nobody waits any more: stop the work and let a later caller start afresh.
          if (this.flights.get(key) === flight) this.flights.delete(key);
          flight.controller.abort(signal.reason);
        }
        reject(abortError(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      flight.promise.then(
        (v) => {
          leave();
          resolve(v);
        },
        (e) => {
          leave();
          reject(e);
        },
      );
    });
  }
}
