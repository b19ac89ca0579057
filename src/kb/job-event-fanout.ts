/**
 * One subscription per followed job, however many clients follow it. Each event is serialized
 * once into an SSE frame (`id`, `event`, `data`) and the same string is handed to every reader, so
 * a thousand streams of one job cost one JSON.stringify per event, not a thousand. Progress ticks
 * are throttled: the latest tick per item is kept and fanned out at most every `progressMs`; an
 * item's final event replaces its pending tick, and the job's end flushes, fans out and closes
 * every reader. Ids increase per job subscription; a late joiner's `state` frame carries the last
 * id so far, so ids stay increasing on every connection.
 */
import type { JobEvent, KnowledgeBaseApi } from './types.ts';

export interface FanoutReader {
  /** A serialized frame; `itemKey` names the item of progress and item frames. */
  frame(frame: string, type: JobEvent['type'], itemKey: string | undefined): void;
  /** The job ended (after its `job` frame), or the subscription failed: the stream should end. */
  end(): void;
}

interface Followed {
  readers: Set<FanoutReader>;
  seq: number;
  off: (() => void) | null;
  ended: boolean;
  /** Latest progress tick per item, waiting for the throttle. */
  ticks: Map<string, JobEvent>;
  timer: NodeJS.Timeout | null;
  lastFlush: number;
}

export const PROGRESS_FANOUT_MS = 250;

const itemKeyOf = (e: JobEvent): string | undefined => (e.item ? `item:${e.item.index}` : undefined);

export function sseFrame(id: number, event: string, data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export class JobEventFanout {
  private readonly jobs = new Map<string, Followed>();

  constructor(
    private readonly kb: () => KnowledgeBaseApi,
    private readonly progressMs = PROGRESS_FANOUT_MS,
  ) {}

  /** Jobs followed and readers in all (tests and stats). */
  stats(): { jobs: number; readers: number } {
    let readers = 0;
    for (const f of this.jobs.values()) readers += f.readers.size;
    return { jobs: this.jobs.size, readers };
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
      f = { readers: new Set(), seq: 1, off: null, ended: false, ticks: new Map(), timer: null, lastFlush: 0 };
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
    f.off?.();
    f.off = null;
    if (this.jobs.get(jobId) === f) this.jobs.delete(jobId);
  }

  private onEvent(jobId: string, f: Followed, e: JobEvent): void {
    if (f.ended) return;
    if (e.type === 'progress') {
      const key = itemKeyOf(e) ?? 'job';
      f.ticks.set(key, e);
      const wait = f.lastFlush + this.progressMs - Date.now();
      if (wait <= 0) this.flushTicks(f);
      else if (!f.timer) {
        f.timer = setTimeout(() => this.flushTicks(f), wait);
        f.timer.unref();
      }
      return;
    }
    // An item's end supersedes its pending tick; other items' ticks go out first, in order.
    const key = itemKeyOf(e);
    if (key) f.ticks.delete(key);
    if (e.type === 'job') f.ticks.clear();
    this.flushTicks(f);
    this.broadcast(f, sseFrame(++f.seq, e.type, e), e.type, key);
    if (e.type === 'job') {
      const readers = [...f.readers];
      this.close(jobId, f);
      for (const r of readers) r.end();
    }
  }

  private flushTicks(f: Followed): void {
    if (f.timer) clearTimeout(f.timer);
    f.timer = null;
    f.lastFlush = Date.now();
    if (f.ticks.size === 0) return;
    const ticks = [...f.ticks.values()];
    f.ticks.clear();
    for (const e of ticks) this.broadcast(f, sseFrame(++f.seq, 'progress', e), 'progress', itemKeyOf(e));
  }

  private broadcast(f: Followed, frame: string, type: JobEvent['type'], key: string | undefined): void {
    for (const r of [...f.readers]) r.frame(frame, type, key);
  }
}
