import { isIP } from 'node:net';
import { connect as tlsConnect, type PeerCertificate, rootCertificates, type TLSSocket } from 'node:tls';
import { ZkTlsError } from '../errors.js';
import { parseConnectString, reachedAs, type ResolvedHosts } from './connect-string.js';
import { mismatchDetail, namesHost } from './zk-tls-names.js';
import type { CheckedTls } from './zk-tls.options.js';

/** What a TLS probe of one server found. */
type TlsProbeResult =
  | { readonly outcome: 'ok' }
  /** Nothing to conclude (refused, unreachable, too slow): the C client's own retries decide. */
  | { readonly outcome: 'inconclusive'; readonly detail: string }
  | { readonly outcome: 'failed'; readonly failure: ZkTlsFailure; readonly detail: string };

/**
 * Why a TLS start-up failed:
 * - `server-not-trusted`: the server's certificate is not signed by `tls.ca` (or has expired, ...);
 * - `client-refused`: the server refused this client's certificate, or wanted one and got none;
 * - `not-tls`: `tls` is set but the port does not speak TLS (a plain clientPort?);
 * - `tls-required`: `tls` is not set but the port speaks TLS only (a secureClientPort);
 * - `hostname-mismatch`: the server's certificate (signed by `tls.ca`) does not name the host it
 *   was reached by (`tls.verifyHostname`).
 */
export type ZkTlsFailure = 'server-not-trusted' | 'client-refused' | 'not-tls' | 'tls-required' | 'hostname-mismatch';

/** A server to probe: its address, and the name it was reached by (the address itself, or a host name). */
interface ProbedServer {
  readonly address: string;
  readonly port: number;
  readonly name: string;
}

/** How long a probe waits, after its handshake, for the server to refuse the client's certificate (TLS 1.3 does it then). */
const REFUSAL_GRACE_MS = 300;

/**
 * A TLS handshake with `host:port` through Node's own TLS (the same OpenSSL the C client uses in
 * this process), to tell a misconfiguration from a slow server: the C client retries a failed
 * handshake forever and reports nothing. With `tls`, it checks what the C client checks: the chain
 * against `tls.ca`, and the name the server was reached by (unless `tls.verifyHostname` is false;
 * sent as SNI when it is a DNS name). The C client also trusts OpenSSL's default verify paths (the
 * system's CAs): a chain `tls.ca` does not verify is tried once more with Node's bundled root CAs
 * before it counts as untrusted (only then: building a context with them takes some 20 ms of the
 * event loop). A refused client is tried once more too. Without `tls` (undefined), it only asks
 * whether the port speaks TLS.
 */
async function probeTls(server: ProbedServer, tls: CheckedTls | undefined, timeoutMs: number, signal?: AbortSignal): Promise<TlsProbeResult> {
  const started = Date.now();
  const result = await handshake(server, tls, false, timeoutMs, signal);
  if (result.outcome !== 'failed' || signal?.aborted) return result;
  if (result.failure === 'client-refused') {
    // A server that refuses this client refuses it again; one that was closing every connection
    // (leaving the quorum, shutting down) as the first handshake ended does not.
    const again = await handshake(server, tls, false, Math.max(1, timeoutMs - (Date.now() - started)), signal);
    return again.outcome === 'failed' && again.failure === 'client-refused' ? result : { outcome: 'inconclusive', detail: `${result.detail}; not again` };
  }
  if (result.failure !== 'server-not-trusted') return result;
  const again = await handshake(server, tls, true, Math.max(1, timeoutMs - (Date.now() - started)), signal);
  return again.outcome === 'failed' && again.failure === 'server-not-trusted' ? result : { outcome: 'inconclusive', detail: `${result.detail}; trusted with the default root CAs` };
}

