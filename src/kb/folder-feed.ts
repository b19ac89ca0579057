/**
 * Folders of any size in one job: a job that names folders walks them in parts, as its documents
 * drain, instead of listing every file up front. INGEST_QUEUE_MAX then bounds how many documents
 * wait at once (memory), not how many files a folder may hold.
 *
 * The walk order is fixed by the names (folder-walk.ts WalkKey), so where a walk stands is small
 * and exact: the root being walked, the place of the last file that became an item, and the
 * folders walked so far (a symlinked folder met again is not walked twice). That state is written
 * with the job's items in one statement, so after a restart (kill -9 too) the next part starts
 * after the last file recorded: none is lost, none is made an item twice.
 *
 * Each part is an ordinary walk (same checks, same left-out notes, same globs): it stops after
 * `max` files, or at the end, where what the walks left out becomes skipped items with their
 * notes, as a one-go walk reports them. The queues (job-runner.ts, redis-job-queue.ts,
 * ingest-worker.ts) decide when a part runs and how many files it may take.
 */
import { toolError } from '../errors.ts';
import { compareKeys, WalkBudget, walkFolder, type LeftOut, type WalkKey } from './folder-walk.ts';
import { compileGlobs, leftOutNotes, localRefOf, resolveNamedPath, type AllowedFolders, type LocalFile } from './local-files.ts';
import type { FeedState, JobRecord, NewItem } from './types.ts';

export interface FeedBatch {
  /** New items: files found (queued), then, when the walk completed, what it left out (skipped). */
  items: NewItem[];
  state: FeedState;
}

/** Takes the next part of a job's folders: at most `max` files (the queues provide it, knowing the allowed folders). */
export type FeedNext = (state: FeedState, options: { allowedDirs?: string[]; allowedOrigin?: string }, max: number, signal?: AbortSignal) => Promise<FeedBatch>;

/**
 * Documents of one job's folders that may wait at once: half of INGEST_QUEUE_MAX (at least one),
 * so a big folder leaves room for other jobs; a part is taken when half of that has drained.
 */
export function feedWindow(queueMax: number): number {
  return Math.max(1, Math.ceil(queueMax / 2));
}

/** Whether a job with `waiting` documents of its own not yet started should take its next part. */
export function wantsFeed(job: Pick<JobRecord, 'feed'>, waiting: number, queueMax: number): boolean {
  return job.feed?.state === 'walking' && waiting <= Math.floor(feedWindow(queueMax) / 2);
}

export function newFeed(roots: FeedState['roots'], named: readonly string[], include?: string[], exclude?: string[]): FeedState {
  return {
    roots,
    ...(include ? { include } : {}),
    ...(exclude ? { exclude } : {}),
    named: [...named],
    root: 0,
    after: null,
    walked: [],
    found: 0,
    leftOut: [],
    state: 'walking',
    seq: 0,
  };
}

/** Sets a job's walk state and the API's view of it. */
export function setFeed(job: JobRecord, state: FeedState): void {
  job.feed = state;
  job.enumeration = { state: state.state, files_found: state.found };
}

/** Ends a job's walk before its end (cancelled, or a part failed); no more parts are taken. */
export function stopFeed(job: JobRecord): void {
  if (job.feed?.state === 'walking') setFeed(job, { ...job.feed, state: 'stopped' });
}

/** The job as answered: without the walk's server-only state (folders walked, cursor). */
export function publicJob<T extends JobRecord>(job: T): T {
  if (!job.feed) return job;
  const { feed: _feed, ...rest } = job;
  return rest as T;
}

export function isWalking(job: Pick<JobRecord, 'feed'>): boolean {
  return job.feed?.state === 'walking';
}

const encodeKey = (k: WalkKey): NonNullable<FeedState['after']> => k.map(([tier, name]) => [tier, name.toString('base64')]);
const decodeKey = (k: FeedState['after']): WalkKey | null => (k ? k.map(([tier, name]) => [tier, Buffer.from(name, 'base64')]) : null);

/**
 * Walks the job's folders from where `state` stands, taking at most `max` files (max >= 1).
 * The first part of a new job throws VALIDATION_ERROR when the paths name no file at all, as a
 * one-go walk does; walk errors (TIMEOUT, too many entries, the signal) are thrown as they are.
 */
