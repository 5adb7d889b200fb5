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

/** All rights for the digest identity, read for everyone: what lock paths get when `digest` is set. */
export function ownerAcl(credential: string): ZkAcl[] {
  return [
    { scheme: 'digest', id: digestId(credential), perms: ZK_PERMS.ALL },
    { scheme: 'world', id: 'anyone', perms: ZK_PERMS.READ },
  ];
}

/** The entries of an ACL that let someone other than `owner` create or delete children. */
export function strangersWhoMayWrite(acl: readonly ZkAcl[], owner: string | undefined): ZkAcl[] {
  return acl.filter((entry) => (entry.perms & (ZK_PERMS.CREATE | ZK_PERMS.DELETE)) !== 0 && !(entry.scheme === 'digest' && entry.id === owner));
}
