import { InvalidOptionsError } from '../errors.js';
import { validateLayout } from '../queue/layouts.js';
import type { CandidacyOptions } from '../recipes/candidacy.options.js';
import { validateZkPath } from '../zookeeper/paths.js';

/** Options of @Leader and @OnLeadership: where the group's election lives (as for `new Candidacy`). */
export type LeaderOptions = Pick<CandidacyOptions, 'layout' | 'zkPath'>;

/** Options of @Leader. */
export interface LeaderMethodOptions extends LeaderOptions {
  /**
   * With `@Cron` or `@Interval`: the leader also claims each tick (as `@DistributedLock` does), so
   * that a handover between two ticks, with clocks apart, never runs one tick twice. It costs a
   * ZooKeeper write per run.
   * @default false (each call on the leader runs)
   */
  oncePerTick?: boolean;
}

/** What @Leader and @OnLeadership store on a method. */
export interface LeaderSpec {
  readonly group: string;
  readonly options: LeaderMethodOptions;
  /** `Class.method`, for messages. */
  readonly method: string;
}

const OPTION_NAMES: ReadonlySet<string> = new Set<keyof LeaderOptions>(['layout', 'zkPath']);
const METHOD_OPTION_NAMES: ReadonlySet<string> = new Set<keyof LeaderMethodOptions>(['layout', 'zkPath', 'oncePerTick']);

/** Checks a decorator's group and options when the class is declared. */
export function validateLeaderOptions(decorator: '@Leader' | '@OnLeadership', group: unknown, options: LeaderMethodOptions): void {
  if (typeof group !== 'string' || group.length === 0) {
    throw new InvalidOptionsError(`${decorator} group`, 'must be a non-empty string: the name of the election');
  }
  if (options === null || typeof options !== 'object') throw new InvalidOptionsError(`${decorator} options`, 'must be an object');
  const names = decorator === '@Leader' ? METHOD_OPTION_NAMES : OPTION_NAMES;
  const unknown = Object.keys(options).filter((key) => !names.has(key));
  if (unknown.length > 0) {
    throw new InvalidOptionsError(`${decorator} options`, `${unknown.join(', ')} is not an option; the options are ${[...names].join(', ')}`);
  }
  if (options.oncePerTick !== undefined && typeof options.oncePerTick !== 'boolean') {
    throw new InvalidOptionsError(`${decorator} oncePerTick`, `must be true or false, got ${String(options.oncePerTick)}`);
  }
  validateLayout(options.layout, `${decorator} layout`);
  if (options.zkPath !== undefined) validateZkPath(options.zkPath);
}
