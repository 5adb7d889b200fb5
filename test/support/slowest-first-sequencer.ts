/**
 * Vitest's file order, with the files that take longest started first. With two workers the run
 * ends when the busier one does: a long file started last keeps one worker busy while the other has
 * nothing left. Vitest sorts by the durations it cached from earlier runs, which a fresh clone has
 * not: this list (from a measured run, longest first) stands in for them; files not in it follow,
 * in Vitest's own order. A stale list only costs time, never a result.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const SLOWEST = [
  // The first TLS file makes the run's keys (shared-tls-materials.ts); the other worker starts on
  // work of its own meanwhile, not on a second TLS file that would wait for them.
  'test/integration/tls-hostname.test.ts',
  'test/unit/api-report.test.ts',
  'test/integration/sasl-tls.test.ts',
  'test/integration/tls.test.ts',
  'test/integration/security.test.ts',
  'test/integration/native-memory.test.ts',
  'test/e2e/scheduled-ticks.e2e.test.ts',
  'test/integration/connection-faults.test.ts',
  'test/integration/ensemble.test.ts',
  'test/integration/reconfig.test.ts',
  'test/integration/testing-kit-servers.test.ts',
  'test/unit/public-docs.test.ts',
  'test/integration/election-processes.test.ts',
  'test/integration/restore.test.ts',
  'test/integration/fair-lock.test.ts',
  'test/unit/registry-bound.test.ts',
  'test/e2e/leader-schedule.e2e.test.ts',
  'test/e2e/sample-app.e2e.test.ts',
  'test/peers/peers-layouts.test.ts',
  'test/integration/native-addon.test.ts',
];

export default class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification): number => {
      const index = SLOWEST.findIndex((path) => file.moduleId.endsWith(path));
      return index < 0 ? SLOWEST.length : index;
    };
    return sorted.map((file, order) => ({ file, order })).sort((a, b) => rank(a.file) - rank(b.file) || a.order - b.order).map(({ file }) => file);
  }
}
