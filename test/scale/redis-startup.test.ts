/**
 * REDIS_URL set but nothing listens there: the server does not start. It exits 1 with one line
 * naming REDIS_URL and what failed, with the password of the URL hidden.
 */
import t from 'tap';
import { freePort } from './redis-server.ts';
import { runUntilExit } from './api-process.ts';

t.test('an unreachable REDIS_URL at start: exit 1 with a clear message, password hidden', async (t) => {
  const port = await freePort();
  // runUntilExit fails the test if the server neither fails nor exits within a minute.
  const r = await runUntilExit(t, { REDIS_URL: `redis://admin:hunter2-secret@127.0.0.1:${port}/0`, LOG_LEVEL: 'fatal' });
  t.equal(r.code, 1, 'exit code 1');
  t.match(r.stderr, new RegExp(`rag-document-server: Redis is not reachable at REDIS_URL=redis://\\*\\*\\*:\\*\\*\\*@127\\.0\\.0\\.1:${port}/0 \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\)`));
  t.match(r.stderr, /unset REDIS_URL to run in one process without Redis/);
  t.notMatch(r.stderr, /hunter2/, 'the password never appears');
  t.notMatch(r.stderr, /admin/, 'nor the user name');
  t.notMatch(r.stderr, /Server listening/, 'it never listened');
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
  t.equal(r.stdout, '');
});

t.test('a REDIS_URL that is not a redis URL is a configuration error naming the variable, value hidden', async (t) => {
  const r = await runUntilExit(t, { REDIS_URL: 'http://user:pw-secret@example.org' });
  t.equal(r.code, 2);
  t.match(r.stderr, /Invalid configuration: REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL \(got one starting "http"\)/);
  t.notMatch(r.stderr, /pw-secret/);
});
