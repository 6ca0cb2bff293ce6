// Starts an example app binary (examples/chi-app, examples/oauth) for a
// node:test file, on a free loopback port, and stops it: the one helper of
// interop/ts/*.test.mjs and interop/apps/board.test.mjs, so that each
// starts, waits for and stops its app the same way.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Every wait for something that must happen: generous on a busy machine. */
export const WAIT = 30_000;

/** A TCP port of 127.0.0.1 that was free a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Whether url answers 200 within a second, trusting ca (a PEM certificate) for HTTPS. */
function answers(url, ca) {
  return new Promise((resolve) => {
    const get = url.startsWith('https:') ? https.get : http.get;
    const req = get(url, { ca, timeout: 1000 }, (resp) => {
      resp.resume();
      resolve(resp.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/**
 * Starts bin on a free port of 127.0.0.1 (ADDR) and waits, for at most
 * WAIT, until its ready path answers 200. The app cannot report a port the
 * kernel picked, so another process may take the port first: a start that
 * fails is retried on a new port, twice.
 *
 * Options:
 *   name   what the app is called in messages (default 'the example app')
 *   env    more environment variables
 *   ready  the path that answers 200 once it serves (default '/healthz')
 *   audit  when true, AUDIT_LOG is a file in a temporary folder (auditPath)
 *   tls    {cert, key}: PEM files given as TLS_CERT and TLS_KEY; the app
 *          then serves HTTPS, and the wait trusts cert
 *
 * The app is killed when the test process exits, if it is still running.
 */
export async function startApp(bin, { name = 'the example app', env = {}, ready = '/healthz', audit = false, tls } = {}) {
  assert.ok(bin, `the binary of ${name} must be named (its scripts/interop-*.sh builds it)`);
  const dir = audit ? mkdtempSync(join(tmpdir(), 'mcpmw-interop-app-')) : null;
  const ca = tls && readFileSync(tls.cert);
  let lastOutput = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const childEnv = { ...process.env, ...env, ADDR: `127.0.0.1:${port}` };
    const auditPath = audit ? join(dir, `audit-${attempt}.jsonl`) : undefined;
    if (audit) childEnv.AUDIT_LOG = auditPath;
    if (tls) Object.assign(childEnv, { TLS_CERT: tls.cert, TLS_KEY: tls.key });
    const child = spawn(bin, [], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    let done = false;
    exited.then(() => (done = true));
    process.on('exit', () => done || child.kill('SIGKILL')); // never outlive the test

    const origin = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
    for (const deadline = Date.now() + WAIT; !done && Date.now() < deadline; ) {
      if (await answers(`${origin}${ready}`, ca)) {
        return {
          origin,
          port,
          url: new URL(`${origin}/mcp`),
          auditPath,
          output: () => output,
          /** SIGINT, as an operator would; SIGKILL after 10 s. Sets exit: {code, signal}. */
          async stop() {
            if (!done) {
              child.kill('SIGINT');
              const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
              this.exit = await exited;
              clearTimeout(timer);
            }
          },
          /** Removes the audit file's folder. */
          cleanup: () => dir && rmSync(dir, { recursive: true, force: true }),
        };
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    lastOutput = output;
    child.kill('SIGKILL');
    await exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
  throw new Error(`${name} did not start; last output:\n${lastOutput}`);
}
