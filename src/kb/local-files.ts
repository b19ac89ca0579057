/**
 * Local files for the knowledge base: which paths a caller may have ingested, and reading them.
 * A path is resolved with realpath and must land inside one of the allowed folders (ALLOWED_DIRS,
 * or the MCP client's roots over stdio when ALLOWED_DIRS is unset), so neither `..` nor a symlink
 * leads out; only regular files are read (no devices, FIFOs or sockets). Folders are walked
 * recursively, bounded in files, entries and depth, each real folder once (symlink loops end).
 * Messages name the request as given and the allowed folders, never where a symlink points.
 */
import fs from 'node:fs/promises';
import { constants as FS } from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { toolError } from '../errors.ts';

/** Files one request may name, after globs. */
export const MAX_FILES_PER_REQUEST = 10_000;
/** Directory entries one walk may look at (a huge tree is refused rather than read for minutes). */
export const MAX_ENTRIES_PER_WALK = 200_000;
/** Folder depth below a folder given. */
export const MAX_WALK_DEPTH = 32;
const MAX_GLOBS = 64;
const MAX_GLOB_CHARS = 1_000;

export interface AllowedFolders {
  /** Real paths of the folders; empty: local files are off. */
  dirs: readonly string[];
  /** Where they come from, for messages: 'ALLOWED_DIRS' or "the MCP client's roots". */
  origin: string;
}

export interface LocalFile {
  /** The file's real path (inside an allowed folder). */
  realpath: string;
  /** Its path relative to the folder it was found in (or its base name when named directly). */
  relative: string;
  bytes: number;
}

export interface ResolveLocalOptions {
  allowed: AllowedFolders;
  include?: readonly string[];
  exclude?: readonly string[];
  /** MAX_UPLOAD_BYTES: a file named directly over it is PAYLOAD_TOO_LARGE at once. */
  maxBytes: number;
  maxFiles?: number;
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

/** Compiles include/exclude globs; a malformed one is VALIDATION_ERROR naming it. */
export function compileGlobs(globs: readonly string[] | undefined, field: string): ((rel: string) => boolean) | null {
  if (!globs || globs.length === 0) return null;
  if (globs.length > MAX_GLOBS) throw toolError('VALIDATION_ERROR', `${field}: at most ${MAX_GLOBS} globs`);
  const matchers = globs.map((g) => {
    if (typeof g !== 'string' || g.trim() === '') throw toolError('VALIDATION_ERROR', `${field}: a glob may not be empty`);
    if (g.length > MAX_GLOB_CHARS) throw toolError('VALIDATION_ERROR', `${field}: a glob is longer than ${MAX_GLOB_CHARS} characters`);
    if (g.startsWith('/') || g.split('/').includes('..')) {
      throw toolError('VALIDATION_ERROR', `${field}: glob ${shown(g)} must be relative to the folder given, without '..'`);
    }
    try {
      return picomatch(g, { dot: true, strictBrackets: true });
    } catch (err) {
      throw toolError('VALIDATION_ERROR', `${field}: invalid glob ${shown(g)}: ${(err as Error).message}`);
    }
  });
  return (rel) => matchers.some((m) => m(rel));
}

/**
 * The files that `paths` name, in order, without duplicates: files as named, folders walked.
 * Relative paths are taken from the first allowed folder.
 */
export async function resolveLocalPaths(paths: readonly string[], opts: ResolveLocalOptions): Promise<LocalFile[]> {
  const { allowed } = opts;
  if (allowed.dirs.length === 0) throw offError(allowed);
  const include = compileGlobs(opts.include, 'include');
  const exclude = compileGlobs(opts.exclude, 'exclude');
  const maxFiles = opts.maxFiles ?? MAX_FILES_PER_REQUEST;
  const out: LocalFile[] = [];
  const seen = new Set<string>();
  const add = (f: LocalFile) => {
    if (seen.has(f.realpath)) return;
    seen.add(f.realpath);
    if (out.length >= maxFiles) {
      throw toolError('VALIDATION_ERROR', `The paths name more than ${maxFiles} files; name subfolders or narrow them with include/exclude globs`);
    }
    out.push(f);
  };
  for (const requested of paths) {
    if (typeof requested !== 'string' || requested === '' || requested.includes('\0')) {
      throw toolError('VALIDATION_ERROR', `Invalid path ${shown(String(requested))}`);
    }
    const absolute = path.resolve(allowed.dirs[0]!, requested);
    // Lexically outside: refused before touching the disk.
    const real = await fs.realpath(absolute).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
      return undefined;
    });
    if (real === undefined) throw outsideError(allowed, requested, 'cannot be read');
    if (real === null) {
      throw isInside(allowed.dirs, absolute)
        ? toolError('NOT_FOUND', `Path ${shown(requested)} does not exist`)
        : outsideError(allowed, requested);
    }
    if (!isInside(allowed.dirs, real)) {
      throw outsideError(allowed, requested, isInside(allowed.dirs, absolute) ? 'leads outside the allowed folders through a symlink' : 'is outside the allowed folders');
    }
    const st = await fs.stat(real);
    if (st.isDirectory()) {
      await walk(real, allowed.dirs, include, exclude, add);
    } else if (st.isFile()) {
      if (st.size > opts.maxBytes) {
        throw toolError('PAYLOAD_TOO_LARGE', `File ${shown(requested)} is larger than the upload limit of ${opts.maxBytes} bytes (MAX_UPLOAD_BYTES)`);
      }
      add({ realpath: real, relative: path.basename(real), bytes: st.size });
    } else {
      throw outsideError(allowed, requested, 'is not a regular file or folder (devices, FIFOs and sockets are not read)');
    }
  }
  return out;
}

