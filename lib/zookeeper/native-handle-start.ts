import { ZkConnectionError, ZkNativeAddonError } from '../errors.js';
import { type ClientLogLevel, CLIENT_LOG_LEVELS, loadNativeModule, type NativeClient, type NativeConfig } from './native-client.js';
import { type ResolvedHosts, shuffleHosts } from './connect-string.js';
import type { ZkSession } from './zk-session.js';
import type { CheckedTls } from './zk-tls.options.js';
import { type CheckedSasl, nativeSasl } from './zk-sasl.options.js';

/** Far more empty polls than any outage produces: the binding's own give-up never fires. */
const NEVER_GIVE_UP = 2_000_000_000;

/** What a connection opens its native handles with: its options, checked. */
export interface HandleSettings {
  readonly connectionString: string;
  readonly sessionTimeoutMs: number;
  /** The lease margin asked for, in ms; undefined: the default share of each session's timeout. */
  readonly leaseMarginMs: number | undefined;
  readonly clientLogLevel: ClientLogLevel;
  readonly digest: string | undefined;
  readonly tlsFiles: CheckedTls | undefined;
  readonly saslOptions: CheckedSasl | undefined;
}

/**
 * A new native handle, not started yet (its owner listens to its events first, see startNative),
 * with its config: for a new session, or to go on with `resume`.
 */
export function createNative(
  settings: HandleSettings,
  resolved: ResolvedHosts,
  hostNames: ReadonlyMap<string, string>,
  resume?: { session: ZkSession; password: string },
): { client: NativeClient; config: NativeConfig } {
  const Native = loadNativeModule();
  const config = {
    ...(resume && { client_id: resume.session.id, client_password: resume.password }),
    // Asked to pick servers in random order, the C client shuffles its host list again on every
    // readiness check, reading /dev/urandom each time (three system calls per request). Shuffled
    // once per handle here instead, the clients spread over the servers just the same.
    connect: shuffleHosts(resolved.connect),
    timeout: settings.sessionTimeoutMs,
    debug_level: CLIENT_LOG_LEVELS[settings.clientLogLevel],
    host_order_deterministic: true,
    // The binding closes a handle as if its session had expired once the C client has had nothing
    // to process ten times in a row, which is what reconnecting looks like while one server of the
    // connect string is down: live sessions were declared expired and fresh handles never got to
    // the servers that were up. Session loss is the connection's decision (see SessionHandles).
    response_counter_limit: NEVER_GIVE_UP,
    // zookeeper_init_ssl's "ca,cert,key,passphrase" (checked: no commas in the parts).
    ...(settings.tlsFiles && { cert: settings.tlsFiles.initString, tls_names: [...resolved.names], tls_any_name: !settings.tlsFiles.verifyHostname }),
    ...(settings.saslOptions && { sasl: nativeSasl(settings.saslOptions, hostNames) }),
  };
  return { client: new Native(config), config };
}

/**
 * Starts the C client of a handle made by createNative, and queues the digest credential.
 * @throws ZkNativeAddonError when the addon was built without the TLS the config asks for.
 * @throws ZkConnectionError when the C client refuses the connect string.
 */
export function startNative(client: NativeClient, config: NativeConfig, settings: HandleSettings): void {
  let started: unknown;
  try {
    started = client.native.init(config);
  } catch (error) {
    if (!config.cert) throw error;
    throw new ZkNativeAddonError(
      `it was built without TLS, which the tls option needs (${(error as Error).message}; native/c-client/nestjs-zk-lock-build.json says why: ` +
        'this Node.js had no OpenSSL headers in include/node/openssl, or the C client sources were not the ones the install script can make ' +
        'non-blocking). Rebuild it with `npm rebuild nestjs-zk-lock` under a Node.js that has them (the official builds do)',
    );
  }
  if (started instanceof Error) {
    throw new ZkConnectionError(settings.connectionString, `the ZooKeeper client refused it (${started.message})`, {
      cause: started,
    });
  }
  // Queued by the C client ahead of every request, and sent again after each reconnect. A digest
  // is never refused: a wrong password is merely another identity, which the ACLs then refuse.
  if (settings.digest) client.native.add_auth('digest', settings.digest, () => undefined);
}
