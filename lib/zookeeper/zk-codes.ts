/**
 * Every result code a ZooKeeper 3.5 to 3.9 server (`KeeperException.Code`) or its C client
 * (`ZOO_ERRORS` in zookeeper.h) can give, by name, with what it means and what a user of this
 * library should do when one ends a lock operation. No code -126 exists in either; -12, -100 and
 * -117 are never the answer to a request, but are named so that nothing prints as unknown.
 * zk-errors.ts turns these into errors; this file holds only the table.
 */
import { AUTHENTICATION_ADVICE } from '../errors.js';

export const ZK_CODES = {
  OK: 0,
  SYSTEMERROR: -1,
  RUNTIMEINCONSISTENCY: -2,
  DATAINCONSISTENCY: -3,
  CONNECTIONLOSS: -4,
  MARSHALLINGERROR: -5,
  UNIMPLEMENTED: -6,
  OPERATIONTIMEOUT: -7,
  BADARGUMENTS: -8,
  INVALIDSTATE: -9,
  UNKNOWNSESSION: -12,
  NEWCONFIGNOQUORUM: -13,
  RECONFIGINPROGRESS: -14,
  SSLCONNECTIONERROR: -15,
  APIERROR: -100,
  NONODE: -101,
  NOAUTH: -102,
  BADVERSION: -103,
  NOCHILDRENFOREPHEMERALS: -108,
  NODEEXISTS: -110,
  NOTEMPTY: -111,
  SESSIONEXPIRED: -112,
  INVALIDCALLBACK: -113,
  INVALIDACL: -114,
  AUTHFAILED: -115,
  CLOSING: -116,
  NOTHING: -117,
  SESSIONMOVED: -118,
  NOTREADONLY: -119,
  EPHEMERALONLOCALSESSION: -120,
  NOWATCHER: -121,
  REQUESTTIMEOUT: -122,
  RECONFIGDISABLED: -123,
  SESSIONCLOSEDREQUIRESASLAUTH: -124,
  QUOTAEXCEEDED: -125,
  THROTTLEDOP: -127,
} as const;

export type ZkCodeName = keyof typeof ZK_CODES;

const NAMES = new Map<number, ZkCodeName>(Object.entries(ZK_CODES).map(([name, code]) => [code, name as ZkCodeName]));

/** ZooKeeper's name of a result code, or undefined for a code no 3.5 to 3.9 server or client has. */
export function codeName(code: number): ZkCodeName | undefined {
  return NAMES.get(code);
}

/** `NAME (code)`, or what an unknown code is, for a message. */
export function describeCode(code: number): string {
  const name = NAMES.get(code);
  return name === undefined ? `code ${code}, which ZooKeeper 3.5 to 3.9 do not have` : `${name} (${code})`;
}

const REPORT = 'report it (with the servers\' logs) if it repeats';
const NEVER_SENT = `this library never sends the request that gets it: ${REPORT}`;
const AUTH = `give ${AUTHENTICATION_ADVICE}`;

/**
 * What a user of a lock should do when a lock operation ends with this code (what LockOperationError
 * says after ZooKeeper's own words). The codes the recipes handle themselves (a node that exists or
 * is gone, a lost connection retried) reach users only in a race with another client.
 */
export const ADVICE: Readonly<Record<Exclude<ZkCodeName, 'OK'>, string>> = {
  SYSTEMERROR: 'the ZooKeeper C client met a system error (out of memory, out of file descriptors): check the limits of this process, then retry',
  RUNTIMEINCONSISTENCY: `the server found an inconsistency in its own state: ${REPORT}`,
  DATAINCONSISTENCY: `the server found an inconsistency in its data: ${REPORT}`,
  CONNECTIONLOSS: 'the connection dropped before the answer came: retry once the connection is back',
  MARSHALLINGERROR: 'a request or its reply could not be encoded (out of memory, or a reply over the client\'s buffer): retry, and check the memory of this process',
  UNIMPLEMENTED: 'the server does not know this request: nestjs-zk-lock needs ZooKeeper 3.5 or later (container nodes, multi), so upgrade the servers',
  OPERATIONTIMEOUT: 'the client gave up waiting for the answer: retry once the connection is back',
  BADARGUMENTS: `the C client refused the request's arguments: ${REPORT}`,
  INVALIDSTATE: 'the client\'s handle is closed (its session expired, or authentication failed): a new session is opened; retry',
  UNKNOWNSESSION: `the server does not know the session: ${REPORT}`,
  NEWCONFIGNOQUORUM: NEVER_SENT,
  RECONFIGINPROGRESS: NEVER_SENT,
  SSLCONNECTIONERROR: 'the TLS connection failed: check the `tls` option and the servers\' secureClientPort, then retry',
  APIERROR: `a code that only marks a range: ${REPORT}`,
  NONODE: 'a node the operation needed was deleted by another client meanwhile: retry, and make sure nothing else deletes nodes under rootPath',
  NOAUTH: 'the ACL of the lock\'s path does not let this client in; connect with the digest identity that owns rootPath (the digest option), or use another rootPath',
  BADVERSION: 'another client changed the node meanwhile: retry, and make sure nothing else writes nodes under rootPath',
  NOCHILDRENFOREPHEMERALS: 'the lock\'s parent is an ephemeral node, which can have no children: use another resource name or rootPath',
  NODEEXISTS: 'another client created the node meanwhile: retry, and make sure nothing else creates nodes under rootPath',
  NOTEMPTY: 'another client added a child meanwhile: retry',
  SESSIONEXPIRED: 'the session expired: a new one is opened; retry',
  INVALIDCALLBACK: `the binding gave the C client no callback: ${REPORT}`,
  INVALIDACL: 'the servers refused the ACL of the created node: fix the `acl` option (each entry { scheme, id, perms }, with an id the scheme accepts)',
  AUTHFAILED: `authentication failed, and the client will not use the session again: ${AUTH}`,
  CLOSING: 'the connection is closing (the application is shutting down)',
  NOTHING: `the C client had nothing to process: ${REPORT}`,
  SESSIONMOVED: 'the session moved to another server while the request was under way: a new session is opened; retry',
  NOTREADONLY:
    'the server is read-only (it lost its quorum) and refused a write: the ensemble needs a majority of its servers back before locks can be taken',
  EPHEMERALONLOCALSESSION:
    'the servers run local sessions (localSessionsEnabled=true), which cannot own the ephemeral nodes a lock is: set localSessionsUpgradingEnabled=true on the servers (or localSessionsEnabled=false)',
  NOWATCHER: NEVER_SENT,
  REQUESTTIMEOUT: 'the request timed out: retry once the connection is back',
  RECONFIGDISABLED: NEVER_SENT,
  SESSIONCLOSEDREQUIRESASLAUTH: `the servers close every session that has not authenticated: ${AUTH}`,
  QUOTAEXCEEDED:
    'a quota set on rootPath or above it (setquota, enforced with enforceQuota=true) is full: raise it (setquota -n for nodes, -b for bytes), remove stale nodes, or use a rootPath without a quota',
  THROTTLEDOP: 'the servers are overloaded and dropped the request without applying it: retry later, with back-off',
};