async function walk(
  root: string,
  dirs: readonly string[],
  include: ((rel: string) => boolean) | null,
  exclude: ((rel: string) => boolean) | null,
  add: (f: LocalFile) => void,
): Promise<void> {
  const visited = new Set<string>([root]);
  let entries = 0;
  // Depth-first with an explicit stack; sorted so the order (and job item order) is stable.
  const stack: Array<{ dir: string; rel: string; depth: number }> = [{ dir: root, rel: '', depth: 0 }];
  while (stack.length > 0) {
    const { dir, rel, depth } = stack.pop()!;
    const list = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subfolders: Array<{ dir: string; rel: string; depth: number }> = [];
    for (const entry of list) {
      if (++entries > MAX_ENTRIES_PER_WALK) {
        throw toolError('VALIDATION_ERROR', `The folder holds more than ${MAX_ENTRIES_PER_WALK} entries; name subfolders instead`);
      }
      const full = path.join(dir, entry.name);
      const entryRel = rel ? `${rel}/${entry.name}` : entry.name;
      let real = full;
      let kind: 'file' | 'dir' | null = entry.isFile() ? 'file' : entry.isDirectory() ? 'dir' : null;
      let size = -1;
      if (entry.isSymbolicLink()) {
        // Followed only when its target is inside an allowed folder; otherwise left out silently.
        const target = await fs.realpath(full).catch(() => null);
        if (!target || !isInside(dirs, target)) continue;
        const st = await fs.stat(target).catch(() => null);
        if (!st) continue;
        real = target;
        kind = st.isFile() ? 'file' : st.isDirectory() ? 'dir' : null;
        size = st.size;
      }
      if (kind === 'dir') {
        if (visited.has(real) || depth + 1 > MAX_WALK_DEPTH) continue;
        visited.add(real);
        if (exclude?.(entryRel) || exclude?.(`${entryRel}/`)) continue;
        subfolders.push({ dir: real, rel: entryRel, depth: depth + 1 });
        continue;
      }
      if (kind !== 'file') continue; // FIFOs, sockets, devices
      if (include && !include(entryRel)) continue;
      if (exclude?.(entryRel)) continue;
      if (size < 0) size = (await fs.stat(real).catch(() => null))?.size ?? 0;
      add({ realpath: real, relative: entryRel, bytes: size });
    }
    // Reverse so the first subfolder is walked next (stack order).
    for (let i = subfolders.length - 1; i >= 0; i--) stack.push(subfolders[i]!);
  }
}

/**
 * Reads a file found by resolveLocalPaths when its turn comes: checked again (the tree may have
 * changed since), opened without following a final symlink and without blocking on a FIFO, and
 * read only when it is a regular file within the size limit.
 */
export async function readLocalFile(realpath: string, dirs: readonly string[], origin: string, maxBytes: number): Promise<Buffer> {
  const allowed: AllowedFolders = { dirs, origin };
  if (dirs.length === 0) throw offError(allowed);
  const real = await fs.realpath(realpath).catch(() => null);
  if (!real) throw toolError('NOT_FOUND', `File ${shown(realpath)} no longer exists`);
  if (!isInside(dirs, real)) throw outsideError(allowed, realpath);
  const fh = await fs.open(real, FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK).catch(() => null);
  if (!fh) throw outsideError(allowed, realpath, 'cannot be opened');
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw outsideError(allowed, realpath, 'is not a regular file');
    if (st.size > maxBytes) {
      throw toolError('PAYLOAD_TOO_LARGE', `File ${shown(realpath)} is larger than the upload limit of ${maxBytes} bytes (MAX_UPLOAD_BYTES)`);
    }
    const buf = Buffer.alloc(st.size);
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
