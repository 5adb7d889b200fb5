/** What every command needs to reach ZooKeeper, and how its failures are told on the command line. */
import { InvalidOptionsError, ZkConnectionError, ZkLockError, ZkTlsError } from '../errors.js';
import { RecipeRuntime } from '../recipes/recipe-runtime.js';
import { ZkConnection } from '../zookeeper/zk-connection.js';
import { CliUsageError, type ConnectionArgs } from './args.js';

/** Where a command writes; the process's streams, or a test's. */
export interface Output {
  out(text: string): void;
  err(text: string): void;
}

/** Options turned into a connection and a runtime, with the CLI's flag names in any complaint. */
export function openConnection(args: ConnectionArgs): { connection: ZkConnection; runtime: RecipeRuntime } {
  let connection: ZkConnection;
  try {
    connection = new ZkConnection({
      connectionString: args.connect,
      connectTimeoutMs: args.timeoutMs,
      ...(args.digest === undefined ? {} : { digest: args.digest }),
      ...(args.tls === undefined ? {} : { tls: args.tls }),
    });
  } catch (error) {
    const option = error instanceof InvalidOptionsError ? error.option : '';
    const flag =
      option === 'digest' ? '--digest' : option === 'tls.passphrase' ? 'ZK_LOCK_TLS_PASSPHRASE' : option.startsWith('tls') ? `--tls-${option.slice(4) || 'ca'}` : '--connect';
    throw new CliUsageError(`Bad ${flag}: ${messageOf(error)}`);
  }
  try {
    return { connection, runtime: new RecipeRuntime(connection, { rootPath: args.root }) };
  } catch (error) {
    throw new CliUsageError(`Bad --root: ${messageOf(error)}`);
  }
}

/** Connects, or throws ZkUnreachableError saying which flag to check. */
export async function connect(connection: ZkConnection, args: ConnectionArgs): Promise<void> {
  await connection.connect().catch((error: unknown) => {
    if (!(error instanceof ZkConnectionError)) throw error;
    if (error instanceof ZkTlsError) {
      const flags = error.failure === 'hostname-mismatch' ? '--connect (the host names), or --tls-any-hostname' : '--tls-ca, --tls-cert and --tls-key';
      throw new ZkUnreachableError(`${error.message} Here: check ${flags}.`);
    }
    throw new ZkUnreachableError(`${error.message} Here: check --connect, or raise --timeout (now ${args.timeoutMs} ms) on a slow network.`);
  });
}

/** No ZooKeeper server answered: exit code 1, and the message says what to check. */
export class ZkUnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ZkUnreachableError';
  }
}

export function messageOf(error: unknown): string {
  if (error instanceof ZkLockError || error instanceof Error) return error.message;
  return String(error);
}
