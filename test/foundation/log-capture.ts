/** A pino logger whose JSON lines land in an array, for asserting on logs. */
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

export interface CapturedLogs {
  logger: Logger;
  lines: Record<string, unknown>[];
  events(name: string): Record<string, unknown>[];
}

export function captureLogs(level: pino.Level = 'info'): CapturedLogs {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      cb();
    },
  });
  const logger = pino({ level }, stream);
  return { logger, lines, events: (name) => lines.filter((l) => l.event === name) };
}
