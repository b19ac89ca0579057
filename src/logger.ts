/**
 * Structured JSON logs (pino). Always to stderr — stdout belongs to the MCP stdio protocol — and,
 * when a log folder is configured, also to daily-rotating files there (pino-roll, in-process so a
 * crash cannot lose lines buffered in a worker thread).
 */
import path from 'node:path';
import pino, { type Logger, type DestinationStream } from 'pino';
import type { Config } from './config.ts';

export interface LoggerOptions {
  /** Where JSON lines go instead of stderr (tests capture logs this way). */
  destination?: DestinationStream;
  /** Rotated files kept in the log folder. */
  keepFiles?: number;
}

export interface AppLogger {
  logger: Logger;
  /** Flushes and closes the file stream, if any. */
  close(): Promise<void>;
}

type RollStream = DestinationStream & { end(): void; once(ev: string, cb: () => void): void; flushSync?(): void };

export async function createLogger(config: Pick<Config, 'LOG_LEVEL' | 'logDir'>, opts: LoggerOptions = {}): Promise<AppLogger> {
  const base: pino.LoggerOptions = {
    level: config.LOG_LEVEL,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  const console = opts.destination ?? pino.destination({ fd: 2, sync: true });
  if (!config.logDir) return { logger: pino(base, console), close: async () => {} };

  const { default: pinoRoll } = await import('pino-roll');
  const file = (await pinoRoll({
    file: path.join(config.logDir, 'server'),
    extension: '.log',
    frequency: 'daily',
    dateFormat: 'yyyy-MM-dd',
    mkdir: true,
    limit: { count: opts.keepFiles ?? 14 },
  })) as unknown as RollStream;
  // The logger's own level filters; both streams take everything it emits.
  const logger = pino(base, pino.multistream([{ stream: console, level: 'trace' }, { stream: file, level: 'trace' }]));
  return {
    logger,
    close: () =>
      new Promise<void>((resolve) => {
        file.once('close', () => resolve());
        file.end();
      }),
  };
}
