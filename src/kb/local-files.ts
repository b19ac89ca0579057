/**
 * Local files for the knowledge base: which paths a caller may have ingested, and reading them.
 * A path is resolved with realpath and must land inside one of the allowed folders (ALLOWED_DIRS,
 * or the MCP client's roots over stdio when ALLOWED_DIRS is unset), so neither `..` nor a symlink
 * leads out; only regular files are read (no devices, FIFOs or sockets). Folders are walked by
 * folder-walk.ts (bounded in files, entries, depth and time; checked against swaps), and every
 * read opens the file first and checks the descriptor (safe-open.ts). Messages name the request
 * as given and the allowed folders, never where a symlink points. Globs: glob-match.ts.
 */
import fs from 'node:fs/promises';
import { constants as FS } from 'node:fs';
import path from 'node:path';
import { toolError } from '../errors.ts';
import { MAX_WALK_DEPTH, WalkBudget, walkFolder, type LeftOut, type LocalFile } from './folder-walk.ts';
import { compileGlob, GlobError } from './glob-match.ts';
import { fileId, insideBytes, verifyOpened } from './safe-open.ts';

export { MAX_ENTRIES_PER_WALK, MAX_WALK_DEPTH, WALK_BUDGET_MS, type LeftOut, type LocalFile } from './folder-walk.ts';

/** Files one request may name, after globs. */
export const MAX_FILES_PER_REQUEST = 10_000;
const MAX_GLOBS = 64;

export interface AllowedFolders {
  /** Real paths of the folders; empty: local files are off. */
  dirs: readonly string[];
  /** Where they come from, for messages: 'ALLOWED_DIRS' or "the MCP client's roots". */
  origin: string;
}

export interface ResolveLocalOptions {
  allowed: AllowedFolders;
  include?: readonly string[];
  exclude?: readonly string[];
  /** MAX_UPLOAD_BYTES: a file named directly over it is PAYLOAD_TOO_LARGE at once. */
  maxBytes: number;
  maxFiles?: number;
  /** The request's signal: the walk stops when it aborts. */
  signal?: AbortSignal;
  /** Time the walks may take (default WALK_BUDGET_MS). */
  budgetMs?: number;
}

/** What a job item of a local file carries besides its path, to read the very file found. */
export interface LocalFileRef {
  /** "dev:ino" when it was found. */
  id?: string;
  /** The path's bytes (base64) when they are not UTF-8. */
  raw?: string;
}

export function localRefOf(f: LocalFile): LocalFileRef {
  return { id: f.id, ...(f.raw ? { raw: f.raw.toString('base64') } : {}) };
}

/** Real paths of folders given at run time (MCP roots: `file://` URIs or paths); missing ones are left out. */
export async function realFolders(dirs: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const d of dirs) {
    let p = d;
    if (p.startsWith('file://')) {
      try {
        p = decodeURIComponent(new URL(p).pathname);
      } catch {
        continue;
      }
    }
    if (!path.isAbsolute(p)) continue;
    const real = await fs.realpath(p).catch(() => null);
    if (!real) continue;
    const st = await fs.stat(real).catch(() => null);
    if (st?.isDirectory() && !out.includes(real)) out.push(real);
  }
  return out;
}

export function isInside(dirs: readonly string[], real: string): boolean {
  return dirs.some((d) => real === d || real.startsWith(d.endsWith(path.sep) ? d : d + path.sep));
}

const shown = (p: string) => JSON.stringify(p.length > 300 ? `${p.slice(0, 300)}…` : p);

function offError(allowed: AllowedFolders): Error {
  return toolError(
    'URL_NOT_ALLOWED',
    'Local files are off: set ALLOWED_DIRS to a comma-separated list of absolute folders whose files may be ingested (over MCP stdio, the client\'s roots serve when ALLOWED_DIRS is unset)' +
      (allowed.origin !== 'ALLOWED_DIRS' ? `; ${allowed.origin} named no existing folder` : ''),
  );
}

function outsideError(allowed: AllowedFolders, requested: string, why = 'is outside the allowed folders'): Error {
  return toolError('URL_NOT_ALLOWED', `Path ${shown(requested)} ${why} (${allowed.origin}: ${allowed.dirs.join(', ')})`);
}

function relativeError(allowed: AllowedFolders, requested: string): Error {
  const example = path.join(allowed.dirs[0]!, requested);
  return toolError(
    'VALIDATION_ERROR',
    `Path ${shown(requested)} is relative: paths must be absolute and inside ${allowed.origin} (${allowed.dirs.join(', ')}), e.g. ${shown(example)}`,
  );
}

