/** The server's rules the in-memory tree applies: who may do what (ACLs), and which paths are valid. */
import type { ZkAcl } from '../../zookeeper/zk-acl.js';
import { ZK_CODES, zkError } from '../../zookeeper/zk-errors.js';

/** Who sends a request: a session id and the identities it authenticated as (`scheme:id`). */
export interface Caller {
  readonly sessionId: string;
  readonly identities: readonly { scheme: string; id: string }[];
  /** The kit's own views of the tree: no ACL applies. */
  readonly superuser?: boolean;
}

/** Whether an ACL entry matching the caller grants any of the bits in `perm`. */
export function allows(caller: Caller, acl: readonly ZkAcl[], perm: number): boolean {
  if (caller.superuser) return true;
  return acl.some(
    (entry) =>
      (entry.perms & perm) !== 0 &&
      ((entry.scheme === 'world' && entry.id === 'anyone') ||
        (entry.scheme === 'ip' && entry.id === '127.0.0.1') ||
        caller.identities.some((identity) => identity.scheme === entry.scheme && identity.id === entry.id)),
  );
}

/** As the server does: `auth` entries become the caller's identities; an ACL nobody matches is refused. */
export function fixAcl(caller: Caller, acl: readonly ZkAcl[], op: string, path: string): ZkAcl[] {
  const fixed: ZkAcl[] = [];
  for (const entry of acl) {
    if (entry.scheme === 'auth') {
      if (caller.identities.length === 0) throw zkError(ZK_CODES.INVALIDACL, op, path);
      for (const identity of caller.identities) fixed.push({ scheme: identity.scheme, id: identity.id, perms: entry.perms });
    } else if (['world', 'digest', 'ip'].includes(entry.scheme)) {
      fixed.push({ scheme: entry.scheme, id: entry.id, perms: entry.perms });
    } else {
      throw zkError(ZK_CODES.INVALIDACL, op, path);
    }
  }
  if (fixed.length === 0) throw zkError(ZK_CODES.INVALIDACL, op, path);
  return fixed;
}

/** ZooKeeper's path rules (PathUtils.validatePath): the server refuses others with BADARGUMENTS. */
export function validatePath(path: string, op: string, sequential: boolean): void {
  const bad =
    typeof path !== 'string' ||
    !path.startsWith('/') ||
    (path.length > 1 && path.endsWith('/') && !sequential) ||
    path.includes('//') ||
    path.includes('\u0000') ||
    path.split('/').some((segment) => segment === '.' || segment === '..') ||
    /[\u0001-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]/.test(path);
  if (bad) throw zkError(ZK_CODES.BADARGUMENTS, op, typeof path === 'string' ? path : String(path));
}
