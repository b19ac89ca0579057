/**
 * One sync of a source = reconcile (issue 25). The source is walked (folder), probed with
 * conditional requests (URL list) or crawled (site), and each key is classified: new and changed
 * ones are ingested by one job of the knowledge base's own job runner (the same progress,
 * cancellation, resumption and per-document errors as any ingestion), unchanged ones are skipped,
 * gone ones (file deleted, 404/410, out of scope, removed from the source) are deleted by steps of
 * the same job (after its documents), each with its reason in the document's history: cancelling
 * the job stops them and a restart resumes them with the rest of the job. A transient failure (timeout, 5xx,
 * network) never deletes: the old version stays and the failure is reported.
 *
 * The caller (source-service.ts) holds the source's lease for the whole sync.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import { isToolError, type ToolError } from '../../errors.ts';
import type { Config } from '../../config.ts';
import type { ProbeResponse } from '../../documents/download.ts';
import { parseDocumentUrl } from '../../documents/url-policy.ts';
import { MAX_FILES_PER_REQUEST, readLocalFile, realFolders, selectLocalPaths } from '../local-files.ts';
import { MAX_ENTRIES_PER_WALK } from '../folder-walk.ts';
import type { JobRecord, KnowledgeBaseApi } from '../types.ts';
import type { SyncCounts, SyncStatus } from '../../contract/source-schemas.ts';
import type { SourceDocRow, SourceRow, SourceStore } from './source-store.ts';
// The crawler (with its sitemap XML parser and charset detection, ~0.4 MB of modules) is imported
// by the first site sync, not at every start of the server.
import type { CrawlSettings, PreviousPage } from './site-crawler.ts';
import { prefetchedBodies } from './prefetched.ts';

export type Probe = (url: string, call: { headers: Record<string, string>; signal: AbortSignal }) => Promise<ProbeResponse>;

export interface SyncDeps {
  store: SourceStore;
  kb: KnowledgeBaseApi;
  probe: Probe;
  config: Pick<
    Readonly<Config>,
    'allowedDirs' | 'MAX_UPLOAD_BYTES' | 'MAX_DOWNLOAD_BYTES' | 'INGEST_QUEUE_MAX' | 'CRAWL_USER_AGENT' | 'CRAWL_DELAY_MS' | 'CRAWL_CONCURRENCY' | 'CRAWL_REQUEST_TIMEOUT_MS'
  >;
  /** Called while the sync waits (the caller renews its lease); throwing stops the sync. */
  heartbeat?: () => void;
  /** The sync's job, as soon as it exists. */
  onJob?: (jobId: string) => void;
  log?: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
}

export interface SyncResult {
  status: SyncStatus;
  counts: SyncCounts;
  error: string | null;
  notes: string[];
  job_id: string | null;
}

const ENDED = new Set<JobRecord['status']>(['succeeded', 'partial', 'failed', 'cancelled']);
/** Transient failures named in notes, at most (the rest are counted). */
const NOTE_EXAMPLES = 10;
const JOB_POLL_MS = 5_000;

/** What a key is after the walk. */
type Verdict =
  | { key: string; kind: 'unchanged'; rec: SourceDocRow }
  | { key: string; kind: 'ingest'; isNew: boolean; hash: string | null; etag: string | null; last_modified: string | null; stamp: string | null }
  | { key: string; kind: 'failed'; transient: boolean; message: string };

