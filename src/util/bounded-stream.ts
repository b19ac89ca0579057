/**
 * A send buffer with a cap for one long-lived response (an SSE job stream, an MCP progress
 * stream). A client that reads slowly, or never, must not make the server hold an unbounded
 * backlog for it: frames go to the socket only while it accepts them (`write()` returns true);
 * meanwhile they wait here, where a replaceable frame (a progress tick) takes the place of the
 * older one of the same key, so a stalled reader costs one frame per key plus the frames that
 * must all arrive (item and job events). When what waits (here and in the socket's own buffer)
 * passes `maxBytes`, the reader is dropped: the backlog is discarded, one final frame says why,
 * and the socket is destroyed once that frame is out or `dropGraceMs` has passed.
 *
 * Frames are strings: one serialized event is shared by every subscriber (the socket buffers keep
 * references to the same string; nothing is copied per connection before it is written).
 */
import type { Writable } from 'node:stream';

/** The part of a response this writer uses (http.ServerResponse satisfies it). */
export type FrameSink = Pick<Writable, 'write' | 'end' | 'destroy' | 'once' | 'on' | 'off' | 'writableLength' | 'writableEnded' | 'destroyed'>;

export interface BoundedWriterOptions {
  /** Bytes that may wait for one reader (queued here plus the socket's writableLength). */
  maxBytes: number;
  /** The last frame a dropped reader gets (after its backlog is discarded). */
  dropFrame: (reason: string) => string;
  /** Called once when the reader is dropped, before the socket goes. */
  onDrop?: (reason: string) => void;
  /** How long the final frame may take to leave before the socket is destroyed anyway. */
  dropGraceMs?: number;
}

interface Pending {
  frame: string;
  key: string | undefined;
}

export const DEFAULT_DROP_GRACE_MS = 10_000;

export class BoundedWriter {
  private queue: Pending[] = [];
  private head = 0;
  private queuedBytes = 0;
  /** Queued replaceable frames by key (only those not yet written). */
  private readonly replaceable = new Map<string, Pending>();
  private blocked = false;
  private state: 'open' | 'dropped' | 'closed' = 'open';
  private graceTimer: NodeJS.Timeout | null = null;
  private readonly onDrain = () => this.flush();

  constructor(
    private readonly sink: FrameSink,
    private readonly opts: BoundedWriterOptions,
  ) {
    sink.on('drain', this.onDrain);
  }

  get open(): boolean {
    return this.state === 'open';
  }

  /** Bytes waiting for this reader: queued here and in the socket's buffer. */
  get pendingBytes(): number {
    return this.queuedBytes + this.sink.writableLength;
  }

  /**
   * Sends a frame, or queues it while the socket is full. With `replaceKey`, a queued frame of the
   * same key is replaced (latest progress wins); `barrierKey` ends replacement for that key so a
   * later frame never jumps ahead of an item's final event. Returns false once the reader is gone.
   */
  send(frame: string, opts: { replaceKey?: string; barrierKey?: string } = {}): boolean {
    if (this.state !== 'open') return false;
    if (opts.barrierKey !== undefined) this.replaceable.delete(opts.barrierKey);
    if (!this.blocked) {
      if (!this.sink.write(frame)) this.blocked = true;
      return this.checkCap();
    }
    const key = opts.replaceKey;
    if (key !== undefined) {
      const old = this.replaceable.get(key);
      if (old) {
        this.queuedBytes += Buffer.byteLength(frame) - Buffer.byteLength(old.frame);
        old.frame = frame;
        return this.checkCap();
      }
    }
    const entry: Pending = { frame, key };
    this.queue.push(entry);
    this.queuedBytes += Buffer.byteLength(frame);
    if (key !== undefined) this.replaceable.set(key, entry);
    return this.checkCap();
  }

  /**
   * Several frames at once (a batch of one job's events). Writes made in one turn of the event loop
   * leave as one system call (the response corks the socket until the next tick), so a batch costs
   * one write per reader, frames keeping their replace and barrier keys if the socket fills.
   */
  sendMany(frames: readonly { frame: string; replaceKey?: string; barrierKey?: string }[]): boolean {
    for (const f of frames) if (!this.send(f.frame, f)) return false;
    return true;
  }

  /** A frame that may be skipped when the socket is busy (a heartbeat comment). */
  sendIfIdle(frame: string): void {
    if (this.state === 'open' && !this.blocked && !this.sink.write(frame)) this.blocked = true;
  }

  /** Ends the response normally: what is queued still goes out first. */
  end(last?: string): void {
    if (this.state !== 'open') return;
    if (last !== undefined) this.send(last);
    if (this.state !== 'open') return;
    this.state = 'closed';
    if (this.queue.length === this.head) this.finish();
    // else flush() ends it once the queue is out
  }

  /** Drops the reader now (the same path as a full buffer), e.g. when the server stops. */
  drop(reason: string): void {
    if (this.state !== 'open') return;
    this.state = 'dropped';
    this.discard();
    this.opts.onDrop?.(reason);
    if (this.sink.destroyed || this.sink.writableEnded) return;
    this.sink.end(this.opts.dropFrame(reason));
    // A reader that never reads never takes the final frame: it may wait only so long.
    this.graceTimer = setTimeout(() => this.sink.destroy(), this.opts.dropGraceMs ?? DEFAULT_DROP_GRACE_MS);
    this.graceTimer.unref();
    this.sink.once('finish', () => this.sink.destroy());
  }

  /** Forgets everything: the connection closed (or the caller gave up on it). */
  release(): void {
    if (this.graceTimer) clearTimeout(this.graceTimer);
    this.graceTimer = null;
    this.sink.off('drain', this.onDrain);
    this.discard();
    if (this.state === 'open') this.state = 'closed';
  }

  private checkCap(): boolean {
    if (this.pendingBytes <= this.opts.maxBytes) return true;
    this.drop(`send buffer full: more than ${this.opts.maxBytes} bytes waiting for this reader (STREAM_BUFFER_BYTES)`);
    return false;
  }

  private flush(): void {
    this.blocked = false;
    while (this.head < this.queue.length) {
      const entry = this.queue[this.head]!;
      this.queue[this.head++] = undefined as unknown as Pending;
      this.queuedBytes -= Buffer.byteLength(entry.frame);
      if (entry.key !== undefined && this.replaceable.get(entry.key) === entry) this.replaceable.delete(entry.key);
      if (!this.sink.write(entry.frame)) {
        this.blocked = true;
        break;
      }
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      // Written entries are dropped in batches so the array never keeps a long dead prefix.
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    if (this.state === 'closed' && this.head === this.queue.length) this.finish();
  }

  private finish(): void {
    this.sink.off('drain', this.onDrain);
    if (!this.sink.writableEnded && !this.sink.destroyed) this.sink.end();
  }

  private discard(): void {
    this.queue = [];
    this.head = 0;
    this.queuedBytes = 0;
    this.replaceable.clear();
  }
}
