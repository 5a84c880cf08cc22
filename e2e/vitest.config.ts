import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The longest files, longest first (seconds on a 2-core CI host, 2026-11-28), most of it waiting on the clock: a class
 * two minutes ahead, an idle minute. Started first, they run beside the rest instead of after it: on a clean clone
 * vitest has no durations yet and starts the largest files first, which left connect-idle alone for the last 80 s.
 */
const LONGEST_FIRST = [
  'timetable', // 273
  'classroom-roster', // 137
  'connect-idle', // 100
  'classroom', // 76
  'auth', // 67
  'hours-alert', // 62
  'stream-idle', // 62
  'wall', // 55
  'totp', // 54
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.indexOf(f.moduleId.replace(/^.*\/tests\//, '').replace(/\.test\.ts$/, ''));
      return i < 0 ? LONGEST_FIRST.length : i;
    };
    const rest = await super.sort(files);
    return [...rest].sort((a, b) => rank(a) - rank(b)); // stable: the rest keep vitest's order
  }
}

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    setupFiles: ['./setup.ts'],
    globalSetup: ['./global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
    testTimeout: 120_000,
    hookTimeout: 300_000, // a server start waits for host-setup (and an image rebuild after the recipe changed) on a busy host
  },
});
