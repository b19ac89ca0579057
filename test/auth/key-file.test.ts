/**
 * API_KEYS_FILE: JSON and YAML, hashes only, clear errors naming the entry, expiry, plain
 * API_KEYS beside it, the hash-key command, and SIGHUP reading the file again (a broken file
 * keeps the keys as they were).
 */
import fs from 'node:fs';
import t from 'tap';
import { hashKeyCommand } from '../../src/auth/hash-key-cli.ts';
import { hashKey } from '../../src/auth/key-hash.ts';
import { KeyFileError, parseKeyFile } from '../../src/auth/key-file.ts';
import { KeyStore } from '../../src/auth/key-store.ts';
import { loadConfig } from '../../src/config.ts';
import { buildTestApp, tempDir } from '../helper.ts';
import { writeKeyFile } from './fixtures.ts';

const H = hashKey('secret-one');

t.test('JSON and YAML files give the same keys', async (t) => {
  const json = parseKeyFile(JSON.stringify({ keys: [{ name: 'bot', hash: H, actions: ['search'], collections: ['team-a-*', 'shared'] }] }), 'keys.json');
  const yaml = parseKeyFile(`keys:\n  - name: bot\n    hash: ${H}\n    actions: [search]\n    collections: ["team-a-*", shared]\n`, 'keys.yaml');
  t.same(yaml, json);
  t.same(json, [{ name: 'bot', hash: H, actions: ['search'], collections: ['team-a-*', 'shared'], expiresAt: null }]);
  const list = parseKeyFile(`- name: all\n  hash: ${H}\n  actions: [search, ingest, delete, admin]\n  expires_at: 2030-01-01T00:00:00Z\n`, 'keys.yml');
  t.same(list[0]!.collections, ['*'], 'collections default to every collection');
  t.equal(list[0]!.expiresAt, '2030-01-01T00:00:00.000Z');
});

t.test('a wrong entry fails the whole file, naming it', async (t) => {
  const bad: Array<[unknown, RegExp]> = [
    [{ keys: [{ name: 'a', key: 'plain', actions: ['search'] }] }, /key 1: unknown field "key".*never the key/],
    [{ keys: [{ name: 'a', hash: 'md5:abc', actions: ['search'] }] }, /key 1 \(a\): hash must be "sha256:"/],
    [{ keys: [{ name: 'a', hash: H, actions: ['read'] }] }, /actions must be a non-empty list of search, ingest, delete, admin/],
    [{ keys: [{ name: 'a', hash: H, actions: ['search'], collections: ['Team A'] }] }, /collections must be/],
    [{ keys: [{ name: 'a', hash: H, actions: ['search'], expires_at: 'soon' }] }, /expires_at must be an ISO 8601/],
    [{ keys: [{ name: 'a', hash: H, actions: ['search'] }, { name: 'a', hash: hashKey('x'), actions: ['search'] }] }, /"a" is used twice/],
    [{ keys: [{ name: 'a', hash: H, actions: ['search'] }, { name: 'b', hash: H, actions: ['search'] }] }, /same hash/],
    [{ keys: [{ name: 'local', hash: H, actions: ['search'] }] }, /reserved/],
    [{ nothing: true }, /expected a list of keys/],
  ];
  for (const [doc, message] of bad) t.throws(() => parseKeyFile(JSON.stringify(doc), 'k.json'), { name: 'KeyFileError', message }, String(message));
  t.throws(() => parseKeyFile('keys: [\n', 'k.yaml'), KeyFileError, 'YAML that does not parse');
});

t.test('the server will not start on a wrong key file', async (t) => {
  const dir = tempDir(t);
  t.throws(() => loadConfig({ DATA_DIR: dir, API_KEYS_FILE: `${dir}/missing.json` }), { name: 'ConfigError', variable: 'API_KEYS_FILE', message: /cannot be read: ENOENT/ });
  const file = writeKeyFile(t, { keys: [{ name: 'a', hash: 'sha256:zz', actions: ['search'] }] });
  t.throws(() => loadConfig({ DATA_DIR: dir, API_KEYS_FILE: file }), { message: /API_KEYS_FILE is wrong: .*hash must be/ });
});

t.test('authentication: file keys, plain keys, expiry, constant-time lookup of every key', async (t) => {
  let now = Date.parse('2026-06-01T00:00:00Z');
  const file = writeKeyFile(t, { keys: [{ name: 'bot', hash: H, actions: ['search'], collections: ['x'], expires_at: '2026-07-01T00:00:00Z' }] });
  const store = new KeyStore({ apiKeys: ['plain'], API_KEYS_FILE: file }, () => now);
  t.match(store.authenticate('secret-one'), { ok: true, principal: { name: 'bot', actions: ['search'], collections: ['x'] } });
  t.match(store.authenticate('plain'), { ok: true, principal: { name: 'API_KEYS[1]', collections: ['*'] } });
  t.same(store.authenticate('nope'), { ok: false, reason: 'invalid' });
  t.same(store.authenticate(undefined), { ok: false, reason: 'missing' });
  now = Date.parse('2026-07-01T00:00:00Z');
  t.same(store.authenticate('secret-one'), { ok: false, reason: 'expired', name: 'bot' });
  t.equal(new KeyStore({ apiKeys: [], API_KEYS_FILE: '' }).enabled, false, 'no keys: auth off');
});

t.test('hash-key prints a new key and the hash the file takes', async (t) => {
  let out = '';
  t.equal(hashKeyCommand([], (s) => (out += s)), 0);
  const key = /key:\s+(\S+)/.exec(out)![1]!;
  const hash = /hash:\s+(\S+)/.exec(out)![1]!;
  t.match(key, /^rag_[A-Za-z0-9_-]{43}$/);
  t.equal(hash, hashKey(key));
  out = '';
  hashKeyCommand(['given-key'], (s) => (out += s));
  t.match(out, `hash: ${hashKey('given-key')}`);
});

t.test('SIGHUP reads the key file again; a broken file keeps the old keys', async (t) => {
  const file = writeKeyFile(t, { keys: [{ name: 'old', hash: hashKey('old-key'), actions: ['search'] }] });
  const app = await buildTestApp(t, { env: { API_KEYS_FILE: file } });
  const whoami = async (key: string) => (await app.inject({ url: '/v1/whoami', headers: { 'x-api-key': key } })).statusCode;
  t.equal(await whoami('old-key'), 200);
  t.equal(await whoami('new-key'), 401);

  fs.writeFileSync(file, JSON.stringify({ keys: [{ name: 'new', hash: hashKey('new-key'), actions: ['search'] }] }));
  process.emit('SIGHUP', 'SIGHUP');
  t.equal(await whoami('new-key'), 200, 'the new key works');
  t.equal(await whoami('old-key'), 401, 'the removed key is revoked');

  fs.writeFileSync(file, '{ not json');
  process.emit('SIGHUP', 'SIGHUP');
  t.equal(await whoami('new-key'), 200, 'a broken file changes nothing');
});

t.test('health reports auth on with only API_KEYS_FILE, counting its keys', async (t) => {
  const file = writeKeyFile(t, { keys: [{ name: 'a', hash: hashKey('ka'), actions: ['search'] }, { name: 'b', hash: hashKey('kb'), actions: ['admin'] }] });
  const app = await buildTestApp(t, { env: { API_KEYS_FILE: file, API_KEYS: 'plain' } });
  const res = await app.inject({ url: '/v1/system/health', headers: { 'x-api-key': 'ka' } });
  t.equal(res.statusCode, 200);
  t.match(res.json().security, { auth_enabled: true, api_keys: 3 });
  t.same(res.json().features.auth, { available: true });
});
