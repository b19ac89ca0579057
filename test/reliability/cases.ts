/**
 * One case = one request against the running server, measured and judged. The rules: no death
 * (the server answers /health after), no transport failure, no uncoded error, no 5xx but the
 * ones the case names (an origin that fails is a 502), /health within budget all along, RSS of
 * the server's process tree under the ceiling. A 200 passes only where the input is legitimate
 * and the answer's flags are right (a cut text says `truncated`).
 */
import os from 'node:os';
import path from 'node:path';
import { call, measure, Server, stillAlive, type Answer, type ServerOptions } from './harness.ts';
import type { Row } from './table.ts';

export interface Limits {
  healthBudgetMs: number;
  rssCeilingMb: number;
  /** Client-side limit per call: no answer by then is a hang. */
  callTimeoutMs: number;
}

export interface Request {
  path: string;
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

export interface Case {
  group: string;
  input: string;
  request: () => Request | Promise<Request>;
  /** A 200 is a right answer (the input is a real, if extreme, document). */
  legit?: boolean;
  /** Extra check of a 200 body: a reason it is wrong, or null. */
  check200?: (json: Record<string, unknown>) => string | null;
  /** Codes of 5xx answers that are correct here (DOWNLOAD_ERROR for a broken origin). */
  allow5xx?: string[];
  /** Bytes the input weighs, when not the request body (a download; null: not meaningful). */
  bytes?: number | null;
}

/** Where the runner keeps the server; a case that kills it gets a fresh one for the next. */
export interface Ctx {
  server: Server;
  serverOptions: ServerOptions;
  limits: Limits;
}

export const upload = (toolPath: string, bytes: Buffer, filename: string, query = ''): Request => ({
  path: `${toolPath}${query ? `?${query}` : ''}`,
  headers: { 'content-type': 'application/octet-stream', 'content-disposition': `attachment; filename="${filename}"` },
  body: bytes,
});

export const json = (toolPath: string, body: unknown): Request => ({
  path: toolPath,
  headers: { 'content-type': 'application/json' },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

/** process_document's flags: a content cut at the limit says so. */
export function processedFlags(j: Record<string, unknown>): string | null {
  if (typeof j.content !== 'string' || typeof j.content_length !== 'number') return 'no content/content_length';
  if (j.content_length > j.content.length && j.truncated !== true) return `content cut (${j.content.length} of ${j.content_length}) without truncated: true`;
  return null;
}

export function retrievedFlags(j: Record<string, unknown>): string | null {
  if (!Array.isArray(j.results)) return 'no results array';
  return null;
}

/**
 * Paths of this machine must never reach a client. A 200 may quote the document, which can hold
 * any path, so only this server's own folders count there; errors must hold no absolute temp path.
 */
function leakedPath(a: Answer, server: Server): string | null {
  const root = path.resolve(import.meta.dirname, '../..');
  for (const p of [server.dataDir, root]) if (a.body.includes(p)) return p;
  const tmp = `${os.tmpdir()}/`;
  const at = a.body.indexOf(tmp);
  if (a.status >= 400 && at >= 0) return a.body.slice(at, at + 60);
  return null;
}

export function judge(c: Case, a: Answer, server: Server): string | null {
  if (a.failure === 'hang') return `no answer within ${Math.round(a.ms / 1000)} s (hang)`;
  if (a.failure === 'reset') return `connection failed: ${a.body.slice(0, 160)}`;
  const leaked = leakedPath(a, server);
  if (leaked) return `the answer carries an internal file path (${leaked})`;
  if (a.status >= 200 && a.status < 300) {
    if (!c.legit) return `accepted (${a.status}) an input that must be refused`;
    let j: Record<string, unknown>;
    try {
      j = JSON.parse(a.body) as Record<string, unknown>;
    } catch {
      return `200 with a body that is not JSON`;
    }
    return c.check200?.(j) ?? null;
  }
  if (!a.code) return `HTTP ${a.status} without a coded error body: ${a.body.slice(0, 120)}`;
  if (a.status >= 400 && a.status < 500) return null;
  // Any 5xx fails (503 and 504 included: calls go one at a time), but those a case names as the right answer.
  if (c.allow5xx?.includes(a.code)) return null;
  return `HTTP ${a.status} ${a.code}: ${extractMessage(a.body)}`;
}

function extractMessage(body: string): string {
  try {
    return String((JSON.parse(body) as { error?: unknown }).error ?? '').slice(0, 160);
  } catch {
    return body.slice(0, 160);
  }
}

export function answerText(a: Answer): string {
  if (a.failure) return a.failure;
  return a.code ? `${a.status} ${a.code}` : String(a.status);
}

/** Runs one case: measured, judged, the server replaced if it died. */
export async function runCase(ctx: Ctx, c: Case): Promise<Row> {
  const req = await c.request();
  const server = ctx.server;
  const m = await measure(server, () =>
    call(server.base + req.path, { method: req.method, headers: req.headers, body: req.body, timeoutMs: ctx.limits.callTimeoutMs }),
  );
  const a = m.value;
  const reasons: string[] = [];
  const wrong = judge(c, a, server);
  if (wrong) reasons.push(wrong);
  if (m.healthMaxMs > ctx.limits.healthBudgetMs) reasons.push(`/health took ${Math.round(m.healthMaxMs)} ms (budget ${ctx.limits.healthBudgetMs})`);
  if (m.healthFailures > 0) reasons.push(`${m.healthFailures} /health probes failed`);
  if (m.rssPeakMb > ctx.limits.rssCeilingMb) reasons.push(`RSS peak ${Math.round(m.rssPeakMb)} MB over the ${ctx.limits.rssCeilingMb} MB ceiling`);
  if (!(await stillAlive(server))) {
    reasons.unshift(`server died (${JSON.stringify(server.exit)}); log tail: ${server.logTail(300).replace(/\s+/g, ' ')}`);
    await server.stop();
    ctx.server = await Server.start(ctx.serverOptions);
  } else {
    // Rows stay independent: what one case cached does not weigh on the next.
    await call(`${server.base}/v1/cache`, { headers: { 'content-type': 'application/json' }, body: '{"action":"clear"}', timeoutMs: 60_000 });
  }
  const bytes = c.bytes !== undefined ? c.bytes : req.body === undefined ? null : Buffer.byteLength(req.body);
  return {
    group: c.group,
    input: c.input,
    bytes,
    answer: answerText(a),
    ms: a.ms,
    healthMaxMs: m.healthMaxMs,
    rssPeakMb: m.rssPeakMb,
    pass: reasons.length === 0,
    reason: [...reasons, ...(a.status >= 400 ? [`"${extractMessage(a.body)}"`] : [])].join('; ') || undefined,
  };
}
