// A minimal MCP Apps host, built on the official AppBridge from
// @modelcontextprotocol/ext-apps and the official TypeScript client: the
// page board.test.mjs opens in headless Chromium. esbuild bundles it at
// test time; it runs on the origin of the server under test, so its
// requests to /mcp are same-origin (and carry an Origin header the
// server checks).
//
// It does what a host must and AppBridge leaves to it (APPS.md §6.2, §8):
//   - it declares the UI extension on every request
//     (clientCapabilities.extensions["io.modelcontextprotocol/ui"]);
//   - the model's tool list holds only tools whose visibility includes
//     "model", and a call "from the model" of any other is refused here;
//   - a call from the app of a tool whose visibility lacks "app" is
//     refused here; every other call goes to the server, which is the
//     gate (a tool the caller may not use is absent from its tools/list,
//     so this host does not refuse unknown tools: the server answers
//     them, with a 403 or an unknown tool's error);
//   - it reads the tool's ui:// resource, checks its MIME type, and renders
//     it in an iframe sandboxed to scripts alone (an opaque origin), with
//     a Content-Security-Policy built from the resource's _meta.ui.csp.
//
// What happened is kept on window.__host for the test to read: the wire
// (every POST, with its JSON-RPC method, tool, status and HTTP version as
// the page saw it), the app's calls, the tool lists, and ready/error.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from '@modelcontextprotocol/ext-apps/app-bridge';

const UI_EXTENSION = 'io.modelcontextprotocol/ui';

const params = new URLSearchParams(location.search);
const token = params.get('token');
const theme = params.get('theme') === 'dark' ? 'dark' : 'light';

const host = {
  ready: false,
  error: null,
  wire: [], // {rpcMethod, tool, uri, status, extensions}
  appCalls: [], // {name, outcome: 'ok' | 'isError' | 'refused by host' | 'error', message}
  serverTools: [], // every tool the server listed, with its visibility
  modelTools: [], // the names the model would be shown
  resource: null, // {uri, mimeType, ui, csp}
};
window.__host = host;

/** A fetch that sends the bearer token and records each exchange. */
async function recordingFetch(url, init = {}) {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${token}`);
  const ex = { method: init.method ?? 'GET' };
  if (typeof init.body === 'string') {
    try {
      const msg = JSON.parse(init.body);
      ex.rpcMethod = msg.method;
      ex.tool = msg.params?.name;
      ex.uri = msg.params?.uri;
      ex.extensions = msg.params?._meta?.['io.modelcontextprotocol/clientCapabilities']?.extensions;
    } catch {
      // not JSON
    }
  }
  host.wire.push(ex);
  const resp = await fetch(url, { ...init, headers });
  ex.status = resp.status;
  return resp;
}

/** visibleTo reports whether tool may be used by who ("model" or "app"). */
function visibleTo(tool, who) {
  const v = tool?._meta?.ui?.visibility ?? ['model', 'app'];
  return v.includes(who);
}

/**
 * The CSP for a UI resource, from its _meta.ui.csp (APPS26 §Host
 * Behavior): the restrictive default, widened only by the domains the
 * resource declares.
 */
function buildCsp(csp = {}) {
  const list = (xs) => (xs ?? []).filter((x) => /^[a-z][a-z0-9+.-]*:\/\/[^\s;,']+$/i.test(x)).join(' ');
  const res = list(csp.resourceDomains);
  const connect = list(csp.connectDomains);
  const frames = list(csp.frameDomains);
  const base = list(csp.baseUriDomains);
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${res}`,
    `style-src 'unsafe-inline' ${res}`,
    `img-src data: ${res}`,
    `font-src ${res || "'none'"}`,
    `media-src data: ${res}`,
    `connect-src ${connect || "'none'"}`,
    `frame-src ${frames || "'none'"}`,
    `base-uri ${base || "'self'"}`,
    "object-src 'none'",
    "form-action 'none'",
  ]
    .map((d) => d.trim())
    .join('; ');
}

/** The document with a CSP meta element as the first thing in its head. */
function withCsp(html, policy) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replaceAll('"', '&quot;')}">`;
  const head = /<head(\s[^>]*)?>/i.exec(html);
  if (head) return html.slice(0, head.index + head[0].length) + meta + html.slice(head.index + head[0].length);
  return meta + html;
}

