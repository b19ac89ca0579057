/**
 * Leftovers of writes a killed process never finished. Temp names carry the writer's pid, so at
 * start-up everything of a dead process (or of our own pid: a container restart reuses pid 1) is
 * removed at once, whatever its age, while the writes in progress of another live worker sharing
 * DATA_DIR are left to it. Only our own name patterns are touched, only inside DATA_DIR.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

/** A live pid's leftovers are still swept after this long: the pid was probably reused. */
const LIVE_PID_GRACE_MS = 60 * 60_000;

/** Wall-clock start of this process: what our own pid wrote before it is a previous life's. */
const PROCESS_STARTED_MS = performance.timeOrigin;

function pidAlive(pid: number, mtimeMs: number): boolean {
  if (pid === process.pid) return mtimeMs >= PROCESS_STARTED_MS;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether a leftover may be removed: 'live' while the pid that wrote it runs (and it is younger
 * than an hour), else 'dead'. Our own pid's entries are live only when written since this
 * process started. A name without a pid (older formats) counts as dead.
 */
export function leftoverOwner(pid: number | null, mtimeMs: number, now = Date.now()): 'live' | 'dead' {
  if (pid === null || !Number.isSafeInteger(pid) || pid <= 0) return 'dead';
  return pidAlive(pid, mtimeMs) && now - mtimeMs < LIVE_PID_GRACE_MS ? 'live' : 'dead';
}

/** A temp file name for DATA_DIR/tmp that the start-up sweep recognises: "<base>.p<pid>.<hex>.tmp". */
export function tempFileName(base: string, hex: string): string {
  return `${base}.p${process.pid}.${hex}.tmp`;
}

// Ours: "<name>.p<pid>.<hex>.tmp" (tempFileName), "<name>.<pid>.<ms>.tmp" (the OCR model cache),
// ".probe-<pid>-<hex>" (the disk probe).
const TEMP_FILE_PATTERNS: readonly RegExp[] = [/\.p(\d+)\.[0-9a-f]+\.tmp$/, /\.(\d+)\.\d{10,}\.tmp$/, /^\.probe-(\d+)-[0-9a-f]+$/];

function ownerPid(name: string): number | null | undefined {
  for (const re of TEMP_FILE_PATTERNS) {
    const m = re.exec(name);
    if (m) return Number(m[1]);
  }
  return undefined;
}

export interface TempSweepReport {
  removed: number;
}

/**
 * Removes our dead temp files under DATA_DIR/tmp (three levels deep) and the disk probe's in
 * DATA_DIR itself. Symbolic links are never followed. Errors are swallowed: a sweep that cannot
 * run (read-only disk) must not stop the server.
 */
export async function sweepDataDirTemp(dataDir: string): Promise<TempSweepReport> {
  const root = path.resolve(dataDir);
  const report: TempSweepReport = { removed: 0 };
  const visit = async (dir: string, depth: number, patternsOnly: boolean) => {
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (!full.startsWith(root + path.sep)) continue;
      const pid = ownerPid(e.name);
      if (pid !== undefined && (e.isFile() || e.isDirectory())) {
        const st = await fs.lstat(full).catch(() => null);
        if (st && leftoverOwner(pid, st.mtimeMs) === 'dead') {
          await fs.rm(full, { recursive: true, force: true }).then(() => report.removed++, () => undefined);
        }
        continue;
      }
      if (!patternsOnly && e.isDirectory() && depth < 3) await visit(full, depth + 1, false);
    }
  };
  await visit(root, 0, true);
  await visit(path.join(root, 'tmp'), 1, false);
  return report;
}
