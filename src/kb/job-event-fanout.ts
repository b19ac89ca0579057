/**
 * One subscription per followed job, however many clients follow it. Each event is serialized
 * once into an SSE frame (`id`, `event`, `data`) and the same string is handed to every reader, so
 * a thousand streams of one job cost one JSON.stringify per event, not a thousand. Events are
 * fanned out in batches at most every `batchMs`: one write per reader per batch (a write is a
 * system call per socket: with 1,000 readers that, more than serialization, is what costs), with the
 * latest progress tick per item only, an item's final event replacing its pending tick. The job's
 * end flushes, fans out and closes every reader. Ids increase per job subscription; a late
 * joiner's `state` frame carries the last id so far, so ids stay increasing on every connection.
 *
 * The job's state for a joining reader is read once and reused while no event has come since, so
 * a thousand clients connecting to one job cost one read of it, not a thousand.
 */
import type { JobEvent, JobRecord, KnowledgeBaseApi } from './types.ts';

export interface FanoutFrame {
  frame: string;
  type: JobEvent['type'];
  /** The item of a progress or item frame. */
  itemKey: string | undefined;
}

export interface FanoutReader {
  /** A batch of frames, in order. */
  frames(frames: readonly FanoutFrame[]): void;
  /** The job ended (after its `job` frame), or the subscription failed: the stream should end. */
  end(): void;
}

interface Followed {
  readers: Set<FanoutReader>;
  seq: number;
  off: (() => void) | null;
  ended: boolean;
  /** Events waiting for the next batch: the latest progress tick per item, and the others in order. */
  ticks: Map<string, JobEvent>;
  events: JobEvent[];
  timer: NodeJS.Timeout | null;
  /** kb events seen (each may change the job): a cached state is good while this stays the same. */
  received: number;
  state: { at: number; job: JobRecord } | null;
}

export const FANOUT_BATCH_MS = 200;

const itemKeyOf = (e: JobEvent): string | undefined => (e.item ? `item:${e.item.index}` : undefined);