async function main() {
  const client = new Client(
    { name: 'mcpmw-test-host', version: '0.1.0' },
    {
      capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } },
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', location.href), { fetch: recordingFetch }), {
    timeout: 30_000,
  });

  let tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: 30_000 });
    tools = tools.concat(page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  host.serverTools = tools.map((t) => ({ name: t.name, visibility: t._meta?.ui?.visibility ?? null }));
  host.modelTools = tools.filter((t) => visibleTo(t, 'model')).map((t) => t.name);

  // The model calls notes_list; its UI is what the host renders.
  const tool = tools.find((t) => t.name === 'notes_list');
  if (!tool) throw new Error('the server lists no notes_list');
  const uri = getToolUiResourceUri(tool);
  if (!uri) throw new Error('notes_list names no UI resource');

  const read = await client.readResource({ uri }, { timeout: 30_000 });
  if (read.contents.length !== 1) throw new Error(`${uri}: ${read.contents.length} contents, want 1`);
  const [content] = read.contents;
  if (content.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`${uri}: MIME type ${content.mimeType}`);
  const html = content.text ?? new TextDecoder().decode(Uint8Array.from(atob(content.blob), (c) => c.charCodeAt(0)));
  let ui = content._meta?.ui;
  if (!ui) {
    const { resources } = await client.listResources(undefined, { timeout: 30_000 });
    ui = resources.find((r) => r.uri === uri)?._meta?.ui;
  }
  const policy = buildCsp(ui?.csp);
  host.resource = { uri, mimeType: content.mimeType, ui: ui ?? null, csp: policy };

  const frame = document.createElement('iframe');
  frame.title = 'notes board';
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.className = ui?.prefersBorder === false ? 'borderless' : 'bordered';
  document.getElementById('app').append(frame);

  const bridge = new AppBridge(
    client,
    { name: 'mcpmw-test-host', version: '0.1.0' },
    { serverTools: {}, serverResources: {}, logging: {}, sandbox: { csp: ui?.csp } },
    { hostContext: { theme, displayMode: 'inline', toolInfo: { tool } } },
  );
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  bridge.onsizechange = ({ height }) => {
    if (height) {
      host.sizeChanges = (host.sizeChanges ?? 0) + 1;
      frame.style.height = `${Math.min(Math.max(height, 120), 2000)}px`;
    }
  };
  bridge.onloggingmessage = () => {};
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));

  // connect() installed a relay of tools/call; this one enforces
  // visibility first, as a host must.
  bridge.oncalltool = async (req) => {
    const known = tools.find((t) => t.name === req.name);
    if (known && !visibleTo(known, 'app')) {
      host.appCalls.push({ name: req.name, outcome: 'refused by host' });
      throw new Error(`${req.name} may not be called from an app`);
    }
    try {
      const result = await client.callTool({ name: req.name, arguments: req.arguments ?? {} }, { timeout: 30_000 });
      host.appCalls.push({ name: req.name, outcome: result.isError ? 'isError' : 'ok' });
      return result;
    } catch (err) {
      host.appCalls.push({ name: req.name, outcome: 'error', message: String(err?.message ?? err) });
      throw err;
    }
  };

  frame.srcdoc = withCsp(html, policy);
  await initialized;

  // As a host does when the model's call of the tool is shown with its UI.
  await bridge.sendToolInput({ arguments: {} });
  const result = await client.callTool({ name: 'notes_list', arguments: {} }, { timeout: 30_000 });
  await bridge.sendToolResult(result);

  /** A call by the model: only tools the model was shown. */
  host.callAsModel = async (name, args = {}) => {
    const t = tools.find((x) => x.name === name);
    if (t && !visibleTo(t, 'model')) throw new Error(`${name} is not visible to the model`);
    return client.callTool({ name, arguments: args }, { timeout: 30_000 });
  };
  /**
   * A call by the model of a tool whose UI is the one shown: its arguments
   * and result go to the app too, as a host sends them.
   */
  host.callAsModelShown = async (name, args = {}) => {
    await bridge.sendToolInput({ arguments: args });
    const res = await host.callAsModel(name, args);
    await bridge.sendToolResult(res);
    return res;
  };
  /** Asks the app to tear itself down, as a host does before it removes the frame. */
  host.teardown = () => bridge.teardownResource({}, { timeout: 30_000 });
  host.ready = true;
}

main().catch((err) => {
  host.error = String(err?.stack ?? err);
  document.getElementById('app').textContent = `host error: ${host.error}`;
});
