/**
 * One folder walk: recursive, sorted (stable job item order), each real folder once (symlink
 * loops end), bounded in entries and depth, and safe against a tree that changes while it is read.
 *
 * - Every folder is opened first and the descriptor checked (safe-open.ts): inside the allowed
 *   folders and the very folder seen when its parent was listed (device and inode). On Linux it is
 *   then listed and its entries looked at through /proc/self/fd/N, i.e. relative to the opened
 *   folder, so a parent swapped for a symlink meanwhile cannot send the walk outside.
 * - Names are read as bytes and kept as bytes for opening, so a file whose name is not UTF-8 is
 *   ingested (it is shown with U+FFFD); globs see the decoded name.
 * - What is left out for a reason the caller should hear of is reported, not dropped silently:
 *   folders deeper than MAX_WALK_DEPTH, symlinks that lead outside the allowed folders, and
 *   symlinks whose target is missing or cannot be resolved (a link into a folder that is gone or
 *   unreadable looks the same from here), each by the link's own name: where it points is never
 *   echoed.
 * - The walk yields to the event loop every few milliseconds of work, stops when the request's
 *   signal aborts, and past its time budget ends with TIMEOUT. Matching is linear (glob-match.ts),
 *   so no single step blocks for long.
 * - The order is total and fixed by the names alone (WalkKey): in each folder its files by name,
 *   then each subfolder by name with everything below it. So a walk can stop after any file and
 *   a later walk resume after that file's key (folder-feed.ts): entries before it are passed over
 *   without being looked at again where their kind is known from the listing, and what is noted
 *   (left out) is noted once, by the walk that passes its place.
 */
import { constants as FS, type BigIntStats, type Dirent } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { isToolError, toolError } from '../errors.ts';
import { fileId, insideBytes, PROC_FD, throughDescriptor, verifyOpened } from './safe-open.ts';

/** Directory entries one request's walks may look at (a huge tree is refused rather than read for minutes). */
export const MAX_ENTRIES_PER_WALK = 200_000;
/** Folder depth below a folder given. */
export const MAX_WALK_DEPTH = 32;
/** Time the walks of one request may take before they end with TIMEOUT. */
export const WALK_BUDGET_MS = 60_000;
/** Synchronous work between two yields to the event loop. */
const YIELD_EVERY_MS = 8;
/** Names listed per reason left out (the count covers them all). */
export const LEFT_OUT_EXAMPLES = 10;
/** Entries looked at (lstat) at once: the thread pool does them while the loop stays free. */
const STAT_BATCH = 16;

export interface LocalFile {
  /** The file's real path (inside an allowed folder); U+FFFD where its bytes are not UTF-8. */
  realpath: string;
  /** Its path relative to the folder it was found in (or its base name when named directly). */
  relative: string;
  bytes: number;
  /** "dev:ino" when it was found: a different file at that path later is refused. */
  id: string;
  /** The real path's bytes, when they are not UTF-8 (realpath is then only for display). */
  raw?: Buffer;
}

export type LeftOutReason = 'too_deep' | 'outside_link' | 'broken_link';

export interface LeftOut {
  reason: LeftOutReason;
  count: number;
  /** The first few, by the path of the entry itself (inside) and relative to the folder given. */
  examples: Array<{ path: string; relative: string }>;
}

/** State shared by the walks of one request. */
export class WalkBudget {
  entries = 0;
  private lastYield = performance.now();
  private readonly deadline: number;
  readonly leftOut = new Map<LeftOutReason, LeftOut>();

  constructor(
    private readonly signal: AbortSignal | undefined,
    private readonly budgetMs = WALK_BUDGET_MS,
  ) {
    this.deadline = Date.now() + budgetMs;
  }

  /** Throws when the request ended or the budget is spent; yields when due. */
  async tick(): Promise<void> {
    this.check();
    if (performance.now() - this.lastYield >= YIELD_EVERY_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.lastYield = performance.now();
      this.check();
    }
  }

  check(): void {
    if (this.signal?.aborted) {
      const reason: unknown = this.signal.reason;
      throw isToolError(reason) ? reason : toolError('TIMEOUT', 'The call was stopped while its folders were being walked');
    }
    if (Date.now() > this.deadline) {
      throw toolError(
        'TIMEOUT',
        `Walking the folders took longer than ${Math.round(this.budgetMs / 1000)} s (${this.entries} entries read); name subfolders, or fewer paths`,
      );
    }
  }

