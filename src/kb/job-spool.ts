/**
 * A job's spool, DATA_DIR/kb/uploads/<job>/: its uploads' bytes by item index and its options
 * (options.json), written before the job is recorded so a restart (in process) or another
 * process (a Redis worker) runs it as it was asked. The folder goes when the job's end is written.
 */
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { toolError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic-file.ts';
import { errorText } from '../util/error-text.ts';
import type { JobOptions } from './document-executor.ts';
import type { NewItem } from './types.ts';

export function spoolOf(spoolDir: string, jobId: string): string {
  return path.join(spoolDir, jobId);
}

/** The job's options with the uploads' content types by item index (kept beside the spool). */
export function withContentTypes(options: JobOptions, items: readonly NewItem[]): JobOptions {
  const contentTypes: Record<number, string> = {};
  items.forEach((it, i) => {
    if (it.upload?.contentType) contentTypes[i] = it.upload.contentType;
  });
  return { ...options, ...(Object.keys(contentTypes).length ? { contentTypes } : {}) };
}

/** Writes the uploads and options of a new job; STORAGE_UNAVAILABLE (nothing left behind) when the disk refuses. */
export async function writeSpool(spoolDir: string, jobId: string, items: readonly NewItem[], options: JobOptions): Promise<void> {
  const spool = spoolOf(spoolDir, jobId);
  try {
    for (const [i, it] of items.entries()) if (it.upload) await writeFileAtomic(path.join(spool, String(i)), it.upload.bytes);
    await writeFileAtomic(path.join(spool, 'options.json'), JSON.stringify(options));
  } catch (err) {
    await removeSpool(spoolDir, jobId);
    throw toolError('STORAGE_UNAVAILABLE', `The job could not be written to DATA_DIR (${(err as NodeJS.ErrnoException).code ?? errorText(err)})`, err);
  }
}

/** The job's options, or null when its spool holds none (synchronous: resuming at start-up reads a few small files). */
export function readOptionsSync(spoolDir: string, jobId: string): JobOptions | null {
  try {
    return JSON.parse(fsSync.readFileSync(path.join(spoolOf(spoolDir, jobId), 'options.json'), 'utf8')) as JobOptions;
  } catch {
    return null;
  }
}

/** The job's options; the defaults when its spool holds none. */
export async function readOptions(spoolDir: string, jobId: string): Promise<JobOptions> {
  try {
    return JSON.parse(await fs.readFile(path.join(spoolOf(spoolDir, jobId), 'options.json'), 'utf8')) as JobOptions;
  } catch {
    return { force: false };
  }
}

export function hasSpooledUpload(spoolDir: string, jobId: string, index: number): boolean {
  return fsSync.existsSync(path.join(spoolOf(spoolDir, jobId), String(index)));
}

export async function removeSpool(spoolDir: string, jobId: string): Promise<void> {
  await fs.rm(spoolOf(spoolDir, jobId), { recursive: true, force: true }).catch(() => undefined);
}

/** Removes the spool folders of jobs for which `keep` says no (ended, or deleted with their collection). */
export async function sweepSpool(spoolDir: string, keep: (jobId: string) => boolean): Promise<void> {
  const names = await fs.readdir(spoolDir).catch(() => [] as string[]);
  for (const name of names) if (!keep(name)) await removeSpool(spoolDir, name);
}
