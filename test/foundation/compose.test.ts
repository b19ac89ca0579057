/**
 * docker/compose.yaml and docker/nginx.conf, read as Docker would read them (docker itself is not
 * needed): Redis with a health check; two API replicas and two workers that run the image's
 * command with --role api / --role worker, share one named volume for DATA_DIR and one REDIS_URL
 * naming the redis service, and whose settings the real CLI parser and configuration accept;
 * nginx in front with both replicas as upstreams, unbuffered job event streams and /mcp; and
 * nothing published beyond the host's loopback.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { configFromCli, parseCli } from '../../src/server.ts';

const DOCKER = path.resolve(import.meta.dirname, '../../docker');
const compose = parse(fs.readFileSync(path.join(DOCKER, 'compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, any>;
  volumes: Record<string, unknown>;
};
const services = compose.services;
const APIS = ['api-1', 'api-2'];
const WORKERS = ['worker-1', 'worker-2'];

/** What compose makes of "${NAME:-default}" when NAME is not set. */
const interpolate = (v: unknown) => String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');
const envOf = (name: string): Record<string, string> =>
  Object.fromEntries(Object.entries(services[name].environment ?? {}).map(([k, v]) => [k, interpolate(v)]));

t.test('the services: redis, two API replicas, two workers and a proxy', async (t) => {
  t.same(Object.keys(services).sort(), ['api-1', 'api-2', 'proxy', 'redis', 'worker-1', 'worker-2']);
  const redis = services.redis;
  t.match(redis.image, /^redis:\d/, 'the official redis image, pinned to a major version');
  t.ok(redis.healthcheck, 'with a health check');
  t.same(redis.healthcheck.test, ['CMD', 'redis-cli', 'ping']);
  t.notOk(redis.ports, 'Redis is not published');
});

t.test('every API and worker: the image command with its role, one REDIS_URL, one shared DATA_DIR volume', async (t) => {
  const dockerfile = fs.readFileSync(path.join(DOCKER, 'Dockerfile'), 'utf8');
  const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
  const urls = new Set<string>();
  for (const name of [...APIS, ...WORKERS]) {
    const s = services[name];
    const role = APIS.includes(name) ? 'api' : 'worker';
    t.same(s.command.slice(0, cmd.length), cmd, `${name} runs the image's command (${cmd.join(' ')})`);
    t.same(s.command.slice(cmd.length), ['--role', role], `${name} is --role ${role}`);
    t.same(s.volumes, ['rag-data:/data'], `${name} mounts the shared volume at /data`);
    t.equal(s.depends_on?.redis?.condition, 'service_healthy', `${name} starts once Redis answers`);
    t.notOk(s.ports, `${name} is not published (only the proxy is)`);
    const env = envOf(name);
    urls.add(env.REDIS_URL!);
    // What the server itself makes of this command line and environment.
    const config = configFromCli(parseCli(s.command.slice(cmd.length)), env);
    t.equal(config.ROLE, role, `${name}: the CLI reads role ${role}`);
    t.equal(config.dataDir, '/data', `${name}: DATA_DIR is the shared volume`);
    t.equal(config.HOST, '0.0.0.0', `${name}: reachable from the proxy on the compose network`);
    t.equal(config.PORT, 8000);
    t.equal(config.TRUST_PROXY, true, `${name}: client addresses come from the proxy`);
    t.ok(config.REDIS_CACHE_MAX_BYTES > 0, `${name}: the shared download cache is on`);
  }
  t.same([...urls], ['redis://redis:6379'], 'one REDIS_URL, naming the redis service');
  t.ok('rag-data' in compose.volumes, 'rag-data is a named volume');
  const image = new Set([...APIS, ...WORKERS].map((n) => services[n].image));
  t.same([...image], ['rag-document-server:latest'], 'all run the same image');
});

t.test('the proxy: both replicas upstream, least connections, SSE and /mcp unbuffered, loopback only', async (t) => {
  const proxy = services.proxy;
  t.match(proxy.image, /^nginx:\d/, 'the official nginx image');
  const mount = (proxy.volumes as string[]).find((v) => v.endsWith(':/etc/nginx/nginx.conf:ro'));
  t.ok(mount, 'its configuration is mounted read-only');
  const conf = fs.readFileSync(path.resolve(DOCKER, mount!.split(':')[0]!), 'utf8').replace(/#.*$/gm, '');
  const upstream = /upstream\s+(\w+)\s*\{([^}]*)\}/.exec(conf);
  t.ok(upstream, 'an upstream block');
  const servers = [...upstream![2]!.matchAll(/^\s*server\s+([^\s;]+)/gm)].map((m) => m[1]);
  t.same(servers, APIS.map((a) => `${a}:8000`), 'the upstream names both API replicas on their port');
  t.match(upstream![2], /^\s*least_conn;/m, 'least connections');
  t.same(Object.keys(proxy.depends_on).sort(), APIS, 'it starts after both replicas');
  const location = (pattern: string) => {
    const at = conf.indexOf(`location ${pattern}`);
    t.ok(at >= 0, `a location ${pattern}`);
    return conf.slice(at, conf.indexOf('}', at));
  };
  const sse = location('~ ^/v1/jobs/[^/]+/events$');
  t.match(sse, /proxy_pass http:\/\/rag_api;/);
  t.match(sse, /proxy_buffering off;/, 'job events are not buffered');
  t.match(sse, /proxy_read_timeout \d+h;/, 'and may stay open for hours');
  t.ok(new RegExp(sse.split('\n')[0]!.replace('location ~ ', '').replace(/\s*\{.*/, '')).test('/v1/jobs/job-123/events'), 'the pattern matches a job events path');
  const mcp = location('/mcp');
  t.match(mcp, /proxy_pass http:\/\/rag_api;/, '/mcp passes through');
  t.match(mcp, /proxy_buffering off;/);
  t.match(location('/'), /proxy_pass http:\/\/rag_api;/, 'everything else too');
  t.match(conf, /proxy_set_header X-Forwarded-For \$remote_addr;/, 'X-Forwarded-For is set, not appended');
  t.match(conf, /listen 8000;/);
  const published = Object.entries(services).flatMap(([, s]) => (s.ports ?? []) as string[]);
  t.same(published, ['127.0.0.1:8000:8000'], 'only the proxy is published, on the host loopback');
});
