import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { PAGE_HEADERS, renderPage } from '../live-view/page.js';
import { type LockViewData, toViewData } from '../live-view/view-model.js';
import { InvalidOptionsError, InvalidResourceNameError } from '../errors.js';
import { inspectAll } from '../recipes/inspect-all.js';
import { checkTargets } from '../recipes/inspect-elsewhere.js';
import type { RecipeRuntime } from '../recipes/recipe-runtime.js';
import { pause } from '../shared/promises.js';
import { CliUsageError, type InspectArgs } from './args.js';
import { connect, messageOf, openConnection, type Output } from './cli-connection.js';
import { formatHeading, formatTable } from './table.js';

/**
 * `nestjs-zk-lock inspect`: one read of every lock under --root (and at --path, under --scan), printed; or repeated (--watch);
 * or served as the live page (--serve). Read-only: it never creates rootPath or any node.
 * Resolves when done (--watch and --serve run until `stop` aborts).
 */
export async function runInspect(args: InspectArgs, output: Output, stop: AbortSignal): Promise<void> {
  const { connection, runtime } = openConnection(args);
  try {
    checkFlags(args, runtime);
    await connect(connection, args);
    const read = async (): Promise<LockViewData> => ({
      ...toViewData(await inspectAll(runtime, { signal: AbortSignal.any([stop, AbortSignal.timeout(args.timeoutMs)]), paths: args.paths, scan: args.scan })),
      tls: connection.tls,
      server: connection.currentServer ?? null,
      members: connection.ensemble.members,
    });
    if (args.serve) return await serve(args, read, output, stop);
    if (!args.watch) {
      const view = await read();
      output.out(args.json ? `${JSON.stringify(view, null, 2)}\n` : `${formatHeading(view)}\n\n${formatTable(view, askedPaths(args))}`);
      return;
    }
    await watch(args, read, output, stop);
  } finally {
    connection.close();
  }
}

/** The paths named with --path. */
function askedPaths(args: InspectArgs): string[] {
  return args.paths.map((target) => target.zkPath);
}

/** --path and --scan, checked before connecting, with the flag's name in any complaint. */
function checkFlags(args: InspectArgs, runtime: RecipeRuntime): void {
  try {
    checkTargets(args, runtime);
  } catch (error) {
    if (!(error instanceof InvalidOptionsError || error instanceof InvalidResourceNameError)) throw error;
    const flag = error instanceof InvalidOptionsError && error.option.startsWith('scan') ? '--scan' : '--path';
    throw new CliUsageError(`Bad ${flag}: ${messageOf(error)}`);
  }
}

async function watch(args: InspectArgs, read: () => Promise<LockViewData>, output: Output, stop: AbortSignal): Promise<void> {
  const clear = !args.json && process.stdout.isTTY ? '\u001b[2J\u001b[H' : '';
  while (!stop.aborted) {
    try {
      const view = await read();
      if (args.json) output.out(`${JSON.stringify(view)}\n`);
      else output.out(`${clear}${formatHeading(view)} (every ${args.intervalMs} ms; Ctrl+C stops)\n\n${formatTable(view, askedPaths(args))}\n`);
    } catch (error) {
      if (stop.aborted) return;
      // The connection reconnects by itself: say so and try again at the next tick.
      output.err(`Could not read the locks (will retry): ${messageOf(error)}\n`);
    }
    await pause(args.intervalMs, stop);
  }
}

async function serve(args: InspectArgs, read: () => Promise<LockViewData>, output: Output, stop: AbortSignal): Promise<void> {
  const page = renderPage(args.intervalMs);
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET') {
      response.writeHead(405, { Allow: 'GET' }).end();
    } else if (path === '/') {
      response.writeHead(200, PAGE_HEADERS).end(page);
    } else if (path === '/data') {
      read().then(
        (view) => response.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end(JSON.stringify(view)),
        (error: unknown) => response.writeHead(503, { 'Content-Type': 'text/plain' }).end(`Could not read the locks: ${messageOf(error)}`),
      );
    } else {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found: the page is at / and its JSON at /data');
    }
  });
  server.listen(args.port, '127.0.0.1');
  try {
    await Promise.race([once(server, 'listening'), once(server, 'error').then(([error]) => Promise.reject(error as Error))]);
  } catch (error) {
    throw new CliUsageError(`Cannot serve on 127.0.0.1:${args.port} (${messageOf(error)}): pick another --port, or --port 0 for any free one`);
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : args.port;
  output.out(`Serving the live view of ${describeTargets(args)} at http://127.0.0.1:${port}/ (Ctrl+C stops)\n`);
  await new Promise<void>((resolve) => stop.addEventListener('abort', () => resolve(), { once: true }));
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** `/locks`, or `/locks, /billing/lock (curator) and the locks under /jobs`. */
function describeTargets(args: InspectArgs): string {
  const parts = [
    args.root,
    ...args.paths.map((path) => (path.layout ? `${path.zkPath} (${path.layout})` : path.zkPath)),
    ...args.scan.map((scan) => `the ${scan.layout ? `${scan.layout} ` : ''}locks under ${scan.root}`),
  ];
  return parts.length === 1 ? parts[0]! : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)!}`;
}
