import { parseArgs } from 'node:util';
import type { ZkTlsOptions } from '../zookeeper/zk-tls.options.js';
import type { LockLayout } from '../queue/layouts.js';
import type { LockAtPath, LockScan } from '../recipes/inspect-elsewhere.js';

/** A command line the CLI cannot run: the message says what to change. Exit code 2. */
export class CliUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliUsageError';
  }
}

/** What every command needs to reach ZooKeeper. */
export interface ConnectionArgs {
  /** `host:port[,host:port][/chroot]` */
  readonly connect: string;
  /** @default '/locks' */
  readonly root: string;
  readonly digest: string | undefined;
  /** TLS files (--tls-ca, --tls-cert, --tls-key; the key's passphrase from ZK_LOCK_TLS_PASSPHRASE), --tls-any-hostname. */
  readonly tls: ZkTlsOptions | undefined;
  /** How long to wait for ZooKeeper (the first session, then each read), in ms. @default 10000 */
  readonly timeoutMs: number;
}

export interface InspectArgs extends ConnectionArgs {
  readonly watch: boolean;
  /** Between refreshes (--watch) and the page's polls (--serve), in ms. @default 2000 */
  readonly intervalMs: number;
  readonly json: boolean;
  readonly serve: boolean;
  /** Port for --serve, on 127.0.0.1; 0 picks a free one. @default 7181 */
  readonly port: number;
  /** Locks at exact paths (--path), each in --layout or the layout its nodes show. */
  readonly paths: readonly LockAtPath[];
  /** Paths whose children are locks (--scan), of --layout only when given. */
  readonly scan: readonly LockScan[];
}

export interface RevokeArgs extends ConnectionArgs {
  /** The lock: a resource under --root, or an exact path (--path). */
  readonly resource: string | undefined;
  readonly path: string | undefined;
  readonly layout: LockLayout;
  /** Delete the holders' nodes still there after this many ms. */
  readonly forceAfterMs: number | undefined;
  readonly json: boolean;
}

export type Command = { name: 'help' } | { name: 'inspect'; args: InspectArgs } | { name: 'revoke'; args: RevokeArgs };

export const USAGE = `Usage: nestjs-zk-lock inspect --connect host:port[,host:port] [options]
       nestjs-zk-lock revoke --connect host:port (--resource <name> | --path <zkPath>) [options]

inspect shows every lock under the root path: its holders and its waiters in queue order, with how
long each has been in the queue; with --path and --scan, also the locks of Curator and kazoo
services (and ours at a zkPath), each read by its layout's rules. A leader election shows as kind
election: its leader, then its followers in line, each with its id (a Curator LeaderLatch too).

revoke asks the holders of one lock to release it (Curator's revocation: holders that took it with
onReleaseRequest, and Curator holders made revocable, hear it); with --force-after, the nodes of
holders still there after that many ms are deleted, and the lock is taken from them.

Options of both:
  --connect <hosts>      ZooKeeper servers, e.g. 127.0.0.1:2181 or zk1:2181,zk2:2181/chroot (required)
  --root <path>          root path of the locks (default: /locks)
  --digest <user:pass>   digest credential, if the lock paths need one to be read; the
                         ZK_LOCK_DIGEST environment variable keeps it out of the process list
  --tls-ca <file>        TLS to the servers' secureClientPort: PEM of the CA that signed
                         their certificates
  --tls-cert <file>      with --tls-key: PEM client certificate, for servers that require one
  --tls-key <file>       its PEM private key; ZK_LOCK_TLS_PASSPHRASE holds the passphrase of
                         an encrypted one
  --tls-any-hostname     accept a server certificate the CA signed for any host (by default it
                         must name the host --connect writes)
  --timeout <ms>         how long to wait for ZooKeeper to answer (default: 10000)
  -h, --help             show this help

Options of inspect:
  --watch                refresh until Ctrl+C
  --interval <ms>        refresh interval for --watch and --serve (default: 2000)
  --json                 print JSON instead of a table (one line per refresh with --watch)
  --serve                serve the live page on http://127.0.0.1:<port>/ until Ctrl+C
  --port <n>             port for --serve, 0 for any free one (default: 7181)
  --path <zkPath>        also the lock at this exact path (repeatable)
  --scan <path>          also every lock among the children of this path (repeatable)
  --layout <name>        the layout of every --path, and the only one --scan shows: curator,
                         kazoo or nestjs-zk-lock (default: told by each lock's node names)

Options of revoke:
  --resource <name>      the lock of this resource, under --root
  --path <zkPath>        or the lock at this exact path (a Curator or kazoo service's)
  --layout <name>        whose nodes: nestjs-zk-lock (default), curator or kazoo
  --force-after <ms>     delete the holders' nodes still there after this long
  --json                 print the nodes asked, not asked and forced as JSON
`;

const DEFAULTS = { root: '/locks', intervalMs: 2000, port: 7181, timeoutMs: 10_000 };