/** Compiles include/exclude globs; a malformed one, or one past a limit, is VALIDATION_ERROR naming it. */
export function compileGlobs(globs: readonly string[] | undefined, field: string): ((rel: string) => boolean) | null {
  if (!globs || globs.length === 0) return null;
  if (globs.length > MAX_GLOBS) throw toolError('VALIDATION_ERROR', `${field}: at most ${MAX_GLOBS} globs`);
  const matchers = globs.map((g) => {
    if (typeof g !== 'string' || g.trim() === '') throw toolError('VALIDATION_ERROR', `${field}: a glob may not be empty`);
    const bare = g.replace(/^!+/, '');
    if (bare.startsWith('/') || bare.split('/').includes('..')) {
      throw toolError('VALIDATION_ERROR', `${field}: glob ${shown(g)} must be relative to the folder given, without '..'`);
    }
    try {
      return compileGlob(g);
    } catch (err) {
      if (!(err instanceof GlobError)) throw err;
      throw toolError('VALIDATION_ERROR', `${field}: glob ${shown(g)} ${err.message}`);
    }
  });
  return (rel) => matchers.some((m) => m(rel));
}

/** The files that `paths` name, and what their walks left out for a reason worth reporting. */
export interface LocalSelection {
  files: LocalFile[];
  leftOut: LeftOut[];
}

/** What one path of a request names: a file (checked, within the size limit) or a folder to walk. */
export type NamedPath = { kind: 'file'; file: LocalFile } | { kind: 'folder'; real: string; id: string };

/**
 * Resolves one requested path. It must be absolute: a relative one would be read against some
 * folder the caller cannot see (the server's, or the first allowed one), so it is refused with the
 * folders that are allowed. Coded errors name the path as given, never where a symlink points.
 */
export async function resolveNamedPath(requested: unknown, allowed: AllowedFolders, maxBytes: number): Promise<NamedPath> {
  if (allowed.dirs.length === 0) throw offError(allowed);
  if (typeof requested !== 'string' || requested === '' || requested.includes('\0')) {
    throw toolError('VALIDATION_ERROR', `Invalid path ${shown(String(requested))}`);
  }
  if (!path.isAbsolute(requested)) throw relativeError(allowed, requested);
  const absolute = path.resolve(requested);
  // Lexically outside: refused before touching the disk.
  const real = await fs.realpath(absolute).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
    return undefined;
  });
  if (real === undefined) throw outsideError(allowed, requested, 'cannot be read');
  if (real === null) {
    throw isInside(allowed.dirs, absolute) ? toolError('NOT_FOUND', `Path ${shown(requested)} does not exist`) : outsideError(allowed, requested);
  }
  if (!isInside(allowed.dirs, real)) {
    throw outsideError(allowed, requested, isInside(allowed.dirs, absolute) ? 'leads outside the allowed folders through a symlink' : 'is outside the allowed folders');
  }
  const st = await fs.stat(real, { bigint: true }).catch(() => null);
  if (!st) throw toolError('NOT_FOUND', `Path ${shown(requested)} does not exist`);
  if (st.isDirectory()) return { kind: 'folder', real, id: fileId(st) };
  if (st.isFile()) {
    if (st.size > BigInt(maxBytes)) {
      throw toolError('PAYLOAD_TOO_LARGE', `File ${shown(requested)} is larger than the upload limit of ${maxBytes} bytes (MAX_UPLOAD_BYTES)`);
    }
    return { kind: 'file', file: { realpath: real, relative: path.basename(real), bytes: Number(st.size), id: fileId(st) } };
  }
  throw outsideError(allowed, requested, 'is not a regular file or folder (devices, FIFOs and sockets are not read)');
}

/**
 * The files that `paths` name, in order, without duplicates: files as named, folders walked in
 * one go (bounded by maxFiles). Jobs walk folders in parts instead (folder-feed.ts).
 */