export async function nextFeedBatch(state: FeedState, allowed: AllowedFolders, max: number, signal?: AbortSignal, budgetMs?: number): Promise<FeedBatch> {
  const s: FeedState = structuredClone(state);
  const include = compileGlobs(s.include, 'include');
  const exclude = compileGlobs(s.exclude, 'exclude');
  const budget = new WalkBudget(signal, budgetMs);
  for (const lo of s.leftOut) budget.leftOut.set(lo.reason, lo as LeftOut);
  const named = new Set(s.named);
  const seen = new Set<string>();
  const items: NewItem[] = [];
  const limit = Math.max(1, max);
  while (s.root < s.roots.length) {
    const root = s.roots[s.root]!;
    const walked = new Set(s.walked);
    const after = decodeKey(s.after);
    const pos: { last: WalkKey | null } = { last: null };
    const complete = await walkFolder(root.path, root.id, {
      dirs: allowed.dirs,
      include,
      exclude,
      budget,
      after,
      walked,
      add: (f, key) => {
        // The order makes this a no-op; kept so a walk can never hand back a file it passed.
        if (after && compareKeys(key, after) <= 0) return true;
        pos.last = key;
        const id = f.raw ? `b:${f.raw.toString('base64')}` : f.realpath;
        if (named.has(f.realpath) || seen.has(id)) return true;
        seen.add(id);
        items.push({ source: f.realpath, source_kind: 'path', local: localRefOf(f) });
        s.found++;
        return items.length < limit;
      },
    });
    s.walked = [...walked];
    if (!complete) {
      s.after = pos.last ? encodeKey(pos.last) : s.after;
      break;
    }
    s.root++;
    s.after = null;
    s.walked = [];
  }
  s.leftOut = [...budget.leftOut.values()].map((lo) => structuredClone(lo));
  s.seq++;
  if (s.root >= s.roots.length) {
    s.state = 'complete';
    const notes = leftOutNotes(s.leftOut);
    if (s.found === 0 && s.named.length === 0) {
      throw toolError('VALIDATION_ERROR', `The paths name no files (after include/exclude)${notes.length ? `; ${notes.length} entries were left out (${notes[0]!.note})` : ''}`);
    }
    // Reported as skipped items with their reason, so a job that left files out does not look complete.
    for (const n of notes) items.push({ source: n.source, source_kind: 'path', leftOut: n.note });
  }
  return { items, state: s };
}

/**
 * What a request's `paths` name: its files (checked now, each once) and its folders (each once,
 * walked in parts by the job). Malformed globs are refused here, before any job exists.
 */
export async function namedPaths(
  paths: readonly string[],
  opts: { allowed: AllowedFolders; include?: string[]; exclude?: string[]; maxBytes: number; signal?: AbortSignal },
): Promise<{ files: LocalFile[]; feed: FeedState | null }> {
  compileGlobs(opts.include, 'include');
  compileGlobs(opts.exclude, 'exclude');
  const files: LocalFile[] = [];
  const roots: FeedState['roots'] = [];
  const seen = new Set<string>();
  for (const requested of paths) {
    if (opts.signal?.aborted) throw toolError('TIMEOUT', 'The call was stopped while its paths were being read');
    const named = await resolveNamedPath(requested, opts.allowed, opts.maxBytes);
    const key = named.kind === 'folder' ? `d:${named.real}` : named.file.realpath;
    if (seen.has(key)) continue;
    seen.add(key);
    if (named.kind === 'folder') roots.push({ path: named.real, id: named.id });
    else files.push(named.file);
  }
  const feed = roots.length > 0 ? newFeed(roots, files.map((f) => f.realpath), opts.include, opts.exclude) : null;
  return { files, feed };
}

/** The allowed folders a job's walks and reads use: the ones that came with it (MCP roots), or ALLOWED_DIRS. */
export function allowedOfJob(options: { allowedDirs?: string[]; allowedOrigin?: string }, configured: readonly string[]): AllowedFolders {
  return options.allowedDirs
    ? { dirs: options.allowedDirs, origin: options.allowedOrigin ?? "the MCP client's roots" }
    : { dirs: configured, origin: 'ALLOWED_DIRS' };
}
