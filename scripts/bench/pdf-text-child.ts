/**
 * One side of bench:pdf-text in a process of its own (argv[2]: 'ours' or 'base'): each message
 * { file } extracts that file once and answers with the call's wall and CPU milliseconds. A
 * process per side is what each gets in use (our extraction runs in child processes; pdf-parse in
 * its caller's), and keeps the two pdf.js copies from sharing one heap, one GC and the
 * globalThis.pdfjsWorker slot.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { baselineFor, closeImpls, oursFor } from './extract-impls.ts';

export interface PdfTextRequest {
  file: string;
}
export type PdfTextReply = { wall: number; cpu: number; units: number | null } | { error: string };

const side = process.argv[2];
const fn = side === 'ours' ? await oursFor('pdf') : await baselineFor('pdf');
process.on('message', (msg: PdfTextRequest | 'close') => {
  if (msg === 'close') {
    void closeImpls().finally(() => process.exit(0));
    return;
  }
  void (async (): Promise<PdfTextReply> => {
    const bytes = fs.readFileSync(msg.file);
    const u0 = process.cpuUsage();
    const t0 = performance.now();
    const out = await fn(bytes, msg.file);
    const wall = performance.now() - t0;
    const u = process.cpuUsage(u0);
    return { wall, cpu: (u.user + u.system) / 1000, units: out.units };
  })().then(
    (reply) => process.send!(reply),
    (err: unknown) => process.send!({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
});
process.send!('ready');