export function sseFrame(id: number, event: string, data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export class JobEventFanout {
  private readonly jobs = new Map<string, Followed>();

  constructor(
    private readonly kb: () => KnowledgeBaseApi,
    private readonly batchMs = FANOUT_BATCH_MS,
  ) {}

  /**
   * The job as it stands, for a reader about to join: read with `load` unless a reader joined
   * since the last event the job had (then that read is still exact). A job nobody follows is
   * always read.
   */
  currentJob(jobId: string, load: () => JobRecord): JobRecord {
    const f = this.jobs.get(jobId);
    if (f?.state && f.state.at === f.received) return f.state.job;
    const job = load();
    if (f) f.state = { at: f.received, job };
    return job;
  }

  /** Jobs followed, readers in all, and events waiting for their batch (tests and stats). */
  stats(): { jobs: number; readers: number; pending: number } {
    let readers = 0;
    let pending = 0;
    for (const f of this.jobs.values()) {
      readers += f.readers.size;
      pending += f.ticks.size + f.events.length;
    }
    return { jobs: this.jobs.size, readers, pending };
  }

  /**
   * Adds a reader to a job's subscription (made on the first reader). `onJoin` runs first with the
   * id the reader's `state` frame should carry, so the state goes out before any live event.
   * Returns the function that removes the reader; the last one out unsubscribes.
   */
  join(jobId: string, reader: FanoutReader, onJoin: (stateId: number) => void): () => void {
    let f = this.jobs.get(jobId);
    const fresh = !f;
    if (!f) {
      f = { readers: new Set(), seq: 1, off: null, ended: false, ticks: new Map(), events: [], timer: null, received: 0, state: null };
      this.jobs.set(jobId, f);
    }
    const followed = f;
    onJoin(followed.seq);
    followed.readers.add(reader);
    if (fresh) {
      try {
        const off = this.kb().subscribe(jobId, (e) => this.onEvent(jobId, followed, e));
        // An ended job's final event may come during subscribe itself.
        if (followed.ended) off();
        else followed.off = off;
      } catch (err) {
        this.close(jobId, followed);
        throw err;
      }
    }
    return () => this.leave(jobId, followed, reader);
  }

  private leave(jobId: string, f: Followed, reader: FanoutReader): void {
    if (!f.readers.delete(reader)) return;
    if (f.readers.size === 0) this.close(jobId, f);
  }

  private close(jobId: string, f: Followed): void {
    f.ended = true;
    if (f.timer) clearTimeout(f.timer);
    f.timer = null;
    f.ticks.clear();
    f.events = [];
    f.state = null;
    f.off?.();
    f.off = null;
    if (this.jobs.get(jobId) === f) this.jobs.delete(jobId);
  }

  private onEvent(jobId: string, f: Followed, e: JobEvent): void {
    if (f.ended) return;
    f.received++;
    const key = itemKeyOf(e);
    if (e.type === 'progress') f.ticks.set(key ?? 'job', e);
    else {
      // An item's end supersedes its pending tick; the job's end supersedes every tick.
      if (key) f.ticks.delete(key);
      if (e.type === 'job') f.ticks.clear();
      f.events.push(e);
    }
    if (e.type === 'job') {
      this.flush(f);
      const readers = [...f.readers];
      this.close(jobId, f);
      // After every frame already queued for them (deliveries run in order).
      this.enqueue({ frames: null, readers, at: 0 });
      return;
    }
    if (!f.timer) {
      f.timer = setTimeout(() => this.flush(f), this.batchMs);
      f.timer.unref();
    }
  }

  private flush(f: Followed): void {
    if (f.timer) clearTimeout(f.timer);
    f.timer = null;
    if (f.ticks.size === 0 && f.events.length === 0) return;
    // Ticks first: each is older than any item event of its own item (those removed it).
    const batch = [...f.ticks.values(), ...f.events];
    f.ticks.clear();
    f.events = [];
    const frames: FanoutFrame[] = batch.map((e) => ({ frame: sseFrame(++f.seq, e.type, e), type: e.type, itemKey: itemKeyOf(e) }));
    this.broadcast(f, frames);
  }

  private broadcast(f: Followed, frames: readonly FanoutFrame[]): void {
    this.enqueue({ frames, readers: [...f.readers], at: 0, still: f.readers });
  }

  /**
   * Deliveries, in order, FANOUT_SLICE readers per event-loop turn: a batch for a thousand readers
   * is a thousand socket writes, and /health (or any small call) runs between slices instead of
   * waiting behind all of them. A delivery with no frames ends its readers (the job ended).
   */
  private readonly outbox: Delivery[] = [];
  private delivering = false;

  private enqueue(d: Delivery): void {
    this.outbox.push(d);
    if (!this.delivering) {
      this.delivering = true;
      this.deliverSlice();
    }
  }

  private deliverSlice(): void {
    let budget = FANOUT_SLICE;
    while (budget > 0 && this.outbox.length > 0) {
      const d = this.outbox[0]!;
      const end = Math.min(d.readers.length, d.at + budget);
      for (let i = d.at; i < end; i++) {
        const r = d.readers[i]!;
        if (d.frames === null) r.end();
        else if (!d.still || d.still.has(r)) r.frames(d.frames);
      }
      budget -= end - d.at;
      d.at = end;
      if (d.at >= d.readers.length) this.outbox.shift();
    }
    if (this.outbox.length === 0) this.delivering = false;
    else setImmediate(() => this.deliverSlice());
  }
}

/** Readers written to in one event-loop turn. */
export const FANOUT_SLICE = 100;

interface Delivery {
  /** null: end the readers. */
  frames: readonly FanoutFrame[] | null;
  readers: FanoutReader[];
  /** Next reader to serve. */
  at: number;
  /** The job's live readers: one that left since the batch was made is skipped. */
  still?: Set<FanoutReader>;
}
