import { createHash } from 'node:crypto';

/**
 * The live view: one self-contained HTML page (inline CSS and script, nothing fetched but its own
 * JSON), served by ZkLockViewModule and by `nestjs-zk-lock inspect --serve`. The script polls
 * `<page path>/data` and rebuilds the tables; every text from ZooKeeper goes in through
 * textContent, never as HTML, because owners are whatever the applications wrote.
 */

const STYLE = `
:root { color-scheme: light dark; font: 14px/1.4 system-ui, sans-serif; }
body { margin: 1.5rem; }
header { display: flex; gap: 1.5rem; align-items: baseline; flex-wrap: wrap; }
h1 { font-size: 1.25rem; margin: 0; }
.muted { opacity: .7; }
#status.error, p.unreadable { color: #c0392b; font-weight: 600; }
section.lock { margin: 1.25rem 0; }
h2 { font-size: 1rem; margin: 0 0 .35rem; font-family: ui-monospace, monospace; }
h2 .kind { font: 600 .75rem system-ui, sans-serif; padding: .1rem .45rem; border-radius: .6rem; background: #8884; margin-left: .5rem; }
table { border-collapse: collapse; width: 64rem; max-width: 100%; table-layout: fixed; }
th, td { text-align: left; padding: .25rem .6rem; border-bottom: 1px solid #8884; overflow-wrap: anywhere; }
th:nth-child(1) { width: 6.5rem; } th:nth-child(2) { width: 8rem; } th:nth-child(4) { width: 9rem; }
th:nth-child(5) { width: 4.5rem; } th:nth-child(6) { width: 10.5rem; } th:nth-child(7) { width: 7.5rem; }
th { font-weight: 600; font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; }
td.session, td.node { font-family: ui-monospace, monospace; font-size: .8rem; }
tr.holder td.role { color: #1e8449; font-weight: 600; }
tr.waiter td.role { color: #b9770e; }
td.age { font-variant-numeric: tabular-nums; }
`;

const SCRIPT = `
(() => {
  const body = document.body;
  const refreshMs = Number(body.dataset.refreshMs) || 2000;
  const dataUrl = location.pathname.replace(/\\/+$/, '') + '/data';
  const byId = (id) => document.getElementById(id);
  let refreshes = 0;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  function fmt(ms) {
    if (ms === undefined) return '?';
    if (ms < 1000) return Math.round(ms) + ' ms';
    const s = ms / 1000;
    if (s < 60) return s.toFixed(1) + ' s';
    const whole = Math.floor(s);
    const pad = (n) => String(n).padStart(2, '0');
    if (whole < 3600) return Math.floor(whole / 60) + ' min ' + pad(whole % 60) + ' s';
    return Math.floor(whole / 3600) + ' h ' + pad(Math.floor(whole / 60) % 60) + ' min';
  }

  // An election's holder is its leader, its waiters its followers (view-model.ts roleLabel).
  function roleLabel(lock, role, position) {
    const election = lock.kind === 'election';
    if (role === 'holder') return election ? 'leader' : 'holder';
    return (election ? 'follower' : 'waiter') + ' #' + position;
  }

  function row(lock, node, role, position) {
    const tr = el('tr', role);
    tr.dataset.role = role;
    tr.dataset.session = node.sessionId;
    tr.dataset.node = node.node;
    const cells = [
      ['role', roleLabel(lock, role, position)],
      ['mode', node.mode],
      ['owner', node.owner ?? node.participant ?? node.data ?? ''],
      ['host', node.host ?? ''],
      ['pid', node.pid ?? ''],
      ['session', node.sessionId],
      ['age', fmt(node.ageMs)],
    ];
    for (const [name, text] of cells) {
      const td = el('td', name, text);
      td.dataset.col = name;
      tr.append(td);
    }
    return tr;
  }

  function section(lock) {
    const part = el('section', 'lock');
    part.dataset.resource = lock.resource;
    const title = el('h2', '', lock.resource);
    const layout = lock.layout && lock.layout !== 'nestjs-zk-lock' ? lock.layout + ' ' : '';
    const kind = layout + (lock.permits === undefined ? lock.kind : lock.kind + ' (' + lock.permits + ' permits)');
    title.append(el('span', 'kind', kind));
    const table = el('table');
    const head = el('tr');
    for (const name of ['', 'mode', 'owner', 'host', 'pid', 'session', 'in queue for']) head.append(el('th', '', name));
    const thead = el('thead');
    thead.append(head);
    table.append(thead);
    const rows = el('tbody');
    lock.holders.forEach((node, i) => rows.append(row(lock, node, 'holder', i + 1)));
    lock.waiters.forEach((node, i) => rows.append(row(lock, node, 'waiter', i + 1)));
    if (lock.localWaiters) {
      const local = el('tr', 'local');
      const cell = el('td', 'muted', '+ ' + lock.localWaiters + ' waiting in this process (cohort queue, not in ZooKeeper)');
      cell.colSpan = 7;
      local.append(cell);
      rows.append(local);
    }
    table.append(rows);
    part.append(title, table);
    return part;
  }

  function render(view) {
    byId('root').textContent = view.rootPath;
    const updated = byId('updated');
    updated.textContent = new Date(view.readAt).toLocaleTimeString();
    updated.dataset.readAt = view.readAt;
    byId('count').textContent = view.locks.length === 1 ? '1 lock' : view.locks.length + ' locks';
    byId('server').textContent = view.server === undefined ? '' : ' · from ' + (view.server === null ? 'no member (disconnected)' : view.server);
    byId('members').textContent = view.members === undefined ? '' : ' · members ' + view.members.join(', ');
    const locks = byId('locks');
    const unreadable = (view.unreadable || []).map((item) => el('p', 'unreadable', 'Not read: ' + item.path + ': ' + item.reason));
    if (view.locks.length === 0) locks.replaceChildren(...unreadable, el('p', 'muted', 'Nobody holds or waits for a lock here.'));
    else locks.replaceChildren(...unreadable, ...view.locks.map(section));
  }

  function status(text) {
    const line = byId('status');
    line.textContent = text;
    line.className = text ? 'error' : '';
  }

  async function refresh() {
    try {
      const response = await fetch(dataUrl, { cache: 'no-store', headers: { accept: 'application/json' } });
      if (!response.ok) throw new Error('HTTP ' + response.status + ': ' + (await response.text()).slice(0, 300));
      render(await response.json());
      status('');
    } catch (error) {
      status('Could not refresh (' + (error && error.message ? error.message : String(error)) + '); showing the last data read.');
    }
    body.dataset.refreshes = String(++refreshes);
    setTimeout(refresh, refreshMs);
  }
  refresh();
})();
`;

const hash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * For the page's response: only its own inline style and script run, and it may only fetch from
 * its own origin.
 */
export const PAGE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `script-src ${hash(SCRIPT)}`,
  `style-src ${hash(STYLE)}`,
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The page; `refreshMs` is how often it re-reads its JSON. */
export function renderPage(refreshMs: number): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ZooKeeper locks</title>
<style>${STYLE}</style>
</head>
<body data-refresh-ms="${Math.floor(refreshMs)}">
<header>
<h1>Locks under <code id="root">…</code></h1>
<span class="muted"><span id="count"></span><span id="server"></span><span id="members"></span> · last updated <time id="updated">never</time> · every ${Math.floor(refreshMs)} ms</span>
<span id="status" role="status"></span>
</header>
<main id="locks"><p class="muted">Loading…</p></main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

/** Response headers for the page. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': PAGE_CONTENT_SECURITY_POLICY,
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};
