/**
 * Bodies a source sync already downloaded, handed to the ingestion of the same URL so a changed
 * page costs one request per sync, not two (the conditional request, then the job's download).
 * In memory and bounded: at most MAX_BYTES in all and MAX_AGE_MS old; a body that does not fit,
 * expired, or is gone after a restart is simply downloaded again by the job (the old behaviour).
 * Keyed by collection and URL; taken once.
 */
import { createHash } from 'node:crypto';
import type { DownloadedFile } from '../../cache/cache-registry.ts';

const MAX_BYTES = 64 * 1024 * 1024;
const MAX_AGE_MS = 10 * 60_000;

interface Entry {
  file: DownloadedFile;
  at: number;
}

export class PrefetchedBodies {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly maxBytes = MAX_BYTES,
    private readonly maxAgeMs = MAX_AGE_MS,
  ) {}

  /** Keeps a 2xx body for the job that ingests `url` next; false when it does not fit. */
  put(collection: string, url: string, res: { body: Buffer; headers: Record<string, string>; final_url: string }): boolean {
    this.expire();
    const key = `${collection}\n${url}`;
    this.drop(key);
    if (res.body.length > this.maxBytes - this.bytes) return false;
    const h = res.headers;
    const file: DownloadedFile = {
      bytes: res.body,
      sha256: createHash('sha256').update(res.body).digest('hex'),
      finalUrl: res.final_url,
      ...(h['content-type'] ? { contentType: h['content-type'] } : {}),
      ...(h['content-disposition'] ? { contentDisposition: h['content-disposition'] } : {}),
      ...(h['cache-control'] ? { cacheControl: h['cache-control'] } : {}),
    };
    this.entries.set(key, { file, at: Date.now() });
    this.bytes += res.body.length;
    return true;
  }

  /** The body kept for `url` (removed), or null: download it. */
  take(collection: string, url: string): DownloadedFile | null {
    this.expire();
    const key = `${collection}\n${url}`;
    const e = this.entries.get(key);
    if (!e) return null;
    this.drop(key);
    return e.file;
  }

  /** Bodies of a sync whose job will not run them (refused, cancelled). */
  forget(collection: string, urls: Iterable<string>): void {
    for (const u of urls) this.drop(`${collection}\n${u}`);
  }

  get size(): number {
    return this.entries.size;
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.bytes -= e.file.bytes.length;
  }

  private expire(): void {
    const cutoff = Date.now() - this.maxAgeMs;
    for (const [k, e] of this.entries) if (e.at < cutoff) this.drop(k);
  }
}

/** The process's one handoff between source syncs and ingestion (ingest-document.ts takes from it). */
export const prefetchedBodies = new PrefetchedBodies();