/** Parses `process.argv.slice(2)`. @throws CliUsageError */
export function parseCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        connect: { type: 'string' },
        root: { type: 'string' },
        digest: { type: 'string' },
        'tls-ca': { type: 'string' },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
        'tls-any-hostname': { type: 'boolean' },
        watch: { type: 'boolean' },
        interval: { type: 'string' },
        json: { type: 'boolean' },
        serve: { type: 'boolean' },
        port: { type: 'string' },
        timeout: { type: 'string' },
        resource: { type: 'string' },
        path: { type: 'string', multiple: true },
        scan: { type: 'string', multiple: true },
        layout: { type: 'string' },
        'force-after': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new CliUsageError(`${error instanceof Error ? error.message : String(error)}. Run nestjs-zk-lock --help for the options.`);
  }
  const { values, positionals } = parsed;
  if (values.help) return { name: 'help' };
  if (positionals.length === 0) throw new CliUsageError('Missing command: `inspect` or `revoke`. Run nestjs-zk-lock --help.');
  const name = positionals[0];
  if ((name !== 'inspect' && name !== 'revoke') || positionals.length > 1) {
    throw new CliUsageError(`Unknown command "${positionals.join(' ')}": the commands are \`inspect\` and \`revoke\`. Run nestjs-zk-lock --help.`);
  }
  if (!values.connect) {
    throw new CliUsageError('--connect is required: the ZooKeeper servers, e.g. --connect 127.0.0.1:2181');
  }
  if ((values['tls-cert'] !== undefined || values['tls-key'] !== undefined || values['tls-any-hostname']) && values['tls-ca'] === undefined) {
    throw new CliUsageError('--tls-cert, --tls-key and --tls-any-hostname need --tls-ca (the CA that signed the servers\' certificates)');
  }
  const passphrase = env.ZK_LOCK_TLS_PASSPHRASE || undefined;
  const connection: ConnectionArgs = {
    connect: values.connect,
    root: values.root ?? DEFAULTS.root,
    digest: values.digest ?? (env.ZK_LOCK_DIGEST || undefined),
    tls:
      values['tls-ca'] === undefined
        ? undefined
        : {
            ca: values['tls-ca'],
            ...(values['tls-cert'] === undefined ? {} : { cert: values['tls-cert'] }),
            ...(values['tls-key'] === undefined ? {} : { key: values['tls-key'] }),
            ...(passphrase === undefined || values['tls-key'] === undefined ? {} : { passphrase }),
            ...(values['tls-any-hostname'] ? { verifyHostname: false } : {}),
          },
    timeoutMs: integer(values.timeout, '--timeout', DEFAULTS.timeoutMs, 100, 600_000),
  };
  if (name === 'revoke') {
    for (const flag of ['watch', 'serve', 'interval', 'port', 'scan'] as const) {
      if (values[flag] !== undefined) throw new CliUsageError(`--${flag} is an option of inspect, not of revoke`);
    }
    if ((values.resource === undefined) === (values.path === undefined) || (values.path?.length ?? 0) > 1) {
      throw new CliUsageError('revoke needs one lock: either --resource <name> (under --root) or --path <zkPath>');
    }
    return {
      name: 'revoke',
      args: {
        ...connection,
        resource: values.resource,
        path: values.path?.[0],
        layout: layoutOf(values.layout) ?? 'nestjs-zk-lock',
        forceAfterMs: values['force-after'] === undefined ? undefined : integer(values['force-after'], '--force-after', 0, 0, 2_147_483_647),
        json: values.json ?? false,
      },
    };
  }
  for (const flag of ['resource', 'force-after'] as const) {
    if (values[flag] !== undefined) throw new CliUsageError(`--${flag} is an option of revoke, not of inspect`);
  }
  const layout = layoutOf(values.layout);
  if (layout !== undefined && values.path === undefined && values.scan === undefined) {
    throw new CliUsageError('--layout needs --path or --scan: the locks under --root are always read in this library\'s layout');
  }
  if (values.serve && values.json) throw new CliUsageError('--serve and --json do not go together: pick one');
  if (values.serve && values.watch) throw new CliUsageError('--serve refreshes the page by itself: drop --watch');
  if (values.interval !== undefined && !values.watch && !values.serve) {
    throw new CliUsageError('--interval needs --watch or --serve');
  }
  if (values.port !== undefined && !values.serve) throw new CliUsageError('--port needs --serve');
  return {
    name: 'inspect',
    args: {
      ...connection,
      watch: values.watch ?? false,
      intervalMs: integer(values.interval, '--interval', DEFAULTS.intervalMs, 100, 3_600_000),
      json: values.json ?? false,
      serve: values.serve ?? false,
      port: integer(values.port, '--port', DEFAULTS.port, 0, 65_535),
      paths: (values.path ?? []).map((zkPath) => ({ zkPath, ...(layout === undefined ? {} : { layout }) })),
      scan: (values.scan ?? []).map((root) => ({ root, ...(layout === undefined ? {} : { layout }) })),
    },
  };
}

function layoutOf(text: string | undefined): LockLayout | undefined {
  if (text === undefined || text === 'nestjs-zk-lock' || text === 'curator' || text === 'kazoo') return text;
  throw new CliUsageError(`--layout must be nestjs-zk-lock, curator or kazoo, got ${JSON.stringify(text)}`);
}

function integer(text: string | undefined, flag: string, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new CliUsageError(`${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  }
  return value;
}
