import { createHash } from 'node:crypto';
import { InvalidOptionsError } from '../errors.js';

/** ZooKeeper permission bits. */
export const ZK_PERMS = { READ: 1, WRITE: 2, CREATE: 4, DELETE: 8, ADMIN: 16, ALL: 31 } as const;

/** One ACL entry: who (`scheme` + `id`) may do what (`perms`, a sum of ZK_PERMS). */
export interface ZkAcl {
  readonly scheme: string;
  readonly id: string;
  readonly perms: number;
}

/** Checks a digest credential, `user:password`. */
export function validateDigest(value: unknown): string {
  if (typeof value !== 'string' || !/^[^:\s]+:.+$/.test(value)) {
    throw new InvalidOptionsError('digest', 'must be "user:password" (the user may not contain ":" or spaces)');
  }
  return value;
}

/** The ACL id ZooKeeper gives a digest identity: `user:base64(sha1(user:password))`. */
export function digestId(credential: string): string {
  const user = credential.slice(0, credential.indexOf(':'));
  return `${user}:${createHash('sha1').update(credential).digest('base64')}`;
}

/** Who this client is to ZooKeeper's ACLs: its digest credential, and the names its SASL identity may have. */
export interface ClientIdentity {
  readonly digest?: string | undefined;
  /** The SASL identity's possible names (the server's own settings decide which; see CheckedSasl.names). */
  readonly saslNames?: readonly string[] | undefined;
}

/**
 * All rights for this client's identities, read for everyone: what lock paths get when `digest` or
 * `sasl` is set; undefined (open) with neither. With SASL, the entry is ZooKeeper's `auth` scheme,
 * which the server replaces with every identity the session authenticated as (`sasl:<name>` as the
 * server names it, whatever its kerberos.removeHostFromPrincipal/removeRealmFromPrincipal, and
 * `digest:<user>:<hash>` with `digest`), so that the ACL names exactly who created the node.
 */
export function ownerAcl(identity: ClientIdentity): ZkAcl[] | undefined {
  const everyoneReads = { scheme: 'world', id: 'anyone', perms: ZK_PERMS.READ };
  if (identity.saslNames) return [{ scheme: 'auth', id: '', perms: ZK_PERMS.ALL }, everyoneReads];
  if (identity.digest) return [{ scheme: 'digest', id: digestId(identity.digest), perms: ZK_PERMS.ALL }, everyoneReads];
  return undefined;
}

/** The entries of an ACL that let someone other than this client create or delete children. */
export function strangersWhoMayWrite(acl: readonly ZkAcl[], owner: ClientIdentity): ZkAcl[] {
  const digest = owner.digest && digestId(owner.digest);
  const ours = (entry: ZkAcl): boolean =>
    (entry.scheme === 'digest' && entry.id === digest) || (entry.scheme === 'sasl' && (owner.saslNames ?? []).includes(entry.id));
  return acl.filter((entry) => (entry.perms & (ZK_PERMS.CREATE | ZK_PERMS.DELETE)) !== 0 && !ours(entry));
}