export async function selectLocalPaths(paths: readonly string[], opts: ResolveLocalOptions): Promise<LocalSelection> {
  const { allowed } = opts;
  if (allowed.dirs.length === 0) throw offError(allowed);
  const include = compileGlobs(opts.include, 'include');
  const exclude = compileGlobs(opts.exclude, 'exclude');
  const maxFiles = opts.maxFiles ?? MAX_FILES_PER_REQUEST;
  const budget = new WalkBudget(opts.signal, opts.budgetMs);
  const out: LocalFile[] = [];
  const seen = new Set<string>();
  const add = (f: LocalFile) => {
    // Keyed by the path's bytes: two names that differ only in invalid UTF-8 are two files.
    const key = f.raw ? `b:${f.raw.toString('base64')}` : f.realpath;
    if (seen.has(key)) return;
    seen.add(key);
    if (out.length >= maxFiles) {
      throw toolError('VALIDATION_ERROR', `The paths name more than ${maxFiles} files; name subfolders or narrow them with include/exclude globs`);
    }
    out.push(f);
  };
  for (const requested of paths) {
    budget.check();
    const named = await resolveNamedPath(requested, allowed, opts.maxBytes);
    if (named.kind === 'folder') await walkFolder(named.real, named.id, { dirs: allowed.dirs, include, exclude, add, budget });
    else add(named.file);
  }
  return { files: out, leftOut: [...budget.leftOut.values()] };
}

/** The files alone (see selectLocalPaths). */
export async function resolveLocalPaths(paths: readonly string[], opts: ResolveLocalOptions): Promise<LocalFile[]> {
  return (await selectLocalPaths(paths, opts)).files;
}

const LEFT_OUT_NOTES: Record<LeftOut['reason'], string> = {
  too_deep: `left out: a folder deeper than ${MAX_WALK_DEPTH} levels below the folder given (MAX_WALK_DEPTH); not walked`,
  outside_link: 'left out: a symlink that leads outside the allowed folders; not followed',
  broken_link: 'left out: a symlink whose target does not exist or cannot be read; not followed',
};

/** Job notes of what the walks left out: the first few by name, the last one with the count of the rest. */
export function leftOutNotes(leftOut: readonly LeftOut[]): Array<{ source: string; note: string }> {
  const notes: Array<{ source: string; note: string }> = [];
  for (const lo of leftOut) {
    lo.examples.forEach((ex, i) => {
      const rest = lo.count - lo.examples.length;
      const more = i === lo.examples.length - 1 && rest > 0 ? `; ${rest} more like it not listed` : '';
      notes.push({ source: ex.path, note: `${LEFT_OUT_NOTES[lo.reason]}${more}` });
    });
  }
  return notes;
}

/**
 * Reads a file found by resolveLocalPaths when its turn comes: opened without following a final
 * symlink and without blocking on a FIFO, then the descriptor checked (inside the allowed folders,
 * and the file found when `ref.id` is known), and read only when it is a regular file within the
 * size limit.
 */
export async function readLocalFile(realpath: string, dirs: readonly string[], origin: string, maxBytes: number, ref: LocalFileRef = {}): Promise<Buffer> {
  const allowed: AllowedFolders = { dirs, origin };
  if (dirs.length === 0) throw offError(allowed);
  const given = ref.raw ? Buffer.from(ref.raw, 'base64') : Buffer.from(realpath);
  // realpath here only normalises a path named directly; the check that counts is on the descriptor.
  const real = await fs.realpath(given, { encoding: 'buffer' }).catch(() => null);
  if (!real) throw toolError('NOT_FOUND', `File ${shown(realpath)} no longer exists`);
  if (!insideBytes(dirs, real)) throw outsideError(allowed, realpath);
  const fh = await fs.open(real, FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK).catch(() => null);
  if (!fh) throw outsideError(allowed, realpath, 'cannot be opened');
  try {
    const v = await verifyOpened(fh, dirs, real, ref.id);
    if (!v.ok) {
      if (v.why === 'replaced') {
        throw toolError('CONFLICT', `File ${shown(realpath)} was replaced since its folder was walked (another file is at that path now); ingest it again`);
      }
      if (v.why === 'gone') throw toolError('NOT_FOUND', `File ${shown(realpath)} no longer exists`);
      throw outsideError(allowed, realpath, 'was moved outside the allowed folders while it was opened (a folder on its path was swapped)');
    }
    const st = v.st;
    if (!st.isFile()) throw outsideError(allowed, realpath, 'is not a regular file');
    if (st.size > BigInt(maxBytes)) {
      throw toolError('PAYLOAD_TOO_LARGE', `File ${shown(realpath)} is larger than the upload limit of ${maxBytes} bytes (MAX_UPLOAD_BYTES)`);
    }
    const buf = Buffer.alloc(Number(st.size));
    let off = 0;
    while (off < buf.length) {
      const { bytesRead } = await fh.read(buf, off, buf.length - off, off);
      if (bytesRead === 0) break;
      off += bytesRead;
    }
    return off === buf.length ? buf : buf.subarray(0, off);
  } finally {
    await fh.close();
  }
}
