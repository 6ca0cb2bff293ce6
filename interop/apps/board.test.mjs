// Renders the example app's MCP App, ui://notes/board, in headless Chromium
// inside a host built on the official AppBridge (host.js), and drives it as
// a writer and as a reader: over HTTP/1.1 to the app serving plain HTTP,
// then over HTTP/2 to the app serving HTTPS itself (TLS_CERT, TLS_KEY).
// Every request the page makes to /mcp is checked to have gone over the
// run's protocol (Chrome's DevTools protocol reports each response's).
// Checks what issue 29 item 5 lists: the host enforces
// visibility (the model's tool list lacks notes_board_state, the app calls
// it), a writer's note appears in the app, in notes_list and as exactly
// one note_create audit record with its text redacted; a reader has no Add
// button, and a note_create forced from the app is refused 403 and shown;
// a note the tool itself refuses (isError) is shown and changes nothing.
// A screenshot of each state is saved and its path printed.
//
// Run by scripts/interop-apps.sh, which installs the pinned packages from
// package-lock.json into a cache, builds the app and a TLS certificate and
// sets:
//
//   MCPMW_CHI_APP     the example app binary
//   MCPMW_CHROMIUM    the browser (default /usr/bin/chromium, Debian's)
//   MCPMW_TLS_CERT, MCPMW_TLS_KEY   a certificate for 127.0.0.1 and its key
//                     (PEM), given to the HTTP/2 run's app as TLS_CERT, TLS_KEY
//   MCPMW_APPS_SHOTS  where the screenshots go (default: a new temporary folder)

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';
import { chromium } from 'playwright-core';

import { WAIT, startApp } from '../ts/app.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const UI_MIME = 'text/html;profile=mcp-app';
const UI_EXTENSION = 'io.modelcontextprotocol/ui';

/** The app each run talks to, by transport: plain HTTP, and HTTPS with HTTP/2. */
const apps = {};
let browser;
let hostPage;
let shots;
let profile;

before(async () => {
  hostPage = await bundleHost();
  apps['HTTP/1.1'] = await startApp(process.env.MCPMW_CHI_APP, { audit: true });
  apps['HTTP/2'] = await startApp(process.env.MCPMW_CHI_APP, {
    audit: true,
    tls: { cert: process.env.MCPMW_TLS_CERT, key: process.env.MCPMW_TLS_KEY },
  });
  shots = process.env.MCPMW_APPS_SHOTS || mkdtempSync(join(tmpdir(), 'mcpmw-apps-shots-'));
  mkdirSync(shots, { recursive: true });
  console.log(`screenshots: ${shots}`);
  profile = mkdtempSync(join(tmpdir(), 'mcpmw-apps-chromium-'));
  // A persistent context, so that the profile is the fresh folder made
  // here; the flags keep the browser from reaching anything but the app.
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.MCPMW_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    ignoreHTTPSErrors: true, // the app's certificate is made for the run
    viewport: { width: 900, height: 700 },
    timeout: WAIT,
  });
});

