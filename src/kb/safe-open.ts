/**
 * Opening a local file or folder so that what was opened is known to be inside the allowed
 * folders, whatever happened to the path meanwhile. Checking a path and then opening it leaves a
 * window: a parent folder swapped for a symlink to elsewhere (rename, renameat2 exchange) between
 * the check and open() sends the open outside, and O_NOFOLLOW guards only the last component. So
 * the check is made on the opened descriptor instead: on Linux the kernel's own path of it
 * (readlink of /proc/self/fd/N, which no later rename can fake) must lie inside an allowed folder,
 * and its device and inode must be the ones the walk recorded. Elsewhere, after opening, each
 * component of the path is lstat'ed again (no symlink may appear) and the last must be the file
 * opened (same device and inode) - narrower than the Linux check, but a swap must then land in
 * the few microseconds between open() and the lstat walk and be undone before it.
 */
import { existsSync, type BigIntStats } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** Whether descriptors can be checked through /proc/self/fd (Linux). */
export const PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd');

/** "dev:ino" of a stat: what identifies one file on this machine while it exists. */
export function fileId(st: Pick<BigIntStats, 'dev' | 'ino'>): string {
  return `${st.dev}:${st.ino}`;
}

const SEP = Buffer.from(path.sep);

/** Whether `p` (bytes of an absolute path) is one of `dirs` or below one. */
export function insideBytes(dirs: readonly string[], p: Buffer): boolean {
  return dirs.some((d) => {
    const dir = Buffer.from(d);
    if (p.equals(dir)) return true;
    const prefix = d.endsWith(path.sep) ? dir : Buffer.concat([dir, SEP]);
    return p.length > prefix.length && p.subarray(0, prefix.length).equals(prefix);
  });
}

/** The path of the descriptor as the kernel sees it (Linux), or null when unavailable. */
export async function descriptorPath(fd: number): Promise<Buffer | null> {
  if (!PROC_FD) return null;
  return fs.readlink(`/proc/self/fd/${fd}`, { encoding: 'buffer' }).catch(() => null);
}

/** A path to open things inside an open folder by name: openat() through /proc on Linux. */
export function throughDescriptor(fd: number, name: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`/proc/self/fd/${fd}/`), name]);
}

export type Verdict = { ok: true; st: BigIntStats } | { ok: false; why: 'outside' | 'replaced' | 'gone' };

/** No component of `p` is a symlink and `p` is the file `st` describes (the non-Linux check). */
async function lstatChainMatches(p: Buffer, st: BigIntStats): Promise<boolean> {
  const text = p.toString('latin1'); // byte-preserving, to split on '/' and map back
  const parts = text.split(path.sep).filter(Boolean);
  let cur = '';
  for (let i = 0; i < parts.length; i++) {
    cur += path.sep + parts[i];
    const ls = await fs.lstat(Buffer.from(cur, 'latin1'), { bigint: true }).catch(() => null);
    if (!ls || ls.isSymbolicLink()) return false;
    if (i === parts.length - 1) return ls.dev === st.dev && ls.ino === st.ino;
  }
  return false;
}

/**
 * Checks an opened descriptor: inside the allowed folders, and the very file recorded when
 * `expectedId` is given. `opened` is the path it was opened by (used off Linux).
 */
export async function verifyOpened(fh: FileHandle, dirs: readonly string[], opened: Buffer, expectedId?: string): Promise<Verdict> {
  const st = await fh.stat({ bigint: true });
  if (PROC_FD) {
    const real = await descriptorPath(fh.fd);
    // A file deleted since it was opened reads "<path> (deleted)": not inside, and refused.
    if (!real || !insideBytes(dirs, real)) return { ok: false, why: real ? 'outside' : 'gone' };
  } else if (!insideBytes(dirs, opened) || !(await lstatChainMatches(opened, st))) {
    return { ok: false, why: 'outside' };
  }
  if (expectedId !== undefined && fileId(st) !== expectedId) return { ok: false, why: 'replaced' };
  return { ok: true, st };
}
