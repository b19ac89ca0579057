/**
 * File-system errors as clients may see them. Node's fs errors carry the path they failed on
 * ("ENOSPC: no space left on device, open '/srv/data/indexes/...'"), which must never reach a
 * client: these helpers name the condition (disk full, read-only, permission) and drop the path.
 */
import { isToolError, toolError, type ToolError } from '../errors.ts';

/** The conditions of the data folder that make writes fail, whatever file was being written. */
export type DiskCondition = 'full' | 'read-only' | 'permission-denied';

const CONDITION_BY_CODE: Readonly<Record<string, DiskCondition>> = {
  ENOSPC: 'full',
  EDQUOT: 'full',
  EROFS: 'read-only',
  EACCES: 'permission-denied',
  EPERM: 'permission-denied',
};

const errnoCode = (err: unknown): string | undefined =>
  err && typeof err === 'object' && typeof (err as { code?: unknown }).code === 'string' ? (err as { code: string }).code : undefined;

/** Which disk condition an error (or the error it wraps) stands for, or null when it is no disk trouble. */
export function diskCondition(err: unknown): DiskCondition | null {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = errnoCode(e);
    if (code && CONDITION_BY_CODE[code]) return CONDITION_BY_CODE[code];
  }
  return null;
}

// An absolute POSIX path of two or more segments, not part of a URL ("https://h/a/b") or a ratio.
const ABSOLUTE_PATH_RE = /(?<![\w.:/\\<>-])\/(?:[\w.@+~-]+\/)+[\w.@+~-]*/g;

/**
 * Replaces absolute file paths in a message with "<path>"; `named` folders first become their
 * setting's name ([MODELS_DIR, '/srv/models'] turns '/srv/models/x' into 'MODELS_DIR/x').
 */
export function redactPaths(text: string, named: ReadonlyArray<readonly [name: string, dir: string]> = []): string {
  let out = text;
  for (const [name, dir] of named) if (dir.length > 1) out = out.split(dir).join(name);
  return out.replace(ABSOLUTE_PATH_RE, '<path>');
}

/** A short, path-free description of a file-system error, for logs and public messages. */
export function describeFsError(err: unknown): string {
  const condition = diskCondition(err);
  if (isToolError(err) && condition === null) return redactPaths(err.message).slice(0, 300);
  if (condition === 'full') return 'no space left on the data disk';
  if (condition === 'read-only') return 'the data folder is on a read-only file system';
  if (condition === 'permission-denied') return 'the data folder is not writable (permission denied)';
  const code = errnoCode(err);
  if (code === 'ENOENT') return 'a file of the data folder is missing';
  const message = err instanceof Error ? err.message : String(err);
  return redactPaths(message).slice(0, 300);
}

/** STORAGE_UNAVAILABLE naming what could not be done and why, without any path. */
export function storageError(what: string, err: unknown): ToolError {
  return toolError('STORAGE_UNAVAILABLE', `${what}: ${describeFsError(err)} (DATA_DIR)`, err);
}