function handshake(server: ProbedServer, tls: CheckedTls | undefined, withRoots: boolean, timeoutMs: number, signal?: AbortSignal): Promise<TlsProbeResult> {
  return new Promise((resolve) => {
    let socket: TLSSocket | undefined;
    let tcpConnected = false;
    let handshook = false;
    /** Set when the chain was good but the certificate names another host. */
    let mismatch: string | undefined;
    const checkName = (_host: string, certificate: PeerCertificate): Error | undefined => {
      if (!tls?.verifyHostname || namesHost(certificate.raw, server.name)) return undefined;
      mismatch = mismatchDetail(certificate.raw, server.name);
      return new Error(mismatch);
    };
    let settled = false;
    const finish = (result: TlsProbeResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      signal?.removeEventListener('abort', onAbort);
      socket?.destroy();
      resolve(result);
    };
    const onAbort = (): void => finish({ outcome: 'inconclusive', detail: 'aborted' });
    const timer = setTimeout(() => finish({ outcome: 'inconclusive', detail: `no TLS answer within ${timeoutMs} ms` }), timeoutMs);
    let grace: NodeJS.Timeout | undefined;
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      socket = tlsConnect({
        host: server.address,
        port: server.port,
        // SNI, as the C client sends it: DNS names only.
        ...(tls?.verifyHostname && !isIP(server.name) && { servername: server.name }),
        ...(tls
          ? {
              ca: withRoots ? [tls.ca, ...rootCertificates] : tls.ca,
              ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key, passphrase: tls.options.passphrase } : {}),
              rejectUnauthorized: true,
            }
          : { rejectUnauthorized: false }),
        checkServerIdentity: checkName,
      });
    } catch (error) {
      return finish({ outcome: 'inconclusive', detail: (error as Error).message });
    }
    socket.once('connect', () => {
      tcpConnected = true;
    });
    socket.once('secureConnect', () => {
      handshook = true;
      if (!tls) return finish({ outcome: 'failed', failure: 'tls-required', detail: 'the port completed a TLS handshake: it is a TLS port' });
      // The server may still refuse the client's certificate (TLS 1.3 does it after the handshake).
      grace = setTimeout(() => finish({ outcome: 'ok' }), REFUSAL_GRACE_MS);
    });
    socket.on('data', () => finish({ outcome: 'ok' }));
    socket.once('error', (error: NodeJS.ErrnoException) =>
      finish(mismatch !== undefined ? { outcome: 'failed', failure: 'hostname-mismatch', detail: mismatch } : classify(error, tls !== undefined, tcpConnected, handshook)),
    );
    socket.once('close', () => {
      if (handshook) finish(tls ? { outcome: 'failed', failure: 'client-refused', detail: 'the server closed the connection right after the TLS handshake' } : { outcome: 'ok' });
      else if (tcpConnected) finish(classifyClosed(tls !== undefined));
      else finish({ outcome: 'inconclusive', detail: 'the connection closed' });
    });
  });
}

const VERIFY_CODES = /CERT|SELF_SIGNED|UNABLE_TO_(GET_ISSUER|VERIFY)|ERR_TLS_CERT/;

function classify(error: NodeJS.ErrnoException, withTls: boolean, tcpConnected: boolean, handshook: boolean): TlsProbeResult {
  const code = error.code ?? '';
  // OpenSSL's messages end in a line break and may hold several lines: one line in ours.
  const detail = `${code ? `${code}: ` : ''}${error.message.replace(/\s+/g, ' ').trim()}`;
  if (!tcpConnected) return { outcome: 'inconclusive', detail }; // refused, unreachable: the C client retries
  const alert = /ALERT/.test(code);
  if (!withTls) {
    // A TLS alert (the server wanted a client certificate, ...) is an answer in TLS all the same.
    return alert || handshook ? { outcome: 'failed', failure: 'tls-required', detail: `the port answered in TLS (${detail})` } : { outcome: 'inconclusive', detail };
  }
  if (alert) return { outcome: 'failed', failure: 'client-refused', detail };
  if (VERIFY_CODES.test(code)) return { outcome: 'failed', failure: 'server-not-trusted', detail };
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG' || code === 'ECONNRESET' || /before secure TLS connection/.test(error.message)) {
    return handshook ? { outcome: 'failed', failure: 'client-refused', detail } : { outcome: 'failed', failure: 'not-tls', detail };
  }
  return { outcome: 'inconclusive', detail };
}

