import { formatDuration, kindLabel, type LockViewData, type LockViewNode, roleLabel } from '../live-view/view-model.js';

const HEADERS = ['RESOURCE', 'KIND', 'ROLE', 'MODE', 'OWNER', 'HOST', 'PID', 'SESSION', 'IN QUEUE FOR'];

/**
 * The locks as a text table, one row per holder or waiter (an election's leader and followers).
 * Names and owners are whatever the applications wrote: control characters are escaped so that
 * they cannot drive the terminal.
 */
export function formatTable(view: LockViewData, asked: readonly string[] = []): string {
  const notes = (view.unreadable ?? []).map((item) => `Not read: ${item.path}: ${item.reason}`);
  // A path asked for by name that shows nothing: say so, rather than leave the reader to wonder.
  const shown = new Set([...view.locks.map((lock) => lock.path), ...(view.unreadable ?? []).map((item) => item.path)]);
  for (const path of asked) if (!shown.has(path)) notes.push(`No holder or waiter at ${path}.`);
  const after = notes.length > 0 ? `\n${notes.map(printable).join('\n')}\n` : '';
  if (view.locks.length === 0) return `No lock is held or waited for under ${printable(view.rootPath)}.\n${after}`;
  const rows: string[][] = [];
  for (const lock of view.locks) {
    const nodes: [string, LockViewNode][] = [
      ...lock.holders.map((node, i): [string, LockViewNode] => [roleLabel(lock, true, i + 1), node]),
      ...lock.waiters.map((node, i): [string, LockViewNode] => [roleLabel(lock, false, i + 1), node]),
    ];
    nodes.forEach(([role, node], i) => {
      rows.push([
        i === 0 ? lock.resource : '',
        i === 0 ? kindLabel(lock) : '',
        role,
        node.mode,
        node.owner ?? node.participant ?? node.data ?? '',
        node.host ?? '',
        node.pid === undefined ? '' : String(node.pid),
        node.sessionId,
        formatDuration(node.ageMs),
      ]);
    });
  }
  const cells = [HEADERS, ...rows].map((row) => row.map(printable));
  const widths = HEADERS.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)));
  return cells.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n') + '\n' + after;
}

/** The header line above a table. */
export function formatHeading(view: LockViewData): string {
  const count = view.locks.length === 1 ? '1 lock' : `${view.locks.length} locks`;
  const under = view.locks.filter((lock) => lock.layout === 'nestjs-zk-lock' && lock.path.startsWith(`${view.rootPath}/`)).length;
  const where = under === view.locks.length ? `under ${printable(view.rootPath)}` : `(${under} under ${printable(view.rootPath)}, ${view.locks.length - under} at other paths)`;
  return `${count} ${where}, read at ${view.readAt}${view.tls ? ' over TLS' : ''}${describeMembers(view)}`;
}

/** " from 127.0.0.1:2181 (members: a:2181, b:2181, c:2181)", from what the reader said. */
function describeMembers(view: LockViewData): string {
  const from = view.server === undefined ? '' : ` from ${view.server === null ? 'no member (disconnected)' : printable(view.server)}`;
  const members = view.members === undefined ? '' : ` (members: ${view.members.map(printable).join(', ')})`;
  return from + members;
}

function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
