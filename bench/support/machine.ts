/** What the run ran on, for the report: CPU, cores, memory, Node, Java, ZooKeeper. */
import { spawnSync } from 'node:child_process';
import { cpus, totalmem, loadavg } from 'node:os';

export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
  node: string;
  java: string;
  zookeeper: string;
  zookeeperClient: string;
  curator: string;
  /** 1-minute load average when the run started: another job on the machine shows here. */
  loadAtStart: number;
}

function run(command: string): string {
  const result = spawnSync('bash', ['-c', command], { encoding: 'utf8' });
  return `${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
}

export function describeMachine(zookeeperVersion: string, curatorVersion: string, zookeeperClient: string): MachineInfo {
  const model = run("lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1") || cpus()[0]?.model || 'unknown';
  return {
    cpu: model,
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: run('uname -sr'),
    node: process.version,
    java: run('java -version 2>&1 | head -n 1'),
    zookeeper: zookeeperVersion,
    zookeeperClient,
    curator: curatorVersion,
    loadAtStart: Math.round(loadavg()[0]! * 100) / 100,
  };
}