function classifyClosed(withTls: boolean): TlsProbeResult {
  return withTls
    ? { outcome: 'failed', failure: 'not-tls', detail: 'the server closed the connection without answering the TLS handshake' }
    : { outcome: 'inconclusive', detail: 'the connection closed' };
}

/**
 * Rejects with ZkTlsError when a TLS probe of a server of `connectString` (see probeTls) finds a
 * definite failure and no probe of another server succeeded; otherwise never settles. With `tls`,
 * every server is probed at once; without, only if no session is up after half the connect timeout,
 * and only to ask whether the port speaks TLS only. A server that answered in TLS as expected lets
 * the C client connect there: a member that is down behind a TCP proxy (which accepts, then drops
 * the connection, as a plain port does) or closing its connections as it restarts must not fail
 * the start-up, so the verdict waits for every probe.
 */
export function tlsFailureOf(
  connectionString: string,
  resolved: ResolvedHosts,
  tls: CheckedTls | undefined,
  connectTimeoutMs: number,
  signal: AbortSignal,
): Promise<never> {
  return new Promise<never>((_, reject) => {
    const servers = parseConnectString(resolved.connect).hosts.map(({ host, port }) => ({ address: host, port, name: reachedAs(resolved, host, port) }));
    const probeAll = (budgetMs: number): void => {
      let pending = servers.length;
      let answered = false;
      let failure: ZkTlsError | undefined;
      for (const probed of servers) {
        void probeTls(probed, tls, budgetMs, signal).then((result) => {
          if (signal.aborted) return;
          const { address, port, name } = probed;
          const server = `${name.includes(':') ? `[${name}]` : name}:${port}${name === address ? '' : ` (${address})`}`;
          if (result.outcome === 'ok') answered = true;
          if (result.outcome === 'failed') failure ??= new ZkTlsError(connectionString, server, result.failure, result.detail, TLS_ADVICE[result.failure]);
          pending -= 1;
          if (pending === 0 && !answered && failure) reject(failure);
        });
      }
    };
    if (tls) return probeAll(connectTimeoutMs);
    const later = setTimeout(() => probeAll(Math.max(1, connectTimeoutMs / 2)), connectTimeoutMs / 2);
    signal.addEventListener('abort', () => clearTimeout(later), { once: true });
  });
}

/** What to do about each failure, for ZkTlsError's message. */
export const TLS_ADVICE: Record<ZkTlsFailure, string> = {
  'server-not-trusted':
    "Give in tls.ca the CA certificate that signed the servers' certificates (their ssl.keyStore), in PEM; check that those have not expired.",
  'client-refused':
    "The server refused this client: give tls.cert and tls.key (a certificate signed by a CA in the servers' ssl.trustStore), " +
    'or check that the one given is signed by it and has not expired.',
  'not-tls':
    "That port does not speak TLS: point connectionString at the servers' secureClientPort (serverCnxnFactory must be " +
    'NettyServerCnxnFactory), or drop the tls option for a plain clientPort. If it is the secureClientPort, the server ' +
    "cannot run TLS: Debian's zookeeper package needs netty-codec.jar, netty-resolver.jar and " +
    "netty-transport-native-unix-common.jar added to the server's class path (see docs/operations.md#tls in the package's repository).",
  'tls-required': "That port speaks TLS only (a secureClientPort): set the tls option (tls.ca at least), or connect to the servers' plain clientPort.",
  'hostname-mismatch':
    'Write in connectionString a name (or IP address) that the server\'s certificate holds, or give the server a certificate ' +
    'whose subject alternative names hold the name connectionString writes. tls.verifyHostname: false accepts a certificate ' +
    'tls.ca signed for any host, from any server: whoever holds one can stand in for the ensemble.',
};
