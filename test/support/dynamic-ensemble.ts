/**
 * Ensembles that change while the tests run: dynamic reconfiguration enabled (ZooKeeper 3.5+), each
 * member's client address in its server line (so that `/zookeeper/config` names it), observers, and
 * spare members started later and added with `reconfig`. Reconfiguration is asked for through the
 * binding's zoo_areconfig; the servers skip ACL checks (`skipACL`) so that any session may ask.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ZkLockError } from '../../lib/errors.js';
import { eventually } from '../../lib/testing/zk-session-tools.js';
import { makeDataDir } from '../../lib/testing/zk-process.js';
import { JavaZkServer, type ZkTestServerOptions } from '../../lib/testing/zk-test-server.js';
import { loadNativeModule, type NativeClient } from '../../lib/zookeeper/native-client.js';
import { freePorts } from './zk-server.js';

export type MemberRole = 'participant' | 'observer';

/** A member of a dynamic ensemble, started or not. */
export interface DynamicMember {
  readonly id: number;
  readonly role: MemberRole;
  /** Its line in the config: `server.N=127.0.0.1:q:e:role;127.0.0.1:clientPort`. */
  readonly line: string;
  readonly server: JavaZkServer;
}

export interface DynamicEnsemble {
  readonly members: DynamicMember[];
  member(id: number): DynamicMember;
  /** `127.0.0.1:port` of these members, comma-separated. */
  connectStringOf(ids: readonly number[]): string;
  /** Starts a spare member with the current config plus its own line: it syncs, but votes only once added. */
  startSpare(id: number): Promise<void>;
  /** Asks the ensemble (through a running member in `via`) to add and remove members; resolves with the new config. */
  reconfig(change: { add?: number[]; remove?: number[] }, via: readonly number[]): Promise<string>;
  /** `/zookeeper/config` as a running member in `via` reads it. */
  config(via: readonly number[]): Promise<string>;
  stop(): Promise<void>;
}

export interface DynamicEnsembleOptions extends Omit<ZkTestServerOptions, 'port' | 'dataDir'> {
  /** The roles of the members started at once (ids 1, 2, ...). */
  roles: MemberRole[];
  /** Members made ready (ports, data directory) but not started, for startSpare. @default 0 */
  spares?: number;
  /** The role spares are added with. @default 'participant' */
  spareRole?: MemberRole;
}

