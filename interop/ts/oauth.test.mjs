// Drives the OAuth example app (examples/oauth, on the oauth module) with
// the official TypeScript MCP client, @modelcontextprotocol/client, and its
// ClientCredentialsProvider (the ext-auth client-credentials extension:
// client_credentials with client_secret_basic). The client gets the 401,
// reads the resource metadata it names, discovers the authorization server
// this test plays, gets a token for the resource (RFC 8707 `resource`), and
// calls tools with it; the app verifies the token against the server's
// JWKS, found through its metadata.
//
// Run by scripts/interop-ts.sh, which builds the app. By hand, from this
// folder:
//
//   npm ci && (cd ../../examples/oauth && go build -o /tmp/oauth-app .)
//   MCPMW_OAUTH_APP=/tmp/oauth-app node --test oauth.test.mjs

import assert from 'node:assert/strict';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { createServer as createHTTPServer } from 'node:http';
import { after, before, test } from 'node:test';

import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { startApp } from './app.mjs';

/** The clients the authorization server knows, and the scopes each may get. */
const CLIENTS = {
  'reader-client': { secret: 'reader-secret', scopes: ['read'] },
  'writer-client': { secret: 'writer-secret', scopes: ['read', 'write'] },
};

let as;
let app;

before(async () => {
  as = await startAuthServer();
  app = await startApp(process.env.MCPMW_OAUTH_APP, {
    name: 'the OAuth example app',
    env: { ISSUER: as.issuer },
    ready: '/.well-known/oauth-protected-resource/mcp', // its metadata document
  });
});

after(async () => {
  await app?.stop();
  await new Promise((r) => as?.server.close(r));
});

const b64url = (buf) => Buffer.from(buf).toString('base64url');

/**
 * A minimal authorization server: RFC 8414 metadata, an ES256 JWKS, and a
 * token endpoint for the client-credentials grant (client_secret_basic)
 * that issues RFC 9068 access tokens whose aud is the `resource` the
 * client asked for. Every token request is recorded.
 */
async function startAuthServer() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'as-key-1', alg: 'ES256', use: 'sig' };
  const tokenRequests = [];
  let issuer;
  const server = createHTTPServer((req, res) => {
    const json = (status, body) => {
      res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/.well-known/oauth-authorization-server') {
      return json(200, {
        issuer,
        // RFC 8414 lets a server without an authorization-code grant leave
        // this out; the client's schema requires it (unused here).
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
        response_types_supported: ['token'],
        scopes_supported: ['read', 'write'],
      });
    }
    if (req.method === 'GET' && req.url === '/jwks') {
      return json(200, { keys: [jwk] });
    }
    if (req.method === 'POST' && req.url === '/token') {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const [id, secret] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
          .toString()
          .split(':')
          .map(decodeURIComponent);
        tokenRequests.push({ client: id, form: Object.fromEntries(form) });
        const client = CLIENTS[id];
        if (!client || client.secret !== secret) return json(401, { error: 'invalid_client' });
        if (form.get('grant_type') !== 'client_credentials') return json(400, { error: 'unsupported_grant_type' });
        // The scopes asked for that the client may have (RFC 6749 §3.3 lets
        // the server grant fewer; the client asks for the resource's
        // scopes_supported, "read write", whoever it is).
        const asked = (form.get('scope') ?? client.scopes.join(' ')).split(' ').filter((s) => client.scopes.includes(s));
        if (asked.length === 0) return json(400, { error: 'invalid_scope' });
        const now = Math.floor(Date.now() / 1000);
        const header = { alg: 'ES256', typ: 'at+jwt', kid: jwk.kid };
        const claims = {
          iss: issuer, sub: id, client_id: id, aud: form.get('resource') ?? 'no-resource',
          scope: asked.join(' '), iat: now, exp: now + 300, jti: randomUUID(),
        };
        const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
        const sig = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
        json(200, { access_token: `${input}.${b64url(sig)}`, token_type: 'Bearer', expires_in: 300, scope: asked.join(' ') });
      });
      return;
    }
    json(404, { error: 'not_found' });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  issuer = `http://127.0.0.1:${server.address().port}`;
  return { server, issuer, tokenRequests };
}

/** Audit records the app wrote to stderr. */
function records() {
  return app.output().split('\n').flatMap((line) => {
    try {
      const rec = JSON.parse(line);
      return rec.msg === 'mcp request' ? [rec] : [];
    } catch {
      return [];
    }
  });
}

async function connect(clientId, scope) {
  const provider = new ClientCredentialsProvider({
    clientId, clientSecret: CLIENTS[clientId].secret, scope, expectedIssuer: as.issuer,
  });
  const client = new Client({ name: 'mcpmw-oauth-interop', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(app.url, { authProvider: provider }));
  return client;
}

test('a client-credentials client gets a token for the resource and calls whoami', async () => {
  const client = await connect('reader-client', 'read');
  try {
    const tokenReq = as.tokenRequests.findLast((r) => r.client === 'reader-client');
    assert.ok(tokenReq, 'the client asked the authorization server for a token');
    assert.equal(tokenReq.form.grant_type, 'client_credentials');
    assert.equal(tokenReq.form.resource, app.url.href, 'RFC 8707: the token is asked for this resource');
    assert.equal(tokenReq.form.scope, 'read write', "the resource's scopes_supported, not the provider's scope option");
    const res = await client.callTool({ name: 'whoami', arguments: {} });
    assert.equal(res.isError ?? false, false, JSON.stringify(res));
    assert.deepEqual(res.structuredContent, { sub: 'reader-client', scopes: ['read'] });
  } finally {
    await client.close();
  }
});

test('a read token calling shout is refused with insufficient_scope, audited once', async () => {
  const client = await connect('reader-client', 'read');
  try {
    const before = records().length;
    await assert.rejects(client.callTool({ name: 'shout', arguments: { message: 'hi' } }));
    const refused = records().slice(before).filter((r) => r.tool === 'shout' && r.status === 403);
    assert.ok(refused.length >= 1, `a 403 for shout in the audit records:\n${app.output()}`);
  } finally {
    await client.close();
  }
});

test('a write token may call shout (write implies read: whoami too)', async () => {
  const client = await connect('writer-client', 'read write');
  try {
    const res = await client.callTool({ name: 'shout', arguments: { message: 'hi' } });
    assert.equal(res.content[0].text, 'HI');
    const who = await client.callTool({ name: 'whoami', arguments: {} });
    assert.deepEqual(who.structuredContent, { sub: 'writer-client', scopes: ['read', 'write'] });
  } finally {
    await client.close();
  }
});
