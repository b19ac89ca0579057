/**
 * Triggers and the lease. Two knowledge bases on one DATA_DIR (what two processes or replicas
 * share: one SQLite file, the source's lease in it): while one syncs a source, the other's
 * on-demand sync answers CONFLICT and its scheduler starts none. The scheduler with an injected
 * clock (its interval an hour, so only the test's ticks count): a due source is synced, one not
 * yet due is not, and a source whose sync is still running is not started twice. Against a
 * loopback origin that holds a page until the test lets it go; no fixed sleeps.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { tempDir } from '../helper.ts';
import { pollUntil } from '../poll.ts';
import { startKb } from './jobs-fixtures.ts';
import { SourceService } from '../../src/kb/sources/source-service.ts';
import type { Services } from '../../src/services.ts';

/** An origin whose /held.txt waits for release(); every request is counted by path. */
async function origin(t: Test) {
  const hits = new Map<string, number>();
  const waiting: Array<() => void> = [];
  let holding = true;
  const server = http.createServer((req, res) => {
    const p = req.url ?? '';
    hits.set(p, (hits.get(p) ?? 0) + 1);
    const answer = () => res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', etag: '"v1"' }).end(`The page at ${p} talks about lighthouses and their keepers.\n`);
    if (p === '/held.txt' && holding) waiting.push(answer);
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    hits: (p: string) => hits.get(p) ?? 0,
    held: () => waiting.length,
    release: () => {
      holding = false;
      for (const w of waiting.splice(0)) w();
    },
  };
}

const ENV = { SOURCES_WATCH: 'false', SOURCES_SCHEDULER: 'false' };

function events(): { log: { info(o: object): void; warn(o: object): void }; started: (id: string) => number } {
  const seen: Array<{ event?: string; source?: string }> = [];
  return {
    log: { info: (o) => seen.push(o), warn: (o) => seen.push(o) },
    started: (id) => seen.filter((e) => e.event === 'kb.source.sync_started' && e.source === id).length,
  };
}

/** A second SourceService on the services' knowledge base, as another process would run one (its own lease owner). */
function serviceOf(t: Test, services: Services, extra: { now?: () => number; scheduler?: boolean } = {}) {
  const ev = events();
  const svc = new SourceService({
    config: { ...services.config, SOURCES_SCHEDULER: extra.scheduler ?? false, SOURCES_SCHEDULER_TICK_SECONDS: 3_600 },
    kb: services.kb,
    probe: (url, call) => services.documents.probe(url, call),
    log: ev.log,
    ...(extra.now ? { now: extra.now } : {}),
  });
  t.teardown(() => svc.close());
  return { svc, started: ev.started };
}

t.test('one sync of a source at a time across two knowledge bases on one DATA_DIR', async (t) => {
  const site = await origin(t);
  const a = await startKb(t, ENV);
  const b = await startKb(t, { ...ENV, DATA_DIR: a.dataDir });
  const { svc: other, started: otherStarted } = serviceOf(t, b.services, { scheduler: true, now: () => Date.now() + 86_400_000 });
  const added = await a.services.sources.add('shared', { kind: 'urls', urls: [`${site.base}/held.txt`], sync_every: 60 }, { sync: false });

  await a.services.sources.sync('shared', added.id);
  await pollUntil(() => site.held() === 1, 'the first process to be syncing (its request held at the origin)', { timeoutMs: 60_000 });
  await t.rejects(b.services.sources.sync('shared', added.id), { code: 'CONFLICT', message: /already running \(in another process\)/ }, 'the second knowledge base does not start a concurrent sync');
  t.equal(other.get('shared', added.id).running, true, 'it sees the sync running (the lease)');
  // Due a day later by its clock, yet the scheduler of the other process leaves it: the lease is held.
  other.onTick();
  await other.settled(added.id);
  t.equal(otherStarted(added.id), 0, "the other process's scheduler starts no sync while the lease is held");
  t.equal(site.hits('/held.txt'), 1, 'one request only: no second sync reached the origin');

  site.release();
  await a.services.sources.settled(added.id);
  const done = a.services.sources.get('shared', added.id);
  t.equal(done.last_status, 'succeeded', JSON.stringify(done));
  t.equal(done.running, false, 'the lease is released at the end');
  // Free again: the other process may sync it now.
  await b.services.sources.sync('shared', added.id, 60_000);
  await b.services.sources.settled(added.id);
  t.equal(b.services.sources.get('shared', added.id).last_status, 'succeeded', 'the second knowledge base syncs once the first is done');
});

t.test('scheduler with an injected clock: due synced, not due left, a running sync not started twice', async (t) => {
  const site = await origin(t);
  const root = fs.realpathSync(tempDir(t, 'src-sched-'));
  fs.writeFileSync(path.join(root, 'a.md'), '# A\nAnchors hold ships.\n');
  const { services } = await startKb(t, { ...ENV, ALLOWED_DIRS: root });
  let offset = 0;
  const { svc, started } = serviceOf(t, services, { scheduler: true, now: () => Date.now() + offset });
  const hourly = await svc.add('sched', { kind: 'folder', path: root, sync_every: 3_600, watch: false });
  const minutely = await svc.add('sched', { kind: 'urls', urls: [`${site.base}/held.txt`], sync_every: 60 }, { sync: false });
  await svc.settled(hourly.id);
  t.equal(svc.get('sched', hourly.id).last_status, 'succeeded', 'the folder source synced once when added');
  t.equal(started(hourly.id), 1);

  // Ten minutes later: the minutely source (never synced) is due, the hourly one is not.
  offset = 10 * 60_000;
  svc.onTick();
  await pollUntil(() => site.held() === 1, 'the due source to be syncing', { timeoutMs: 60_000 });
  t.equal(started(minutely.id), 1, 'the due source is synced');
  t.equal(started(hourly.id), 1, 'the hourly source is not due yet');

  // Its sync still runs (held at the origin): the next ticks, even hours later, do not start another.
  offset = 5 * 3_600_000;
  svc.onTick();
  svc.onTick();
  t.equal(started(minutely.id), 1, 'a running sync is not started twice');
  t.equal(site.hits('/held.txt'), 1, 'the origin saw one request');
  t.equal(started(hourly.id), 2, 'five hours on, the hourly source is due and synced');
  await svc.settled(hourly.id);

  site.release();
  await svc.settled(minutely.id);
  const s = svc.get('sched', minutely.id);
  t.equal(s.last_status, 'succeeded', JSON.stringify(s));
  t.match(s.counts, { new: 1 });
  // Just synced (by the real clock) and the injected one is back to now: nothing is due.
  offset = 0;
  svc.onTick();
  t.equal(started(minutely.id), 1, 'not due right after its sync');
  t.equal(started(hourly.id), 2);
});
