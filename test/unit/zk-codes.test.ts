/**
 * Every result code a ZooKeeper 3.5 to 3.9 server or the C client can give has a name and maps to
 * the public error that says what to do. Pure logic: the codes are fed to the mapping directly.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, LockOperationError, ZkSaslError, ZkConnectionError } from '../../lib/index.js';
import { ADVICE, codeName, ZK_CODES, type ZkCodeName } from '../../lib/zookeeper/zk-codes.js';
import {
  endOfSession,
  startupError,
  toLockError,
  ZkConnectionLossError,
  ZkError,
  zkError,
  ZkNoAuthError,
  ZkSessionAuthError,
  ZkSessionLostError,
} from '../../lib/zookeeper/zk-errors.js';

/** KeeperException.Code of ZooKeeper 3.9 (3.5 has all but QUOTAEXCEEDED and THROTTLEDOP, added in 3.7). */
const JAVA_CODES: Record<string, number> = {
  OK: 0, SYSTEMERROR: -1, RUNTIMEINCONSISTENCY: -2, DATAINCONSISTENCY: -3, CONNECTIONLOSS: -4, MARSHALLINGERROR: -5,
  UNIMPLEMENTED: -6, OPERATIONTIMEOUT: -7, BADARGUMENTS: -8, UNKNOWNSESSION: -12, NEWCONFIGNOQUORUM: -13,
  RECONFIGINPROGRESS: -14, APIERROR: -100, NONODE: -101, NOAUTH: -102, BADVERSION: -103, NOCHILDRENFOREPHEMERALS: -108,
  NODEEXISTS: -110, NOTEMPTY: -111, SESSIONEXPIRED: -112, INVALIDCALLBACK: -113, INVALIDACL: -114, AUTHFAILED: -115,
  SESSIONMOVED: -118, NOTREADONLY: -119, EPHEMERALONLOCALSESSION: -120, NOWATCHER: -121, REQUESTTIMEOUT: -122,
  RECONFIGDISABLED: -123, SESSIONCLOSEDREQUIRESASLAUTH: -124, QUOTAEXCEEDED: -125, THROTTLEDOP: -127,
};

/** The C client's ZOO_ERRORS, read from the zookeeper.h the addon is built from. */
function cClientCodes(): Record<string, number> {
  const tarball = fileURLToPath(new URL('../../native/zookeeper-client-c.tar.gz', import.meta.url));
  const header = execFileSync('tar', ['xzf', tarball, '-O', 'zookeeper-client-c/include/zookeeper.h'], { encoding: 'utf8' });
  const body = header.slice(header.indexOf('enum ZOO_ERRORS'), header.indexOf('} ZOO_ERRORS;') + 1 || undefined);
  const codes = Object.fromEntries([...body.matchAll(/\bZ([A-Z]+)\s*=\s*(-?\d+)/g)].map((m) => [m[1]!, Number(m[2])]));
  return codes;
}

const lockError = (code: number): unknown => toLockError(zkError(code, 'create', '/locks/orders'), 'orders');

