// Drives the mcpmw example app (examples/chi-app) with the official
// TypeScript MCP client, @modelcontextprotocol/client, at 2026-07-28 and
// 2025-11-25: connect, list tools, call a tool, read structured output, be
// refused, go on; then checks the app's audit file.
//
// Run by scripts/interop-ts.sh, which installs the pinned client from
// package-lock.json into a cache and builds the app. By hand, from this
// folder:
//
//   npm ci && (cd ../.. && go build -o /tmp/chi-app ./examples/chi-app)
//   MCPMW_CHI_APP=/tmp/chi-app node --test client.test.mjs
//
// MCPMW_INTEROP_DUMP=1 prints every HTTP exchange.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';

import { Client, InsufficientScopeError, ProtocolError, ResourceNotFoundError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { startApp } from './app.mjs';

const READER = 'reader-token'; // may use echo, add, notes_list and notes_export
const WRITER = 'writer-token'; // may also use note_create
const OTHER = 'other-token'; // read and write, of another tenant

// How each revision is asked for. The client speaks 2025-11-25 by default
// ('legacy': initialize, no probe); 2026-07-28 must be opted into, and the
// pin makes connect() fail rather than fall back to initialize.
const REVISIONS = {
  '2026-07-28': { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  '2025-11-25': {},
};

/** The example app, running as its own process on a loopback port. */
let app;

before(async () => {
  app = await startApp(process.env.MCPMW_CHI_APP, { audit: true });
});

after(async () => {
  await app?.stop();
});

// --- the wire ----------------------------------------------------------------

/**
 * A fetch for the client's transport that sends the current bearer token
 * and records each exchange: HTTP method, JSON-RPC method and tool, status,
 * and the body of JSON answers.
 */
function recordingFetch(token) {
  const wire = {
    token,
    exchanges: [],
    /** The last POST of a tools/call for the named tool, or of a resources/read of the URI. */
    lastCall(name) {
      return this.exchanges.findLast((e) => e.method === 'POST' && (e.tool === name || e.uri === name));
    },
    dump() {
      return this.exchanges
        .map((e, i) => `--- #${i + 1} ${e.method} ${e.rpcMethod ?? ''} ${e.tool ?? ''} ${JSON.stringify(e.headers)}\n<<< ${e.status} ${e.body ?? ''}`)
        .join('\n');
    },
  };
  wire.fetch = async (url, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set('Authorization', `Bearer ${wire.token}`);
    const ex = { method: init.method ?? 'GET', headers: {} };
    for (const h of ['mcp-protocol-version', 'mcp-method', 'mcp-name']) {
      if (headers.has(h)) ex.headers[h] = headers.get(h);
    }
    if (typeof init.body === 'string') {
      try {
        const msg = JSON.parse(init.body);
        ex.rpcMethod = msg.method;
        ex.tool = msg.params?.name;
        ex.uri = msg.params?.uri;
      } catch {
        // not JSON: recorded without a method
      }
    }
    wire.exchanges.push(ex);
    const resp = await fetch(url, { ...init, headers });
    ex.status = resp.status;
    if ((resp.headers.get('content-type') ?? '').startsWith('application/json')) {
      ex.body = await resp.clone().text();
    }
    return resp;
  };
  return wire;
}

/** The text of the result's first text block. */
function textOf(result) {
  return result.content.find((c) => c.type === 'text')?.text;
}

// --- the scenario ------------------------------------------------------------

const ran = [];
/** The ids of the notes the writer created, over all revisions, oldest first. */
const demoNotes = [];

for (const [rev, options] of Object.entries(REVISIONS)) {
  test(`TypeScript client at ${rev}`, { timeout: 60_000 }, async (t) => {
    ran.push(rev);
    const wire = recordingFetch(READER);
    t.after(() => {
      if (process.env.MCPMW_INTEROP_DUMP) console.log(`wire traffic at ${rev}:\n${wire.dump()}`);
    });
    const client = new Client({ name: 'interop-ts', version: '0.1.0' }, options);
    const transport = new StreamableHTTPClientTransport(app.url, { fetch: wire.fetch });
    try {
      await t.test('connect', async () => {
        await client.connect(transport, { timeout: 10_000 });
        assert.equal(client.getNegotiatedProtocolVersion(), rev);
        assert.equal(client.getProtocolEra(), rev === '2026-07-28' ? 'modern' : 'legacy');
        assert.equal(client.getServerVersion()?.name, 'chi-app');
        assert.ok(client.getServerCapabilities()?.tools, 'tools capability');
        const first = wire.exchanges.find((e) => e.method === 'POST');
        assert.equal(first.rpcMethod, rev === '2026-07-28' ? 'server/discover' : 'initialize');
      });

      await t.test('tools/list shows a reader what it may call', async () => {
        const { tools } = await client.listTools(undefined, { timeout: 10_000 });
        assert.deepEqual(
          tools.map((tool) => tool.name),
          ['echo', 'add', 'notes_list', 'notes_export'],
        );
        const add = tools.find((tool) => tool.name === 'add');
        assert.ok(add.outputSchema?.properties?.sum, 'add output schema');
        assert.equal(add.annotations?.readOnlyHint, true);
      });

      await t.test('tools/call echo', async () => {
        const res = await client.callTool({ name: 'echo', arguments: { message: 'hello from TypeScript' } }, { timeout: 10_000 });
        assert.ok(!res.isError);
        assert.equal(textOf(res), 'hello from TypeScript');
      });

      await t.test('structured output', async () => {
        const res = await client.callTool({ name: 'add', arguments: { a: 2, b: 3.5 } }, { timeout: 10_000 });
        assert.ok(!res.isError);
        assert.equal(textOf(res), '5.5');
        assert.deepEqual(res.structuredContent, { sum: 5.5 });
      });

      await t.test('a reader calling note_create is refused', async () => {
        // The client reads the 403's insufficient_scope challenge, not the
        // JSON-RPC body, so the wire is checked for the -32602.
        await assert.rejects(
          client.callTool({ name: 'note_create', arguments: { text: 'not allowed' } }, { timeout: 10_000 }),
          (err) => err instanceof InsufficientScopeError && err.requiredScope === 'write',
        );
        const ex = wire.lastCall('note_create');
        assert.equal(ex.status, 403);
        assert.equal(JSON.parse(ex.body).error.code, -32602);
      });

      await t.test('an unknown tool is -32602', async () => {
        await assert.rejects(
          client.callTool({ name: 'no_such_tool', arguments: {} }, { timeout: 10_000 }),
          (err) => err instanceof ProtocolError && err.code === -32602 && err.message.includes('no_such_tool'),
        );
        assert.equal(wire.lastCall('no_such_tool').status, 200);
      });

      await t.test('a reader may not read app://stats', async () => {
        // As for a refused tool call, the client reads the 403's
        // insufficient_scope challenge.
        await assert.rejects(
          client.readResource({ uri: 'app://stats' }, { timeout: 10_000 }),
          (err) => err instanceof InsufficientScopeError && err.requiredScope === 'write',
        );
        const ex = wire.lastCall('app://stats');
        assert.equal(ex.status, 403);
        assert.equal(JSON.parse(ex.body).error.code, -32602);
      });

      await t.test('the client goes on after the refusals', async () => {
        const res = await client.callTool({ name: 'echo', arguments: { message: 'still here' } }, { timeout: 10_000 });
        assert.equal(textOf(res), 'still here');
      });

      await t.test('the writer may create a note', async () => {
        wire.token = WRITER; // each request is authenticated on its own
        const res = await client.callTool({ name: 'note_create', arguments: { text: `from TypeScript at ${rev}` } }, { timeout: 10_000 });
        assert.ok(!res.isError);
        assert.equal(typeof res.structuredContent?.id, 'number');
        demoNotes.push(res.structuredContent.id);
      });

      let otherNote;
      await t.test("another tenant's writer creates a note", async () => {
        wire.token = OTHER;
        const res = await client.callTool({ name: 'note_create', arguments: { text: `the other team at ${rev}` } }, { timeout: 10_000 });
        assert.ok(!res.isError);
        otherNote = res.structuredContent.id;
        wire.token = WRITER;
      });

      await t.test("resources/list: the readme, the stats, the notes board and the writer's team's notes", async () => {
        const { resources: all } = await client.listResources(undefined, { timeout: 10_000 });
        const resources = all.filter((r) => !r.uri.startsWith('skill://')); // the skills' SKILL.md files: skills.test.mjs
        assert.deepEqual(
          resources.map((r) => r.uri),
          ['app://readme', 'app://stats', 'ui://notes/board', ...demoNotes.map((id) => `notes://${id}`)],
        );
        const readme = resources[0];
        assert.equal(readme.name, 'readme');
        assert.equal(readme.mimeType, 'text/markdown');
        const note = resources.at(-1);
        assert.equal(note.name, `note ${demoNotes.at(-1)}`);
        assert.equal(note.mimeType, 'text/plain');
      });

      await t.test('resources/read of app://readme and of a note', async () => {
        let res = await client.readResource({ uri: 'app://readme' }, { timeout: 10_000 });
        assert.equal(res.contents.length, 1);
        assert.equal(res.contents[0].uri, 'app://readme');
        assert.equal(res.contents[0].mimeType, 'text/markdown');
        assert.ok(res.contents[0].text.startsWith('# chi-app\n'), res.contents[0].text);
        const uri = `notes://${demoNotes.at(-1)}`;
        res = await client.readResource({ uri }, { timeout: 10_000 });
        assert.deepEqual(res.contents, [{ uri, mimeType: 'text/plain', text: `from TypeScript at ${rev}` }]);
      });

      await t.test("another tenant's note is not found", async () => {
        // The app answers -32602 with data.uri on 2026-07-28 and -32002 with
        // data.uri on 2025-11-25; the client turns both into a
        // ResourceNotFoundError whose code is -32602 (a -32002 without
        // data.uri would stay a plain ProtocolError).
        const uri = `notes://${otherNote}`;
        await assert.rejects(
          client.readResource({ uri }, { timeout: 10_000 }),
          (err) => err instanceof ResourceNotFoundError && err.uri === uri && err.code === -32602,
        );
        const { error } = JSON.parse(wire.lastCall(uri).body);
        assert.equal(error.code, rev === '2026-07-28' ? -32602 : -32002);
        assert.deepEqual(error.data, { uri });
      });

      await t.test('resources/templates/list', async () => {
        const { resourceTemplates } = await client.listResourceTemplates(undefined, { timeout: 10_000 });
        assert.deepEqual(
          resourceTemplates.map((rt) => [rt.uriTemplate, rt.name, rt.mimeType]),
          [['notes://{id}', 'note', 'text/plain']],
        );
      });

      await t.test('prompts/list and prompts/get summarize_notes', async () => {
        const { prompts } = await client.listPrompts(undefined, { timeout: 10_000 });
        assert.deepEqual(
          prompts.map((p) => [p.name, p.arguments?.map((a) => [a.name, a.required ?? false])]),
          [
            ['summarize_notes', [['style', false]]],
            ['draft_note', [['topic', true]]],
          ],
        );
        const res = await client.getPrompt({ name: 'summarize_notes', arguments: { style: 'brief' } }, { timeout: 10_000 });
        assert.equal(res.description, "Summary of the team's notes (brief)");
        assert.equal(res.messages.length, 1);
        assert.equal(res.messages[0].role, 'user');
        const text = res.messages[0].content.text;
        assert.ok(text.startsWith(`Here are my team's ${demoNotes.length} latest notes:`), text);
        assert.ok(text.includes(`> #${demoNotes.at(-1)} by writer: from TypeScript at ${rev}`), text);
        assert.ok(!text.includes('the other team'), text);
        assert.ok(text.endsWith('Please summarize them in a brief style.'), text);
      });

      await t.test('completion/complete of a prompt argument and a template variable', async () => {
        let res = await client.complete(
          { ref: { type: 'ref/prompt', name: 'summarize_notes' }, argument: { name: 'style', value: 'b' } },
          { timeout: 10_000 },
        );
        assert.deepEqual(res.completion.values, ['brief', 'bullets']);
        assert.equal(res.completion.total, 2);
        const id = String(demoNotes.at(-1));
        res = await client.complete(
          { ref: { type: 'ref/resource', uri: 'notes://{id}' }, argument: { name: 'id', value: id } },
          { timeout: 10_000 },
        );
        assert.deepEqual(res.completion.values, [id]);
      });
    } catch (err) {
      console.log(`wire traffic at ${rev}:\n${wire.dump()}`);
      throw err;
    } finally {
      await client.close();
    }
  });
}

test('the app audited each tool call once, at the revision the client spoke', { timeout: 30_000 }, async () => {
  await app.stop();
  assert.equal(app.exit?.code, 0, `the app stops cleanly on SIGINT; output:\n${app.output()}`);
  const calls = {};
  for (const line of readFileSync(app.auditPath, 'utf8').split('\n')) {
    if (!line) continue;
    const rec = JSON.parse(line);
    if (rec.method === 'tools/call') {
      (calls[rec.protocol_version] ??= []).push([rec.tool, rec.outcome, rec.caller, rec.status]);
    }
  }
  for (const rev of ran) {
    assert.deepEqual(
      calls[rev],
      [
        ['echo', 'ok', 'reader', 200],
        ['add', 'ok', 'reader', 200],
        ['note_create', 'denied', 'reader', 403],
        ['no_such_tool', 'error', 'reader', 200],
        ['echo', 'ok', 'reader', 200],
        ['note_create', 'ok', 'writer', 200],
        ['note_create', 'ok', 'other', 200],
      ],
      `audited tool calls at ${rev}`,
    );
  }
  app.cleanup();
});