  note(reason: LeftOutReason, p: string, relative: string): void {
    let lo = this.leftOut.get(reason);
    if (!lo) this.leftOut.set(reason, (lo = { reason, count: 0, examples: [] }));
    lo.count++;
    if (lo.examples.length < LEFT_OUT_EXAMPLES) lo.examples.push({ path: p, relative });
  }
}

/**
 * A place in the walk order: the names of the folders down to it (tier 1) and last the entry's
 * own name, tier 0 for a file (or a link left out, noted in a file's place) and 1 for a folder.
 * Compared component by component, tier first, then name bytes; a prefix comes first.
 */
export type WalkKey = Array<[0 | 1, Buffer]>;

function compareStep(a: [0 | 1, Buffer], b: [0 | 1, Buffer]): number {
  return a[0] !== b[0] ? a[0] - b[0] : Buffer.compare(a[1], b[1]);
}

export function compareKeys(a: WalkKey, b: WalkKey): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = compareStep(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

export interface WalkOptions {
  dirs: readonly string[];
  include: ((rel: string) => boolean) | null;
  exclude: ((rel: string) => boolean) | null;
  /** Takes a file found (it may throw, e.g. past the file limit); false: stop the walk after it. */
  add(f: LocalFile, key: WalkKey): void | boolean;
  budget: WalkBudget;
  /** Resume: only what comes after this place is reported (and walked). */
  after?: WalkKey | null;
  /**
   * Folders (dev:ino) an earlier part of a resumed walk already walked or noted; the walk adds
   * each folder it walks or notes, so the set carries over to the next part.
   */
  walked?: Set<string>;
}

const SEP = Buffer.from(path.sep);
const join = (dir: Buffer, name: Buffer) => Buffer.concat([dir, SEP, name]);
const text = (b: Buffer) => b.toString('utf8');
const isUtf8 = (b: Buffer, s: string) => Buffer.byteLength(s) === b.length && Buffer.from(s).equals(b);

interface Pending {
  /** The folder's real path, as bytes. */
  dir: Buffer;
  rel: string;
  depth: number;
  /** dev:ino seen when its parent was listed (the root: when it was resolved). */
  id: string;
  /** Its place in the walk order. */
  key: WalkKey;
  /** On the way to the place a resumed walk starts after: what is before it inside is passed over. */
  onPath: boolean;
  /** Deeper than MAX_WALK_DEPTH: noted in its turn, not walked. */
  tooDeep?: { entryPath: string };
}

/** Opens a folder by path without following a last symlink, and checks the descriptor. */
async function openFolder(dir: Buffer, dirs: readonly string[], id: string): Promise<FileHandle | null> {
  const fh = await fs.open(dir, FS.O_RDONLY | FS.O_DIRECTORY | FS.O_NOFOLLOW).catch(() => null);
  if (!fh) return null;
  const v = await verifyOpened(fh, dirs, dir, id).catch(() => null);
  if (v?.ok) return fh;
  await fh.close();
  return null;
}

/**
 * Walks `root` (a real path inside `dirs`, whose dev:ino is `rootId`). True when it reached the
 * end; false when `add` asked it to stop.
 */
export async function walkFolder(root: string, rootId: string, opts: WalkOptions): Promise<boolean> {
  const { dirs, include, exclude, add, budget } = opts;
  const after = opts.after && opts.after.length > 0 ? opts.after : null;
  const walked = opts.walked ?? new Set<string>();
  // Folders seen by this part of the walk (when listed), and those earlier parts walked.
  const visited = new Set<string>([rootId, ...walked]);
  walked.add(rootId);
  // Depth-first with an explicit stack of folders not yet opened.
  const stack: Pending[] = [{ dir: Buffer.from(root), rel: '', depth: 0, id: rootId, key: [], onPath: after !== null }];
  while (stack.length > 0) {
    const folder = stack.pop()!;
    await budget.tick();
    if (folder.tooDeep) {
      walked.add(folder.id);
      budget.note('too_deep', folder.tooDeep.entryPath, folder.rel);
      continue;
    }
    walked.add(folder.id);
    // The resumed walk's next step inside this folder: entries up to it were reported before.
    const next = folder.onPath ? after![folder.key.length] : undefined;
    // A place at or before `next`: passed over (a folder equal to it is the way down).
    const before = (tier: 0 | 1, name: Buffer) => (next ? compareStep([tier, name], next) : 1);
    // A folder that is no longer the one seen (swapped, moved, gone) is left out.
    const fh = await openFolder(folder.dir, dirs, folder.id);
    if (!fh) continue;
    const subfolders: Pending[] = [];
    try {
      // On Linux, listed and looked at through the opened descriptor (openat semantics).
      const base = PROC_FD ? Buffer.from(`/proc/self/fd/${fh.fd}`) : folder.dir;
      const via = (name: Buffer) => (PROC_FD ? throughDescriptor(fh.fd, name) : join(folder.dir, name));
      let list = await fs.readdir(base, { withFileTypes: true, encoding: 'buffer' }).catch(() => [] as Dirent<Buffer>[]);
      budget.entries += list.length;
      if (budget.entries > MAX_ENTRIES_PER_WALK) {
        throw toolError('VALIDATION_ERROR', `The folders hold more than ${MAX_ENTRIES_PER_WALK} entries; name subfolders instead`);
      }
      // Plain files and folders at or before the resume place are known from the listing: not looked at.
      if (next) list = list.filter((e) => !((e.isFile() && before(0, e.name) <= 0) || (e.isDirectory() && before(1, e.name) < 0)));
      list.sort((a, b) => Buffer.compare(a.name, b.name));
      for (let i = 0; i < list.length; i += STAT_BATCH) {
        await budget.tick();
        const batch = list.slice(i, i + STAT_BATCH).map((entry) => {
          const name = entry.name;
          const relName = text(name);
          const rel = folder.rel ? `${folder.rel}/${relName}` : relName;
          // Files a glob leaves out are not even looked at.
          const plainFile = entry.isFile();
          const wanted = !plainFile || ((!include || include(rel)) && !exclude?.(rel));
          return { name, rel, wanted };
        });
        const stats = await Promise.all(
          batch.map((e) => (e.wanted ? fs.lstat(via(e.name), { bigint: true }).catch(() => null) : Promise.resolve(null))),
        );
        for (let k = 0; k < batch.length; k++) {
          const e = batch[k]!;
          let st: BigIntStats | null = stats[k]!;
          if (!st) continue;
          let real = join(folder.dir, e.name);
          const entryPath = real;
          if (st.isSymbolicLink()) {
            // Followed only when its target is inside an allowed folder.
            const target = await fs.realpath(via(e.name), { encoding: 'buffer' }).catch(() => null);
            if (!target) {
              // Dangling or unresolvable: said in the job unless the globs leave the name out anyway.
              if (before(0, e.name) > 0 && (!include || include(e.rel)) && !exclude?.(e.rel)) budget.note('broken_link', text(entryPath), e.rel);
              continue;
            }
            if (!insideBytes(dirs, target)) {
              if (before(0, e.name) > 0) budget.note('outside_link', text(entryPath), e.rel);
              continue;
            }
            st = await fs.stat(target, { bigint: true }).catch(() => null);
            if (!st) continue;
            real = target;
          }
          if (st.isDirectory()) {
            const place = before(1, e.name);
            if (place < 0) continue;
            const key: WalkKey = [...folder.key, [1, e.name]];
            if (place === 0) {
              // The way down to the resume place: walked before, so not checked against `visited`.
              subfolders.push({ dir: real, rel: e.rel, depth: folder.depth + 1, id: fileId(st), key, onPath: true });
              continue;
            }
            if (exclude?.(e.rel) || exclude?.(`${e.rel}/`)) continue;
            const id = fileId(st);
            if (visited.has(id)) continue;
            visited.add(id);
            const pending: Pending = { dir: real, rel: e.rel, depth: folder.depth + 1, id, key, onPath: false };
            if (folder.depth + 1 > MAX_WALK_DEPTH) pending.tooDeep = { entryPath: text(entryPath) };
            subfolders.push(pending);
            continue;
          }
          if (!st.isFile()) continue; // FIFOs, sockets, devices
          if (before(0, e.name) <= 0) continue;
          if ((include && !include(e.rel)) || exclude?.(e.rel)) continue;
          const realText = text(real);
          const more = add(
            {
              realpath: realText,
              relative: e.rel,
              bytes: Number(st.size),
              id: fileId(st),
              ...(isUtf8(real, realText) ? {} : { raw: real }),
            },
            [...folder.key, [0, e.name]],
          );
          if (more === false) return false;
        }
      }
    } finally {
      await fh.close();
    }
    // Reverse so the first subfolder is walked next (stack order).
    for (let i = subfolders.length - 1; i >= 0; i--) stack.push(subfolders[i]!);
  }
  return true;
}