describe('ZooKeeper result codes', () => {
  it('every code of the C client and of KeeperException.Code has its name and number here', () => {
    const c = cClientCodes();
    expect(Object.keys(c).length).toBeGreaterThan(30); // the header was read
    const table: Record<string, number> = { ...ZK_CODES };
    for (const [name, code] of [...Object.entries(c), ...Object.entries(JAVA_CODES)]) expect([name, table[name]]).toEqual([name, code]);
    expect(Object.keys(table).sort()).toEqual([...new Set([...Object.keys(c), ...Object.keys(JAVA_CODES)])].sort());
  });

  it('-124 from a lock operation names itself and says to give the credentials the servers require', () => {
    const error = lockError(-124);
    expect(error).toBeInstanceOf(LockOperationError);
    expect(error).toMatchObject({ code: 'SESSIONCLOSEDREQUIRESASLAUTH' });
    expect((error as Error).message).toMatch(/create \/locks\/orders failed: SESSIONCLOSEDREQUIRESASLAUTH \(-124\): the servers close every session that has not authenticated: give the credentials .*`sasl`.*`digest`/);
  });

  it('no code a server or the client has prints as unknown, and each says what to do', () => {
    for (const [name, code] of Object.entries(ZK_CODES) as [ZkCodeName, number][]) {
      if (name === 'OK') continue;
      const error = lockError(code) as Error;
      expect(error.message, name).not.toMatch(/UNKNOWN \(|do not have/);
      expect(error.message, name).toContain(`${name} (${code})`);
      if (!(error.cause instanceof ZkSessionLostError)) expect(error.message, name).toContain(ADVICE[name]);
    }
  });

  it('each code becomes the error its callers act on', () => {
    const internal = (code: number) => zkError(code, 'create', '/locks/x').constructor.name;
    expect(internal(ZK_CODES.SESSIONCLOSEDREQUIRESASLAUTH)).toBe('ZkSessionAuthError');
    expect(internal(ZK_CODES.AUTHFAILED)).toBe('ZkSessionAuthError');
    expect(zkError(ZK_CODES.AUTHFAILED, 'create', '/x')).toBeInstanceOf(ZkNoAuthError); // an election gives up on it, as on an ACL
    expect(internal(ZK_CODES.NOAUTH)).toBe('ZkNoAuthError');
    expect(zkError(ZK_CODES.SSLCONNECTIONERROR, 'create', '/x')).toBeInstanceOf(ZkConnectionLossError); // retried once reconnected
    for (const code of [ZK_CODES.SESSIONEXPIRED, ZK_CODES.SESSIONMOVED, ZK_CODES.CLOSING, ZK_CODES.INVALIDSTATE]) {
      expect(zkError(code, 'create', '/x')).toBeInstanceOf(ZkSessionLostError);
    }
    for (const code of [ZK_CODES.THROTTLEDOP, ZK_CODES.QUOTAEXCEEDED, ZK_CODES.EPHEMERALONLOCALSESSION, ZK_CODES.NOTREADONLY]) {
      expect(internal(code)).toBe('ZkError');
      expect(lockError(code)).toMatchObject({ code: codeName(code) });
    }
    const acl = lockError(ZK_CODES.INVALIDACL);
    expect(acl).toBeInstanceOf(InvalidOptionsError);
    expect(acl).toMatchObject({ option: 'acl' });
  });

  it('what to do, for the codes a production ensemble sends', () => {
    expect((lockError(-125) as Error).message).toMatch(/QUOTAEXCEEDED \(-125\): a quota set on rootPath.*setquota/);
    expect((lockError(-127) as Error).message).toMatch(/THROTTLEDOP \(-127\): the servers are overloaded.*without applying it: retry later/);
    expect((lockError(-120) as Error).message).toMatch(/localSessionsUpgradingEnabled=true/);
    expect((lockError(-119) as Error).message).toMatch(/read-only.*majority/);
    expect((lockError(-102) as Error).message).toMatch(/NOAUTH \(-102\): the ACL of the lock's path does not let this client in/);
  });

  it('a code no 3.5 to 3.9 server has is shown by number, with where to look it up', () => {
    const error = lockError(-126) as LockOperationError;
    expect(error.message).toMatch(/code -126, which ZooKeeper 3\.5 to 3\.9 do not have: see KeeperException\.Code/);
    expect(error.code).toBe('-126');
  });

  it('a refusal for want of authentication ends the session, saying why; other refusals do not', () => {
    const refusal = zkError(-124, 'create', '/x');
    expect(endOfSession(refusal)).toEqual({
      detail: 'the servers closed the session because it had not authenticated (SESSIONCLOSEDREQUIRESASLAUTH (-124))',
      end: 'session-ended',
      refusal,
    });
    // A request failed by that session's end is told what the refusal says.
    const lost = new ZkSessionLostError('session', '0x1', 'the servers closed the session', 'session-ended', refusal as ZkSessionAuthError);
    expect(toLockError(lost, 'orders')).toMatchObject({ code: 'SESSIONCLOSEDREQUIRESASLAUTH' });
    expect(startupError(lost, 'h:1', '/locks')).toBeInstanceOf(ZkSaslError);
    expect(toLockError(new ZkSessionLostError('session', '0x1'), 'orders')).toMatchObject({ code: 'SESSIONEXPIRED' });
    expect(endOfSession(zkError(-115, 'create', '/x'))?.detail).toMatch(/authentication failed \(AUTHFAILED/);
    expect(endOfSession(zkError(-112, 'create', '/x'))?.end).toBe('session-expired');
    for (const code of [-102, -125, -127, -4]) expect(endOfSession(zkError(code, 'create', '/x'))).toBeUndefined();
  });

  it('at start-up, a server that requires authentication fails it with a ZkSaslError (a ZkConnectionError), as connect\'s probe does', () => {
    const required = startupError(zkError(-124, 'create', '/locks'), '127.0.0.1:2181', '/locks');
    expect(required).toBeInstanceOf(ZkSaslError);
    expect(required).toBeInstanceOf(ZkConnectionError);
    expect(required).toMatchObject({ failure: 'required', connectionString: '127.0.0.1:2181' });
    expect((required as Error).message).toMatch(/^Could not connect to ZooKeeper at "127\.0\.0\.1:2181": SASL authentication failed \(required: .*Set the sasl option/);
    expect(startupError(zkError(-115, 'getAcl', '/locks'), 'h:1', '/locks')).toMatchObject({ failure: 'rejected' });
    expect(startupError(zkError(-125, 'create', '/locks'), 'h:1', '/locks')).toBeInstanceOf(LockOperationError);
    expect(new ZkSessionAuthError(-124, 'create', '/x')).toBeInstanceOf(ZkError);
  });
});
