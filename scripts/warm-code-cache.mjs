// Writes the start bundle's V8 code cache (dist/server.cjs.cache, bin/cached-bundle.js) at build
// time, so the first start after `npm ci` is already fast: starts the bin on a free loopback port
// with a throwaway data folder, asks /health once (its functions go into the cache too) and waits
// for the server to write the cache. It runs in an empty folder with a minimal environment, so a
// .env or a REDIS_URL of this machine cannot give it work. A failure only warns: the first real
// start writes the cache instead.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { cacheFileOf } from '../bin/cached-bundle.js';

const DEADLINE_MS = 60_000;

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer().once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function warmCodeCache(root, bundle) {
  if (process.features.require_module !== true) return; // the bin does not run the bundle on this Node
  const cacheFile = cacheFileOf(bundle);
  fs.rmSync(cacheFile, { force: true });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rag-code-cache-'));
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(root, 'bin', 'rag-document-server.js')], {
    cwd: work,
    env: { PATH: process.env.PATH ?? '', HOME: work, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d).length > 4000 && (stderr = stderr.slice(-4000)));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const t0 = Date.now();
  try {
    let answered = false;
    while (!answered && child.exitCode === null) {
      if (Date.now() - t0 > DEADLINE_MS) throw new Error('no /health 200 within 60 s');
      try {
        const res = await fetch(`http://127.0.0.1:${port}/health`);
        await res.arrayBuffer();
        answered = res.status === 200;
      } catch {
        // not listening yet
      }
      if (!answered) await sleep(50);
    }
    while (!fs.existsSync(cacheFile) && child.exitCode === null) {
      if (Date.now() - t0 > DEADLINE_MS) throw new Error('no cache written within 60 s');
      await sleep(50);
    }
    if (!fs.existsSync(cacheFile)) throw new Error(`the server exited (${child.exitCode}): ${stderr.trim()}`);
  } catch (err) {
    console.warn(`code cache not written (the first start writes it): ${err.message}`);
  } finally {
    child.kill('SIGTERM');
    await exited;
    fs.rmSync(work, { recursive: true, force: true });
  }
}
