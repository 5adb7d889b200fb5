import { readdirSync, readlinkSync } from 'node:fs';

/** The socket inodes a process has open (from /proc; Linux only). `pid` may be 'self'. */
export function socketsOf(pid: string): Set<string> {
  const sockets = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith('socket:')) sockets.add(target);
    } catch {
      // closed meanwhile
    }
  }
  return sockets;
}