interface Plan {
  verdicts: Verdict[];
  /** Known keys to delete, with the reason written in the document's history. */
  gone: Array<{ key: string; reason: string }>;
  notes: string[];
  requests: number;
  notModified: number;
  /** Folders: files whose content the walk read and hashed (size or mtime changed, or never seen). */
  hashed?: number;
  /** A folder whose files are too many to name one by one: the job walks the folder itself. */
  folder?: { path: string; include?: string[]; exclude?: string[] };
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** HTTP statuses after which a URL is gone for good (its document is deleted). */
export const GONE_STATUSES = new Set([404, 410]);

/** Statuses another try may cure: never a reason to delete. */
export function transientStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

function transientError(err: unknown): boolean {
  if (isToolError(err)) return (err as ToolError & { transient?: boolean }).transient === true || err.code === 'TIMEOUT';
  const name = (err as { name?: string })?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

export async function runSync(source: SourceRow, seq: number, deps: SyncDeps, signal: AbortSignal): Promise<SyncResult> {
  const known = deps.store.documents(source.id);
  let plan: Plan;
  try {
    plan =
      source.kind === 'folder'
        ? await planFolder(source, known, seq, deps, signal)
        : source.kind === 'urls'
          ? await planUrls(source, known, seq, deps, signal)
          : await planSite(source, known, seq, deps, signal);
  } catch (err) {
    if (signal.aborted) return { status: 'cancelled', counts: emptyCounts(), error: 'cancelled', notes: [], job_id: null };
    // The source could not be read at all (folder missing, start URL refused): nothing is deleted.
    return { status: 'failed', counts: emptyCounts(), error: errText(err), notes: ['nothing was deleted: the source could not be read'], job_id: null };
  }
  return apply(source, plan, known, seq, deps, signal);
}

function emptyCounts(): SyncCounts {
  return { new: 0, changed: 0, unchanged: 0, gone: 0, failed: 0, transient: 0, requests: 0, not_modified: 0 };
}

// ---- folders ----

async function planFolder(source: SourceRow, known: Map<string, SourceDocRow>, seq: number, deps: SyncDeps, signal: AbortSignal): Promise<Plan> {
  const s = source.settings;
  const dirs = await realFolders(deps.config.allowedDirs);
  const allowed = { dirs, origin: 'ALLOWED_DIRS' };
  const maxBytes = deps.config.MAX_UPLOAD_BYTES;
  const { files } = await selectLocalPaths([s.path!], {
    allowed,
    ...(s.include ? { include: s.include } : {}),
    ...(s.exclude ? { exclude: s.exclude } : {}),
    maxBytes,
    maxFiles: MAX_ENTRIES_PER_WALK,
    signal,
  });
  const verdicts: Verdict[] = [];
  const seen = new Set<string>();
  let hashed = 0;
  for (const f of files) {
    signal.throwIfAborted();
    const key = f.realpath;
    seen.add(key);
    const rec = known.get(key);
    try {
      const st = await fs.stat(key);
      const stamp = `${st.size}:${st.mtimeMs}`;
      // Same size and modification time: taken as unchanged without reading it (what rescans cost).
      if (rec?.document_id && rec.stamp === stamp) {
        verdicts.push({ key, kind: 'unchanged', rec: { ...rec, last_seen_sync: seq } });
        continue;
      }
      hashed++;
      const hash = sha256(await readLocalFile(key, dirs, allowed.origin, maxBytes, { id: f.id }));
      if (rec?.document_id && rec.content_sha256 === hash) verdicts.push({ key, kind: 'unchanged', rec: { ...rec, stamp, last_seen_sync: seq } });
      else verdicts.push({ key, kind: 'ingest', isNew: !rec?.document_id, hash, etag: null, last_modified: null, stamp });
    } catch (err) {
      // Vanished between the walk and the read: the next sync finds it gone.
      verdicts.push({ key, kind: 'failed', transient: true, message: errText(err) });
    }
  }
  const gone: Plan['gone'] = [];
  for (const key of known.keys()) {
    if (seen.has(key)) continue;
    const exists = await fs.stat(key).then(() => true, () => false);
    gone.push({ key, reason: exists ? 'left out by the source\'s include/exclude globs' : 'file deleted' });
  }
  const toIngest = verdicts.filter((v) => v.kind === 'ingest').length;
  const namedMax = Math.min(MAX_FILES_PER_REQUEST, Math.max(1, Math.floor(deps.config.INGEST_QUEUE_MAX / 2)));
  return {
    verdicts,
    gone,
    notes: [],
    requests: 0,
    notModified: 0,
    hashed,
    // More files than a job may name: the job walks the folder (in parts) and skips unchanged content by hash.
    ...(toIngest > namedMax ? { folder: { path: s.path!, ...(s.include ? { include: s.include } : {}), ...(s.exclude ? { exclude: s.exclude } : {}) } } : {}),
  };
}

// ---- URL lists ----

function conditionalHeaders(rec: SourceDocRow | undefined): Record<string, string> {
  if (!rec?.document_id) return {};
  return { ...(rec.etag ? { 'if-none-match': rec.etag } : {}), ...(rec.last_modified ? { 'if-modified-since': rec.last_modified } : {}) };
}

async function planUrls(source: SourceRow, known: Map<string, SourceDocRow>, seq: number, deps: SyncDeps, signal: AbortSignal): Promise<Plan> {
  const urls = [...new Set((source.settings.urls ?? []).map((u) => parseDocumentUrl(u).href))];
  const verdicts: Verdict[] = [];
  const gone: Plan['gone'] = [];
  let requests = 0;
  let notModified = 0;
  for (const key of urls) {
    signal.throwIfAborted();
    const rec = known.get(key);
    requests++;
    let res: ProbeResponse;
    try {
      res = await deps.probe(key, {
        headers: { 'user-agent': deps.config.CRAWL_USER_AGENT, ...conditionalHeaders(rec) },
        signal: AbortSignal.any([signal, AbortSignal.timeout(deps.config.CRAWL_REQUEST_TIMEOUT_MS)]),
      });
    } catch (err) {
      signal.throwIfAborted();
      verdicts.push({ key, kind: 'failed', transient: transientError(err), message: errText(err) });
      continue;
    }
    const v = classifyResponse(key, res, rec, seq);
    if (v === 'gone') {
      if (rec) gone.push({ key, reason: `HTTP ${res.status}` });
      else verdicts.push({ key, kind: 'failed', transient: false, message: `HTTP ${res.status}` });
      continue;
    }
    if (v.kind === 'unchanged' && res.status === 304) notModified++;
    // Its body goes to the job's ingestion: a changed URL is downloaded once per sync.
    if (v.kind === 'ingest') prefetchedBodies.put(source.collection, key, res);
    verdicts.push(v);
  }
  const listed = new Set(urls);
  for (const key of known.keys()) if (!listed.has(key)) gone.push({ key, reason: 'removed from the source\'s URLs' });
  return { verdicts, gone, notes: [], requests, notModified };
}

function classifyResponse(key: string, res: ProbeResponse, rec: SourceDocRow | undefined, seq: number): Verdict | 'gone' {
  const etag = res.headers.etag ?? null;
  const lastModified = res.headers['last-modified'] ?? null;
  if (res.status === 304 && rec?.document_id) {
    return { key, kind: 'unchanged', rec: { ...rec, etag: etag ?? rec.etag, last_modified: lastModified ?? rec.last_modified, last_seen_sync: seq } };
  }
  if (GONE_STATUSES.has(res.status)) return 'gone';
  if (res.status < 200 || res.status >= 300) {
    return { key, kind: 'failed', transient: transientStatus(res.status), message: `HTTP ${res.status} from ${new URL(res.final_url).host}` };
  }
  const hash = sha256(res.body);
  if (rec?.document_id && rec.content_sha256 === hash) return { key, kind: 'unchanged', rec: { ...rec, etag, last_modified: lastModified, last_seen_sync: seq } };
  return { key, kind: 'ingest', isNew: !rec?.document_id, hash, etag, last_modified: lastModified, stamp: null };
}

// ---- sites ----

async function planSite(source: SourceRow, known: Map<string, SourceDocRow>, seq: number, deps: SyncDeps, signal: AbortSignal): Promise<Plan> {
  const s = source.settings;
  const settings: CrawlSettings = {
    start_url: s.start_url!,
    scope: s.scope ?? 'prefix',
    max_depth: s.max_depth!,
    max_pages: s.max_pages!,
    max_bytes: s.max_bytes!,
    ...(s.include ? { include: s.include } : {}),
    ...(s.exclude ? { exclude: s.exclude } : {}),
    ...(s.sitemap !== undefined ? { sitemap: s.sitemap } : {}),
  };
  const previous = new Map<string, PreviousPage>();
  for (const [key, rec] of known) {
    if (!rec.document_id) continue;
    previous.set(key, { url: key, ...(rec.etag ? { etag: rec.etag } : {}), ...(rec.last_modified ? { last_modified: rec.last_modified } : {}), ...(rec.content_sha256 ? { hash: rec.content_sha256 } : {}) });
  }
  const { crawlSite } = await import('./site-crawler.ts');
  let requests = 0;
  const fetch = async (url: string, headers: Record<string, string>, sig: AbortSignal) => {
    requests++;
    return deps.probe(url, { headers: { 'user-agent': deps.config.CRAWL_USER_AGENT, ...headers }, signal: AbortSignal.any([sig, AbortSignal.timeout(deps.config.CRAWL_REQUEST_TIMEOUT_MS)]) });
  };
  const verdicts: Verdict[] = [];
  const gone: Plan['gone'] = [];
  const notes: string[] = [];
  const seen = new Set<string>();
  let notModified = 0;
  let limited = false;
  for await (const e of crawlSite(settings, { previous, fetch, signal, userAgent: deps.config.CRAWL_USER_AGENT, delayMs: deps.config.CRAWL_DELAY_MS, concurrency: deps.config.CRAWL_CONCURRENCY })) {
    deps.heartbeat?.();
    if (e.kind === 'limit') {
      limited = true;
      notes.push(e.note);
      continue;
    }
    const key = parseDocumentUrl(e.url).href;
    seen.add(key);
    const rec = known.get(key);
    if (e.kind === 'gone') {
      if (rec?.document_id) gone.push({ key, reason: `HTTP ${e.http_status}` });
      continue;
    }
    if (e.kind === 'error') {
      verdicts.push({ key, kind: 'failed', transient: e.transient, message: `${e.code}: ${e.message}` });
      continue;
    }
    if (e.status === 'not-modified' && rec?.document_id) {
      notModified++;
      verdicts.push({ key, kind: 'unchanged', rec: { ...rec, ...(e.etag ? { etag: e.etag } : {}), ...(e.last_modified ? { last_modified: e.last_modified } : {}), last_seen_sync: seq } });
      continue;
    }
    const hash = e.body ? sha256(e.body) : null;
    if (rec?.document_id && hash && rec.content_sha256 === hash) {
      verdicts.push({ key, kind: 'unchanged', rec: { ...rec, etag: e.etag ?? null, last_modified: e.last_modified ?? null, last_seen_sync: seq } });
    } else {
      if (e.body) prefetchedBodies.put(source.collection, key, { body: e.body, headers: e.content_type ? { 'content-type': e.content_type } : {}, final_url: key });
      verdicts.push({ key, kind: 'ingest', isNew: !rec?.document_id, hash, etag: e.etag ?? null, last_modified: e.last_modified ?? null, stamp: null });
    }
  }
  // Known pages the crawl did not reach are out of scope (or no longer linked) and go, unless the
  // crawl stopped at a limit: then what it did not reach is not known to be gone and stays.
  for (const key of known.keys()) {
    if (seen.has(key)) continue;
    if (limited) continue;
    gone.push({ key, reason: 'out of scope or no longer linked from the site' });
  }
  if (limited) notes.push('the crawl stopped at a limit: pages it did not reach were kept, not deleted');
  return { verdicts, gone, notes, requests, notModified };
}

// ---- applying the plan ----

async function apply(source: SourceRow, plan: Plan, known: Map<string, SourceDocRow>, seq: number, deps: SyncDeps, signal: AbortSignal): Promise<SyncResult> {
  const { store, kb } = deps;
  const counts = emptyCounts();
  counts.requests = plan.requests;
  counts.not_modified = plan.notModified;
  const notes = [...plan.notes];
  const failures: string[] = [];
  const keep: SourceDocRow[] = [];
  const ingest = new Map<string, Extract<Verdict, { kind: 'ingest' }>>();
  for (const v of plan.verdicts) {
    if (v.kind === 'unchanged') {
      counts.unchanged++;
      keep.push(v.rec);
    } else if (v.kind === 'ingest') {
      ingest.set(v.key, v);
    } else {
      counts.failed++;
      if (v.transient) counts.transient++;
      failures.push(`${v.key}: ${v.message}${v.transient ? ' (transient: the old version stays)' : ''}`);
      // Still known: a failed read is not a reason to forget (or delete) the document.
      const rec = known.get(v.key);
      if (rec) keep.push({ ...rec, last_seen_sync: seq });
    }
  }
  store.putDocuments(source.id, keep);

  // Gone keys with a document are deleted by the job (one step each, its reason in the document's
  // history); those without one (never ingested) only lose their record.
  const allDeletes = plan.gone.flatMap((g) => {
    const id = known.get(g.key)?.document_id;
    return id ? [{ source: g.key, source_kind: source.kind === 'folder' ? ('path' as const) : ('url' as const), document_id: id, reason: g.reason }] : [];
  });
  // The job's steps must fit the ingestion queue beside its documents: a sync that finds more
  // gone than fit deletes the first ones and leaves the rest known, for the next sync.
  const room = Math.max(0, Math.floor(deps.config.INGEST_QUEUE_MAX / 2) - (plan.folder ? 0 : ingest.size));
  const deletes = allDeletes.slice(0, room);
  if (allDeletes.length > deletes.length) notes.push(`${allDeletes.length - deletes.length} more gone document(s) are left for the next sync (INGEST_QUEUE_MAX bounds one job)`);
  store.removeDocuments(
    source.id,
    plan.gone.filter((g) => !known.get(g.key)?.document_id).map((g) => g.key),
  );

  let jobId: string | null = null;
  let cancelled = false;
  if (ingest.size > 0 || plan.folder || deletes.length > 0) {
    const req =
      ingest.size === 0 && !plan.folder
        ? {}
        : source.kind === 'folder'
          ? plan.folder
            ? { paths: [plan.folder.path], ...(plan.folder.include ? { include: plan.folder.include } : {}), ...(plan.folder.exclude ? { exclude: plan.folder.exclude } : {}) }
            : { paths: [...ingest.keys()] }
          : { urls: [...ingest.keys()] };
    let job: JobRecord;
    try {
      job = await kb.addDocuments(source.collection, { ...req, ...(deletes.length > 0 ? { deletes } : {}), signal });
    } catch (err) {
      if (source.kind !== 'folder') prefetchedBodies.forget(source.collection, ingest.keys());
      // The queue is full or storage failed: nothing ingested, nothing deleted; the next sync tries again.
      return { status: 'failed', counts: { ...counts, failed: counts.failed + ingest.size }, error: `sync job refused: ${errText(err)}`, notes, job_id: null };
    }
    jobId = job.id;
    deps.onJob?.(job.id);
    while (!ENDED.has(job.status)) {
      deps.heartbeat?.();
      if (signal.aborted && !cancelled) {
        cancelled = true;
        await Promise.resolve(kb.cancelJob(job.id)).catch(() => undefined);
      }
      job = await kb.waitForJob(job.id, JOB_POLL_MS);
    }
    if (job.status === 'cancelled') cancelled = true;
    // Bodies the job did not take (cancelled before it reached them) are not kept.
    if (source.kind !== 'folder') prefetchedBodies.forget(source.collection, ingest.keys());
    const records: SourceDocRow[] = [];
    const removed: string[] = [];
    let notDeleted = 0;
    for (const item of job.items) {
      if (item.delete) {
        if (item.stage === 'done') counts.gone++;
        if (item.stage === 'done' || item.stage === 'skipped') removed.push(item.source);
        else if (item.stage === 'failed') failures.push(`${item.source}: not deleted (${item.error?.message ?? 'failed'})`);
        else notDeleted++;
        continue;
      }
      const v = ingest.get(item.source);
      if (!v) {
        // A folder job's file the plan found unchanged (or one it did not see): recorded as known.
        if (plan.folder && item.document_id && !known.get(item.source)?.document_id && (item.stage === 'done' || item.stage === 'skipped')) {
          records.push({ key: item.source, document_id: item.document_id, content_sha256: null, etag: null, last_modified: null, stamp: null, last_seen_sync: seq });
        }
        continue;
      }
      ingest.delete(item.source);
      if ((item.stage === 'done' || item.stage === 'skipped') && item.document_id) {
        if (item.stage === 'skipped') counts.unchanged++;
        else if (v.isNew) counts.new++;
        else counts.changed++;
        records.push({ key: v.key, document_id: item.document_id, content_sha256: v.hash, etag: v.etag, last_modified: v.last_modified, stamp: v.stamp, last_seen_sync: seq });
      } else {
        counts.failed++;
        const message = item.error?.message ?? item.note ?? item.stage;
        const transient = /timed? ?out|HTTP 5\d\d|Network error|ECONN|EAI_AGAIN/i.test(message);
        if (transient) counts.transient++;
        failures.push(`${v.key}: ${message}`);
        // The old version (if any) stays known with its old hash, so the next sync tries again.
        const rec = known.get(v.key);
        if (rec) records.push({ ...rec, last_seen_sync: seq });
      }
    }
    // Items the job never reached (cancelled before its walk got there).
    for (const v of ingest.values()) {
      counts.failed++;
      failures.push(`${v.key}: not ingested (${job.status})`);
      const rec = known.get(v.key);
      if (rec) records.push({ ...rec, last_seen_sync: seq });
    }
    store.putDocuments(source.id, records);
    // Deleted ones are forgotten; the rest stay known, so the next sync deletes them.
    store.removeDocuments(source.id, removed);
    if (notDeleted > 0) notes.push(`${notDeleted} gone document(s) not deleted: the sync was ${job.status}`);
  }

  if (failures.length > 0) {
    notes.push(...failures.slice(0, NOTE_EXAMPLES));
    if (failures.length > NOTE_EXAMPLES) notes.push(`... and ${failures.length - NOTE_EXAMPLES} more`);
  }
  const status: SyncStatus = cancelled || signal.aborted ? 'cancelled' : counts.failed > 0 ? 'partial' : 'succeeded';
  const error = counts.failed > 0 ? `${counts.failed} document(s) failed (${counts.transient} transient, kept as they were)` : null;
  deps.log?.info(
    { event: 'kb.source.synced', source: source.id, collection: source.collection, status, ...counts, ...(plan.hashed !== undefined ? { files_seen: plan.verdicts.length, files_hashed: plan.hashed } : {}) },
    'source synced',
  );
  return { status, counts, error, notes, job_id: jobId };
}