after(async () => {
  await browser?.close();
  for (const app of Object.values(apps)) await app.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

// --- the host page -----------------------------------------------------------

/** The host page: host.js and its packages bundled into one HTML document. */
async function bundleHost() {
  const out = await build({
    entryPoints: [join(HERE, 'host.js')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'chrome120',
    write: false,
    logLevel: 'error',
  });
  const js = out.outputFiles[0].text.replaceAll('</script', '<\\/script');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>mcpmw test host</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 16px; background: #f6f8fa; color: #1f2328; }
  h1 { font-size: 15px; margin: 0 0 8px; color: #59636e; }
  iframe { width: 100%; height: 320px; background: #fff; }
  iframe.bordered { border: 1px solid #d1d9e0; border-radius: 8px; }
  iframe.borderless { border: none; }
</style></head>
<body><h1>MCP Apps test host (AppBridge) — notes_list's UI</h1><div id="app"></div>
<script type="module">${js}</script></body></html>`;
}

/** Opens the host page at origin as the bearer of token, in theme, and waits for the board. */
async function openHost(origin, token, theme = 'light') {
  const page = await browser.newPage();
  page.setDefaultTimeout(WAIT);
  // The host page is served to the browser from the app's own origin (as a
  // real web host serves its page from its own), without touching the app.
  await page.route(`${origin}/__host/**`, (route) =>
    route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: hostPage }),
  );
  // Every response to the page's requests to the app, with the protocol
  // the browser spoke for it.
  const responses = [];
  const cdp = await browser.newCDPSession(page);
  cdp.on('Network.responseReceived', (e) => {
    if (e.response.url.startsWith(`${origin}/mcp`)) responses.push(e.response.protocol);
  });
  await cdp.send('Network.enable');
  await page.goto(`${origin}/__host/?token=${encodeURIComponent(token)}&theme=${theme}`);
  await page.waitForFunction(() => window.__host?.ready || window.__host?.error, null, { timeout: WAIT });
  const error = await page.evaluate(() => window.__host.error);
  assert.equal(error, null, `the host failed: ${error}`);
  const frame = page.frameLocator('iframe[title="notes board"]');
  await frame.locator('#count').filter({ hasText: /\d+ notes?/ }).waitFor();
  return {
    page,
    frame,
    host: () => page.evaluate(() => JSON.parse(JSON.stringify(window.__host))),
    /** Asserts that every request to /mcp so far went over want ('http/1.1' or 'h2'). */
    spoke(want) {
      assert.ok(responses.length > 0 && responses.every((p) => p === want), `the page's /mcp responses came over ${responses}, not all ${want}`);
    },
  };
}

/** The board's frame, for code run inside the app. */
function boardFrame(page) {
  const f = page.frames().find((fr) => fr.parentFrame() === page.mainFrame());
  assert.ok(f, 'the board frame');
  return f;
}

async function shoot(page, name) {
  const path = join(shots, name);
  await page.screenshot({ path, fullPage: true });
  console.log(`screenshot: ${path}`);
}

// --- the scenario -------------------------------------------------------------------

const TRANSPORTS = ['HTTP/1.1', 'HTTP/2'];
/** The notes each run's writer added, by transport. */
const added = {};

for (const proto of TRANSPORTS) {
  test(`the notes board over ${proto}`, { timeout: 180_000 }, async (t) => {
    const tls = proto === 'HTTP/2';
    const { origin } = apps[proto];
    const tag = tls ? 'h2' : 'h1';
    const wire = tls ? 'h2' : 'http/1.1'; // as Chrome names them
    // Angle brackets and an ampersand, to see the board shows text as text.
    const marker = `from the browser over ${proto} <b>not bold</b> & 7d41-${tag}`;
    added[proto] = marker;
    let notesAfterWriter;

    await t.test('writer: the host enforces visibility and renders the board', async () => {
      const { page, frame, host, spoke } = await openHost(origin, 'writer-token');
      const h = await host();
      const listed = Object.fromEntries(h.serverTools.map((x) => [x.name, x.visibility]));
      assert.deepEqual(listed.notes_board_state, ['app'], 'the server lists the app-only tool to a UI host');
      assert.ok(!h.modelTools.includes('notes_board_state'), `the model's tools: ${h.modelTools}`);
      assert.ok(h.modelTools.includes('notes_list') && h.modelTools.includes('note_create'), `the model's tools: ${h.modelTools}`);
      assert.equal(h.resource.uri, 'ui://notes/board');
      assert.equal(h.resource.mimeType, UI_MIME);
      assert.deepEqual(h.resource.ui, { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true });
      assert.match(h.resource.csp, /connect-src 'none'/);
      for (const ex of h.wire.filter((e) => e.method === 'POST')) {
        assert.deepEqual(ex.extensions?.[UI_EXTENSION], { mimeTypes: [UI_MIME] }, `${ex.rpcMethod} declares the UI extension`);
      }
      assert.ok(
        h.appCalls.some((c) => c.name === 'notes_board_state' && c.outcome === 'ok'),
        `the app called notes_board_state: ${JSON.stringify(h.appCalls)}`,
      );
      // The model may not call the app-only tool: the host refuses it and
      // nothing goes on the wire.
      const sent = h.wire.length;
      await assert.rejects(
        page.evaluate(() => window.__host.callAsModel('notes_board_state')),
        /not visible to the model/,
      );
      assert.equal((await host()).wire.length, sent);

      // The frame is sandboxed to an opaque origin, and the CSP from
      // _meta.ui.csp is in force in it: a fetch of the app's own origin is
      // a connect-src violation (or, were there no CSP, a plain CORS
      // failure after at most 10 s).
      assert.equal(await boardFrame(page).evaluate(() => self.origin), 'null');
      const violated = await boardFrame(page).evaluate(
        (url) =>
          new Promise((resolve) => {
            document.addEventListener('securitypolicyviolation', (e) => resolve(e.effectiveDirective), { once: true });
            fetch(url).catch(() => setTimeout(() => resolve('no violation'), 10_000));
          }),
        `${origin}/healthz`,
      );
      assert.equal(violated, 'connect-src');
      // The board told the host its size, and the host sized the frame.
      await page.waitForFunction(() => window.__host.sizeChanges > 0);
      // It listens to its host alone: a message from any other window (here
      // the frame itself) is ignored. Messages arrive in order, so when the
      // second one reaches this listener the board has seen the first.
      const theme = await boardFrame(page).evaluate(
        () =>
          new Promise((resolve) => {
            const done = (e) => {
              if (e.data === 'probe done') resolve(document.documentElement.dataset.theme);
            };
            window.addEventListener('message', done);
            window.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/host-context-changed', params: { theme: 'dark' } }, '*');
            window.postMessage('probe done', '*');
          }),
      );
      assert.equal(theme, 'light', 'a message from another window changed the board');

      const addButton = frame.getByRole('button', { name: 'Add' });
      await addButton.waitFor();
      const before = await frame.locator('#notes li').count();
      await shoot(page, `${tag}-1-writer-board.png`);

      await frame.getByRole('textbox', { name: 'New note' }).fill(marker);
      await addButton.click();
      const item = frame.locator('#notes li').filter({ hasText: marker });
      await item.waitFor();
      assert.equal(await frame.locator('#notes li').count(), before + 1);
      assert.equal(await frame.locator('#notes li b').count(), 0, 'note text is shown as text, not markup');
      assert.equal(await frame.getByRole('textbox', { name: 'New note' }).inputValue(), '');
      assert.equal(await frame.locator('#error').textContent(), '');
      await shoot(page, `${tag}-2-writer-added.png`);

      const after = await host();
      const creates = after.wire.filter((e) => e.rpcMethod === 'tools/call' && e.tool === 'note_create');
      assert.deepEqual(creates.map((e) => e.status), [200], 'exactly one note_create went to the server');
      const listed2 = await page.evaluate(() => window.__host.callAsModel('notes_list', {}));
      assert.ok(!listed2.isError);
      assert.ok(
        listed2.structuredContent.notes.some((n) => n.text === marker),
        `notes_list holds the note: ${JSON.stringify(listed2.structuredContent)}`,
      );
      notesAfterWriter = before + 1;
      if (tls) {
        const protocols = await page.evaluate(() =>
          performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/mcp')).map((e) => e.nextHopProtocol),
        );
        assert.ok(protocols.length > 0 && protocols.every((p) => p === 'h2'), `the page's protocols: ${protocols}`);
      }
      spoke(wire);
      // The board answers the host's teardown request.
      assert.deepEqual(await page.evaluate(() => window.__host.teardown()), {});
      await page.close();
    });

    await t.test('reader: no Add button; a forced note_create is refused 403 and shown', async () => {
      // In the dark: the board follows the host's theme.
      const { page, frame, host, spoke } = await openHost(origin, 'reader-token', 'dark');
      assert.equal(await boardFrame(page).evaluate(() => document.documentElement.dataset.theme), 'dark');
      const h = await host();
      assert.ok(!h.modelTools.includes('notes_board_state'), `the model's tools: ${h.modelTools}`);
      assert.ok(!h.modelTools.includes('note_create'), 'a reader is not offered note_create');
      await frame.locator('#notes li').filter({ hasText: marker }).waitFor();
      const shown = await frame.locator('#notes li').count();
      assert.equal(shown, notesAfterWriter, "the reader sees the team's notes");
      assert.equal(await frame.getByRole('button').count(), 0, 'no button at all');
      assert.equal(await frame.getByRole('textbox').count(), 0, 'no text field');
      await frame.getByText('Read-only').waitFor();
      await shoot(page, `${tag}-3-reader-board.png`);

      // A host that let the reader through: the app's own add path, driven
      // from inside the frame.
      const ok = await boardFrame(page).evaluate(() => addNote('forced by a reader'));
      assert.equal(ok, false);
      const error = frame.getByRole('alert');
      await error.filter({ hasText: 'Could not add the note' }).waitFor();
      const message = await error.textContent();
      await shoot(page, `${tag}-4-reader-refused.png`);

      const after = await host();
      const creates = after.wire.filter((e) => e.rpcMethod === 'tools/call' && e.tool === 'note_create');
      assert.deepEqual(creates.map((e) => e.status), [403], 'the server refused note_create with a 403');
      assert.ok(
        after.appCalls.some((c) => c.name === 'note_create' && c.outcome === 'error'),
        JSON.stringify(after.appCalls),
      );
      // The host passes on the client's error, which names the missing scope.
      assert.match(message, /^Could not add the note: .*write/);
      assert.equal(await frame.locator('#notes li').count(), shown, 'the board changed nothing');
      const listed = await page.evaluate(() => window.__host.callAsModel('notes_list', {}));
      assert.equal(listed.structuredContent.notes.length, shown);
      assert.ok(!listed.structuredContent.notes.some((n) => n.text.includes('forced')));
      spoke(wire);
      await page.close();
    });

    await t.test('writer: a note the tool refuses (isError) is shown and changes nothing; corrected, it goes in; the model adds one', async () => {
      const { page, frame, host, spoke } = await openHost(origin, 'writer-token');
      const shown = await frame.locator('#notes li').count();
      // 1000 characters, within the field's limit, but 3000 bytes: the
      // tool answers isError, not the permission gate.
      // Entered with the Enter key, where the first add clicked.
      await frame.getByRole('textbox', { name: 'New note' }).fill('€'.repeat(1000));
      await frame.getByRole('textbox', { name: 'New note' }).press('Enter');
      const error = frame.getByRole('alert');
      await error.filter({ hasText: 'Could not add the note' }).waitFor();
      assert.match(await error.textContent(), /^Could not add the note: text must be 1 to 2000 bytes long/);
      assert.equal(await frame.locator('#notes li').count(), shown, 'the board changed nothing');
      assert.equal(await frame.getByRole('textbox', { name: 'New note' }).inputValue(), '€'.repeat(1000), 'the text is kept, to be corrected');
      await shoot(page, `${tag}-5-writer-rejected.png`);
      // Corrected, it goes in, and the error goes away.
      const fixed = `corrected over ${proto} 7d41-${tag}`;
      await frame.getByRole('textbox', { name: 'New note' }).fill(fixed);
      await frame.getByRole('textbox', { name: 'New note' }).press('Enter');
      await frame.locator('#notes li').filter({ hasText: fixed }).waitFor();
      assert.equal(await frame.locator('#error').textContent(), '', 'the error is gone'); // and so hidden from getByRole
      const after = await host();
      assert.deepEqual(
        after.appCalls.filter((c) => c.name === 'note_create').map((c) => c.outcome),
        ['isError', 'ok'],
      );
      // The model adds a note with the board on screen: the host sends the
      // call's result to the app, which refreshes.
      const byModel = `from the model over ${proto} 7d41-${tag}`;
      const res = await page.evaluate((text) => window.__host.callAsModelShown('note_create', { text }), byModel);
      assert.ok(!res.isError, JSON.stringify(res));
      await frame.locator('#notes li').filter({ hasText: byModel }).waitFor();
      assert.equal(await frame.locator('#notes li').count(), shown + 2);
      spoke(wire);
      await page.close();
    });
  });
}

for (const proto of TRANSPORTS) {
  test(`the app behind the ${proto} run audited exactly one note_create per add (and per refusal), its text redacted`, { timeout: 60_000 }, async () => {
    const app = apps[proto];
    await app.stop();
    assert.equal(app.exit?.code, 0, `the app stops cleanly on SIGINT; output:\n${app.output()}`);
    const audit = readFileSync(app.auditPath, 'utf8');
    const creates = [];
    const boards = [];
    for (const line of audit.split('\n')) {
      if (!line) continue;
      const rec = JSON.parse(line);
      if (rec.method !== 'tools/call') continue;
      if (rec.tool === 'note_create') creates.push([rec.caller, rec.outcome, rec.status, rec.arguments?.text, rec.protocol_version]);
      if (rec.tool === 'notes_board_state') boards.push([rec.caller, rec.outcome]);
    }
    const want = !added[proto]
      ? []
      : [
          ['writer', 'ok', 200, '[redacted]', '2026-07-28'], // the first add
          ['reader', 'denied', 403, '[redacted]', '2026-07-28'], // the forced one
          ['writer', 'error', 200, '[redacted]', '2026-07-28'], // 3000 bytes
          ['writer', 'ok', 200, '[redacted]', '2026-07-28'], // corrected
          ['writer', 'ok', 200, '[redacted]', '2026-07-28'], // by the model
        ];
    assert.deepEqual(creates, want);
    assert.ok(!audit.includes('7d41'), `the audit never holds a note's text (${added[proto]})`);
    assert.ok(!audit.includes('forced by a reader'));
    assert.ok(!audit.includes('€'));
    // Each of the run's three pages read the board at least once.
    assert.ok(boards.length >= 3 && boards.every(([, outcome]) => outcome === 'ok'), JSON.stringify(boards));
    app.cleanup();
  });
}