export async function startDynamicEnsemble(options: DynamicEnsembleOptions): Promise<DynamicEnsemble> {
  const { roles, spares = 0, spareRole = 'participant', ...serverOptions } = options;
  const count = roles.length + spares;
  const ports = await freePorts(count * 3);
  const members: DynamicMember[] = [];
  const makers = new Map<number, (peers: string[]) => JavaZkServer>();
  for (let i = 0; i < count; i++) {
    const id = i + 1;
    const role = roles[i] ?? spareRole;
    const [client, quorum, election] = [ports[i * 3]!, ports[i * 3 + 1]!, ports[i * 3 + 2]!];
    const line = `server.${id}=127.0.0.1:${quorum}:${election}:${role};127.0.0.1:${client}`;
    const dataDir = makeDataDir(serverOptions.dataDirParent);
    writeFileSync(join(dataDir, 'myid'), `${id}\n`);
    const initial = roles.map((r, j) => `server.${j + 1}=127.0.0.1:${ports[j * 3 + 1]}:${ports[j * 3 + 2]}:${r};127.0.0.1:${ports[j * 3]}`);
    const extraConfig = [
      ...(serverOptions.extraConfig ?? []),
      'reconfigEnabled=true',
      'standaloneEnabled=false',
      'skipACL=yes',
      ...(role === 'observer' ? ['peerType=observer'] : []),
    ];
    // A spare's server is made when it starts (startSpare), with the config of that moment.
    // Several JVMs start at once on a shared machine: a minute each.
    const make = (peers: string[]): JavaZkServer => new JavaZkServer(id, client, dataDir, peers, { startTimeoutMs: 60_000, ...serverOptions, extraConfig });
    makers.set(id, make);
    members.push({ id, role, line, server: make(initial) });
  }
  const running = members.slice(0, roles.length);
  const stopAll = async (): Promise<void> => {
    await Promise.all(members.map((m) => m.server.stop()));
  };
  try {
    await Promise.all(running.map((m) => m.server.start()));
  } catch (error) {
    await stopAll();
    throw error;
  }
  const member = (id: number): DynamicMember => {
    const found = members.find((m) => m.id === id);
    if (!found) throw new ZkLockError(`no member ${id}`);
    return found;
  };
  const connectStringOf = (ids: readonly number[]): string => ids.map((id) => member(id).server.connectString).join(',');
  const config = (via: readonly number[]): Promise<string> =>
    withHandle(connectStringOf(via), (client, done) => client.native.aw_getconfig(() => undefined, (rc, _m, _s, data) => done(rc, data?.toString() ?? '')));
  return {
    members,
    member,
    connectStringOf,
    config,
    async startSpare(id) {
      const spare = member(id);
      const via = members.filter((m) => m.server.running).map((m) => m.id);
      const current = (await config(via)).split('\n').filter((l) => l.startsWith('server.'));
      const started = { ...spare, server: makers.get(id)!([...current, spare.line]) };
      members[members.indexOf(spare)] = started;
      await started.server.start();
    },
    async reconfig({ add = [], remove = [] }, via) {
      const joining = add.length > 0 ? add.map((id) => member(id).line).join(',') : null;
      const leaving = remove.length > 0 ? remove.join(',') : null;
      const applied = (text: string): boolean =>
        add.every((id) => text.includes(`server.${id}=`)) && remove.every((id) => !text.includes(`server.${id}=`));
      // A reconfiguration that moves the leader drops its clients' connections, and the answer with
      // them: the config then tells whether it was applied.
      for (let attempt = 1; ; attempt++) {
        try {
          return await withHandle(connectStringOf(via), (client, done) =>
            (client.native as unknown as Reconfigurable).a_reconfig(joining, leaving, null, -1, (rc, _m, _s, data) => done(rc, data?.toString() ?? '')),
          );
        } catch (error) {
          const now = await eventually(() => config(via), { what: 'the config after a reconfig' });
          if (applied(now)) return now;
          if (attempt === 5) throw error;
        }
      }
    },
    stop: stopAll,
  };
}

interface Reconfigurable {
  a_reconfig(joining: string | null, leaving: string | null, members: string | null, version: number, cb: (rc: number, msg: string, stat: unknown, data: Buffer | null) => void): number;
}

/** Opens a session to `connectString`, sends one request, closes the session. */
async function withHandle(connectString: string, send: (client: NativeClient, done: (rc: number, value: string) => void) => number): Promise<string> {
  const Native = loadNativeModule();
  const config = { connect: connectString, timeout: 4000, debug_level: 0, host_order_deterministic: false };
  const client = new Native(config);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new ZkLockError(`could not reach ${connectString}`)), 15_000);
      client.once('connect', () => {
        clearTimeout(timer);
        resolve();
      });
      client.native.init(config);
    });
    return await new Promise<string>((resolve, reject) => {
      const sent = send(client, (rc, value) => (rc === 0 ? resolve(value) : reject(new ZkLockError(`ZooKeeper answered ${rc}`))));
      if (sent !== 0) reject(new ZkLockError(`the request was refused (${sent})`));
    });
  } finally {
    client.close();
  }
}

/** Waits until `member` serves in one of these modes (`srvr`). */
export async function waitForMode(member: DynamicMember, modes: RegExp): Promise<void> {
  await eventually(async () => modes.test(await member.server.fourLetter('srvr')), { timeoutMs: 30_000, what: `member ${member.id} to serve as ${modes}` });
}
