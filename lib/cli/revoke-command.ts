import { requestRelease } from '../recipes/release-request.js';
import type { RevokeArgs } from './args.js';
import { connect, openConnection, type Output } from './cli-connection.js';

/**
 * `nestjs-zk-lock revoke`: asks the holders of one lock to release it (LockService.requestRelease),
 * and with --force-after deletes the nodes of those still there after that long. Prints which nodes
 * were asked, which could not be (our plain exclusive and write locks: only forced), and which were forced.
 */
export async function runRevoke(args: RevokeArgs, output: Output, stop: AbortSignal): Promise<void> {
  const { connection, runtime } = openConnection(args);
  try {
    await connect(connection, args);
    const label = args.resource ?? (args.path as string);
    const path = runtime.pathFor(label, args.path);
    const result = await requestRelease(runtime, path, args.layout, { forceAfterMs: args.forceAfterMs, signal: stop });
    if (args.json) {
      output.out(`${JSON.stringify(result, null, 2)}\n`);
      return;
    }
    const lines = [`Lock ${result.path} (${args.layout} layout):`];
    if (result.requested.length + result.notAsked.length === 0) lines.push('  nobody holds it.');
    for (const node of result.requested) lines.push(`  asked to release: ${node}${result.forced.includes(node) ? ' (still there: forced)' : ''}`);
    for (const node of result.notAsked) {
      lines.push(`  not revocable (taken without onReleaseRequest): ${node}${result.forced.includes(node) ? ' (forced)' : ''}`);
    }
    if (args.forceAfterMs === undefined && result.notAsked.length > 0) lines.push('  --force-after <ms> deletes such nodes: their holders lose the lock.');
    output.out(`${lines.join('\n')}\n`);
  } finally {
    connection.close();
  }
}
