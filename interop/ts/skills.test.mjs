// Drives the example app's skills (the Skills extension,
// io.modelcontextprotocol/skills) with the official TypeScript client's
// SkillsClient, at 2026-07-28 and 2025-11-25: it lists the skills a caller
// may see, gets one, reads its files and verifies each against the entry
// (size, sha256 digest, and for SKILL.md the frontmatter, which the client
// parses itself), reads its directories, and is refused another's.
//
// Run by scripts/interop-ts.sh beside client.test.mjs; by hand, as that
// file says.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { Client, InsufficientScopeError, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';

import { startApp } from './app.mjs';

const REVISIONS = {
  '2026-07-28': { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  '2025-11-25': {},
};
const HOWTO = 'skill://notes-howto/SKILL.md';
const ADMIN = 'skill://notes-admin/SKILL.md';

let app;

before(async () => {
  app = await startApp(process.env.MCPMW_CHI_APP);
});

after(() => app?.stop());

/** A client connected to the app as token, at rev, and its SkillsClient. */
async function connect(token, rev) {
  const client = new Client({ name: 'interop-ts-skills', version: '0.1.0' }, REVISIONS[rev]);
  const fetchWithToken = (url, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set('Authorization', `Bearer ${token}`);
    return fetch(url, { ...init, headers });
  };
  await client.connect(new StreamableHTTPClientTransport(app.url, { fetch: fetchWithToken }), { timeout: 10_000 });
  return { client, skills: new SkillsClient(client) };
}

for (const rev of Object.keys(REVISIONS)) {
  test(`TypeScript SkillsClient at ${rev}`, { timeout: 60_000 }, async (t) => {
    const reader = await connect('reader-token', rev);
    const writer = await connect('writer-token', rev);
    t.after(() => Promise.all([reader.client.close(), writer.client.close()]));

    await t.test('the extension is declared, with directoryRead', () => {
      assert.equal(reader.skills.supported, true);
      assert.equal(reader.skills.directoryRead, true);
    });

    await t.test('skills/list shows each caller what its permissions allow', async () => {
      const mine = await reader.skills.list({}, { timeout: 10_000 });
      assert.deepEqual(mine.invalid, []);
      assert.deepEqual(mine.skills.map((s) => s.uri), [HOWTO]);
      assert.deepEqual(mine.skills[0].frontmatter, {
        name: 'notes-howto',
        description: "How to keep and find team notes with this server's tools.",
      });
      if (rev === '2026-07-28') assert.equal(mine.cacheScope, 'private');
      const theirs = await writer.skills.list({}, { timeout: 10_000 });
      assert.deepEqual(theirs.skills.map((s) => s.uri), [HOWTO, ADMIN]);
      assert.equal(theirs.skills[1].frontmatter.license, 'MIT');
    });

    await t.test('skills/get, then every file read and verified against the entry', async () => {
      const { skill } = await writer.skills.get(ADMIN, { timeout: 10_000 });
      assert.equal(skill.uri, ADMIN);
      assert.deepEqual(skill.resources.map((r) => r.uri), [ADMIN, 'skill://notes-admin/checklists/delete.md']);
      const md = await writer.skills.read(skill, undefined, { timeout: 10_000 });
      assert.equal(md.verified, true);
      assert.equal(md.mimeType, 'text/markdown');
      assert.deepEqual(md.frontmatter, skill.frontmatter); // parsed by the client from the bytes served
      const checklist = await writer.skills.read(skill, 'checklists/delete.md', { timeout: 10_000 });
      assert.equal(checklist.verified, true);
      assert.match(checklist.text, /Before deleting a note/);
    });

    await t.test('resources/directory/read of the skill root and a subdirectory', async () => {
      const root = await reader.skills.readDirectory('skill://notes-howto', { timeout: 10_000 });
      assert.deepEqual(
        root.resources.map((r) => [r.uri, r.mimeType]),
        [
          [HOWTO, 'text/markdown'],
          ['skill://notes-howto/reference', 'inode/directory'],
        ],
      );
      const sub = await reader.skills.readDirectory('skill://notes-howto/reference', { timeout: 10_000 });
      assert.deepEqual(sub.resources.map((r) => r.uri), ['skill://notes-howto/reference/tools.md']);
    });

    await t.test("a reader is refused the writers' skill, whole", async () => {
      const refused = (err) => err instanceof InsufficientScopeError && err.requiredScope === 'write';
      await assert.rejects(reader.skills.get(ADMIN, { timeout: 10_000 }), refused);
      await assert.rejects(reader.client.readResource({ uri: 'skill://notes-admin/checklists/delete.md' }, { timeout: 10_000 }), refused);
      await assert.rejects(reader.skills.readDirectory('skill://notes-admin', { timeout: 10_000 }), refused);
    });

    await t.test('a skill that does not exist is -32602', async () => {
      await assert.rejects(
        reader.skills.get('skill://notes-nothing/SKILL.md', { timeout: 10_000 }),
        (err) => err instanceof ProtocolError && err.code === -32602,
      );
    });
  });
}
