import { accessSync, constants, statSync } from 'node:fs';
import { InvalidOptionsError, shown } from '../errors.js';

/**
 * SASL authentication with ZooKeeper, as its Java client (and so Curator) and kazoo do it: before a
 * session counts as connected, and again on every reconnect and every new session. The server must
 * be configured for the same mechanism (its JAAS `Server` section, see docs/operations.md "Security").
 */
export type ZkSaslOptions = ZkSaslDigestOptions | ZkSaslKerberosOptions;

/** DIGEST-MD5: a user and password from the servers' JAAS `Server` section (`user_<name>="<password>"`). */
export interface ZkSaslDigestOptions {
  /** DIGEST-MD5 (RFC 2831), as ZooKeeper's DigestLoginModule serves it. */
  mechanism: 'DIGEST-MD5';
  /** The user name; the session's SASL identity (ACL id `sasl:<username>`). */
  username: string;
  /** Its password (never logged). */
  password: string;
}

/**
 * GSSAPI (Kerberos V5), with the machine's MIT Kerberos GSS-API library (`libgssapi_krb5.so.2`),
 * loaded only when this mechanism is configured. The Kerberos configuration is the machine's
 * (`/etc/krb5.conf`, or `KRB5_CONFIG`).
 */
export interface ZkSaslKerberosOptions {
  /** GSSAPI (RFC 4752), Kerberos V5, as ZooKeeper's Krb5LoginModule serves it. */
  mechanism: 'GSSAPI';
  /** The client's principal, `name[/instance]@REALM`. */
  principal: string;
  /**
   * Path of a keytab holding the principal's key: tickets are then obtained from it, and renewed,
   * in this process's memory.
   * @default undefined (Kerberos' defaults: the credential cache from `kinit`, or the keytab in KRB5_CLIENT_KTNAME)
   */
  keytab?: string;
  /**
   * The first part of the servers' principals (`<serviceName>/<host>@REALM`), as the Java client's
   * `zookeeper.sasl.client.username`.
   * @default 'zookeeper'
   */
  serviceName?: string;
  /**
   * The host part of the servers' principals, the same for every server.
   * @default each server's host name as written in connectionString (an address stays an address)
   */
  serviceHost?: string;
}

/** The mechanisms and their fields. */
const FIELDS = {
  'DIGEST-MD5': ['mechanism', 'username', 'password'],
  GSSAPI: ['mechanism', 'principal', 'keytab', 'serviceName', 'serviceHost'],
} as const;

/** The `sasl` option, checked: what the binding is given (see zk_sasl_setup.h), and who it makes us. */
export interface CheckedSasl {
  readonly mechanism: ZkSaslOptions['mechanism'];
  /** The DIGEST-MD5 user or the Kerberos principal. */
  readonly user: string;
  readonly password?: string;
  readonly keytab?: string;
  readonly service: string;
  /** The server's name in the mechanism; undefined: each server's name from connectionString (GSSAPI). */
  readonly host?: string;
  /**
   * The names a server may give this identity in `sasl` ACLs: the user, or the principal with and
   * without its host and realm (the servers' kerberos.removeHostFromPrincipal/removeRealmFromPrincipal).
   */
  readonly names: readonly string[];
}

/** The name of the servers in DIGEST-MD5 (its digest-uri is `zookeeper/zk-sasl-md5`), fixed by ZooKeeper. */
const DIGEST_SERVER_NAME = 'zk-sasl-md5';

function text(value: unknown, field: string, what: string): string {
  if (typeof value !== 'string' || value === '' || /[\u0000-\u001f]/.test(value)) {
    throw new InvalidOptionsError(`sasl.${field}`, `must be ${what} (a non-empty string without control characters), got ${shown(value)}`);
  }
  return value;
}

/**
 * Checks the `sasl` option at construction.
 * @throws InvalidOptionsError naming `sasl` or `sasl.<field>`.
 */
export function checkSasl(value: unknown): CheckedSasl | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidOptionsError('sasl', `must be { mechanism: 'DIGEST-MD5', username, password } or { mechanism: 'GSSAPI', principal, keytab? }, got ${shown(value)}`);
  }
  const given = value as Record<string, unknown>;
  const mechanism = given.mechanism;
  if (mechanism !== 'DIGEST-MD5' && mechanism !== 'GSSAPI') {
    throw new InvalidOptionsError(
      'sasl.mechanism',
      `${shown(mechanism)} is not a SASL mechanism this client speaks: use 'DIGEST-MD5' (a user and password of the servers' JAAS Server section) or 'GSSAPI' (Kerberos)`,
    );
  }
  const fields: readonly string[] = FIELDS[mechanism];
  for (const field of Object.keys(given)) {
    if (!fields.includes(field)) {
      throw new InvalidOptionsError(`sasl.${field}`, `is not an option of SASL ${mechanism}: its fields are ${fields.join(', ')}`);
    }
  }
  if (mechanism === 'DIGEST-MD5') {
    const user = text(given.username, 'username', 'the user name of the servers\' JAAS Server section');
    const password = text(given.password, 'password', 'its password');
    return { mechanism, user, password, service: 'zookeeper', host: DIGEST_SERVER_NAME, names: [user] };
  }
  const principal = text(given.principal, 'principal', 'a Kerberos principal, name[/instance]@REALM');
  const keytab = given.keytab === undefined ? undefined : checkKeytab(given.keytab);
  const service = given.serviceName === undefined ? 'zookeeper' : text(given.serviceName, 'serviceName', 'the first part of the servers\' principals');
  if (/[/@]/.test(service)) throw new InvalidOptionsError('sasl.serviceName', `${shown(service)} must be only the first part of the servers' principals, without "/" or "@"`);
  const host = given.serviceHost === undefined ? undefined : text(given.serviceHost, 'serviceHost', 'the host part of the servers\' principals');
  return { mechanism, user: principal, ...(keytab && { keytab }), service, ...(host && { host }), names: principalNames(principal) };
}

function checkKeytab(value: unknown): string {
  const file = text(value, 'keytab', 'the path of a keytab file');
  try {
    if (!statSync(file).isFile()) throw new Error('not a file');
    accessSync(file, constants.R_OK);
  } catch (error) {
    throw new InvalidOptionsError('sasl.keytab', `${shown(file)} is not a readable file (${(error as Error).message}): give the path of the client's keytab (ktutil, or kadmin's ktadd)`);
  }
  return file;
}

/** `name/host@REALM`, and the names a server may shorten it to (see CheckedSasl.names). */
function principalNames(principal: string): string[] {
  const at = principal.lastIndexOf('@');
  const name = at < 0 ? principal : principal.slice(0, at);
  const realm = at < 0 ? '' : principal.slice(at);
  const slash = name.indexOf('/');
  const short = slash < 0 ? name : name.slice(0, slash);
  return [...new Set([principal, name, short + realm, short])];
}

/**
 * What the binding takes as its init object's `sasl`: the checked option, and for GSSAPI without
 * serviceHost, the name each server address was looked up from (`names`, address to name), since
 * the C client only knows the addresses.
 */
export function nativeSasl(sasl: CheckedSasl, names: ReadonlyMap<string, string>): Record<string, string> {
  return {
    mechanism: sasl.mechanism,
    user: sasl.user,
    service: sasl.service,
    ...(sasl.password !== undefined && { password: sasl.password }),
    ...(sasl.keytab !== undefined && { keytab: sasl.keytab }),
    ...(sasl.host !== undefined ? { host: sasl.host } : { host_map: [...names].map(([address, name]) => `${address}=${name}`).join('\n') }),
  };
}
