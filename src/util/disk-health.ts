/**
 * Whether DATA_DIR can take writes: free space (statfs) against a threshold, plus a tiny write
 * probe (create, write, fsync, remove) that catches what statfs cannot see — a read-only mount, a
 * permission change, a quota. A probe costs well under a millisecond on an idle disk (its fsync
 * can take a second behind heavy writes), results are reused for `maxAgeMs` and then served while
 * the next probe runs, so /health can be polled freely and never waits on a slow fsync. A write that fails with a
 * disk error elsewhere in the server reports it here at once (`reportFailure`) without waiting
 * for the next probe.
 *
 * The file-system layer is a seam (`DiskProbe`): tests drive the real code with a fake statfs or
 * an EROFS write, since they run as root, where chmod does not stop writes.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { diskCondition, describeFsError, type DiskCondition } from './fs-errors.ts';

export interface DiskProbe {
  /** Free bytes available to this process on the file system holding `dir`. */
  freeBytes(dir: string): Promise<number>;
  /** Writes, syncs and removes a small file in `dir` (creating `dir`); throws the fs error when it cannot. */
  writeProbe(dir: string): Promise<void>;
}

export const realDiskProbe: DiskProbe = {
  async freeBytes(dir) {
    const st = await fs.statfs(dir);
    return st.bavail * st.bsize;
  },
  async writeProbe(dir) {
    await fs.mkdir(dir, { recursive: true });
    const file = path.join(dir, `.probe-${process.pid}-${randomBytes(4).toString('hex')}`);
    const fh = await fs.open(file, 'wx');
    try {
      await fh.writeFile('probe');
      await fh.sync();
    } finally {
      await fh.close();
      await fs.rm(file, { force: true });
    }
  },
};

export type DiskState = 'ok' | DiskCondition | 'unavailable';

export interface DiskStatus {
  state: DiskState;
  writable: boolean;
  /** null when statfs failed. */
  free_mb: number | null;
  min_free_mb: number;
  /** Why not ok, for /health ("disk: full (12 MB free, need 100)"); absent when ok. */
  reason?: string;
  checked_at: string;
}

export interface DiskHealthOptions {
  dir: string;
  /** Below this many free MB the disk counts as full (MIN_FREE_DISK_MB). */
  minFreeMb: number;
  probe?: DiskProbe;
  /** How long a result is reused (default 5 s). */
  maxAgeMs?: number;
}

const MB = 1024 * 1024;
/** How many maxAgeMs a result may be served while the next probe runs (5 s: up to 30 s old). */
export const STALE_FACTOR = 6;

export class DiskHealth {
  readonly dir: string;
  readonly minFreeMb: number;
  private readonly probe: DiskProbe;
  private readonly maxAgeMs: number;
  private last: { status: DiskStatus; at: number } | null = null;
  private running: Promise<DiskStatus> | null = null;

  constructor(opts: DiskHealthOptions) {
    this.dir = opts.dir;
    this.minFreeMb = opts.minFreeMb;
    this.probe = opts.probe ?? realDiskProbe;
    this.maxAgeMs = opts.maxAgeMs ?? 5000;
  }

  /**
   * The last result, probing again when it is older than maxAgeMs (concurrent callers share one
   * probe). A result up to STALE_FACTOR x maxAgeMs old is answered at once while the new probe
   * runs: under heavy ingestion an fsync can take a second or more, and /health must not wait on
   * it. An older result (or none, or `force`) waits for the probe.
   */
  async check(force = false): Promise<DiskStatus> {
    const age = this.last ? performance.now() - this.last.at : Infinity;
    if (!force && age < this.maxAgeMs) return this.last!.status;
    const probe = (this.running ??= this.measure().finally(() => {
      this.running = null;
    }));
    if (!force && this.last && age < this.maxAgeMs * STALE_FACTOR) return this.last.status;
    return probe;
  }

  /** The last known status without probing (null before the first check). */
  peek(): DiskStatus | null {
    return this.last?.status ?? null;
  }

  /** Whether writes are worth trying: false only while the last result says they fail. */
  get writable(): boolean {
    return this.last?.status.writable ?? true;
  }

  /** A write elsewhere failed: when it was disk trouble, remember it until the next probe. */
  reportFailure(err: unknown): void {
    const condition = diskCondition(err);
    if (!condition) return;
    const free = this.last?.status.free_mb ?? null;
    this.remember(this.status(condition, free));
  }

  private async measure(): Promise<DiskStatus> {
    let free: number | null = null;
    let writeError: unknown = null;
    // The write first: it creates DATA_DIR when it is missing, which statfs needs.
    await this.probe.writeProbe(this.dir).catch((err: unknown) => {
      writeError = err;
    });
    try {
      free = Math.floor((await this.probe.freeBytes(this.dir)) / MB);
    } catch (err) {
      writeError ??= err;
    }
    if (writeError) return this.remember(this.status(diskCondition(writeError) ?? 'unavailable', free, describeFsError(writeError)));
    return this.remember(this.status(free! < this.minFreeMb ? 'full' : 'ok', free));
  }

  private status(state: DiskState, free: number | null, detail?: string): DiskStatus {
    const base = { state, writable: state === 'ok', free_mb: free, min_free_mb: this.minFreeMb, checked_at: new Date().toISOString() };
    if (state === 'ok') return base;
    let reason: string;
    if (state === 'full') reason = `disk: full (${free ?? 'unknown'} MB free, need ${this.minFreeMb})`;
    else if (state === 'read-only') reason = 'disk: read-only';
    else if (state === 'permission-denied') reason = 'disk: not writable (permission denied)';
    else reason = `disk: unavailable (${detail ?? 'unknown error'})`;
    return { ...base, reason };
  }

  private remember(status: DiskStatus): DiskStatus {
    this.last = { status, at: performance.now() };
    return status;
  }
}
