import { defineConfig } from 'vitest/config';

/**
 * Tests that never open the database: the machine provider on LXD, pure logic. `npm test` runs them once,
 * in the PGlite stage; its PostgreSQL stage (DB_TESTS_ONLY=1) runs only the tests a database can change.
 */
const DATABASE_FREE = [
  'test/lxd-provider.test.ts',
  'test/lxd-cluster.test.ts', // PGlite only for its machines' rows: nothing in it depends on the database
  'test/lxd-desktop.test.ts',
  'test/lxd-incus.test.ts',
  // Their subject is the desktop path on LXD (each prepares its own deployment, minutes on a busy host); the tickets
  // and sessions they pass through are tested on both databases by the connect-* API tests.
  'test/connect-files.test.ts',
  'test/connect-desktop.test.ts',
  'test/connect-turn.test.ts',
  'test/apt-wait.test.ts',
  'test/build-web.test.ts',
  'test/datadir-lock.test.ts',
  'test/lxd-daemon.test.ts',
  'test/lxd-host-setup.test.ts',
  'test/lxd-link.test.ts',
  'test/fast-serializer.test.ts',
  'test/agent-*.test.ts', // the streaming agent's Python, in Debian's python3
  'src/config.test.ts',
  'src/lib/**/*.test.ts',
  'src/modules/courses/pricing.test.ts',
  'src/modules/courses/roster.test.ts',
  'src/modules/identity/identity.test.ts',
  'src/modules/machines/providers/**/*.test.ts',
];

/**
 * Files that run real desktops (an LXD deployment each): each in a process of its own, as before. Sharing a worker's
 * process with the files before it, lxd-provider's tenant shell once answered nothing and its desktop's VNC timed out
 * in CI (not reproduced alone or in pairs); their imports are a small part of their minutes.
 */
const DESKTOP_FILES = [
  'test/lxd-*.test.ts',
  'test/admin-cli.test.ts',
  'test/connect-desktop.test.ts',
  'test/connect-files.test.ts',
  'test/courses.lxd.test.ts',
  'test/machines.test.ts',
];
const exclude = ['**/node_modules/**', ...(process.env.DB_TESTS_ONLY === '1' ? DATABASE_FREE : [])];

export default defineConfig({
  test: {
    pool: 'forks',
    // Two files at a time: each has its own database, ports and LXD project (deployments never see each other's
    // desktops), and most of a file's time is spent waiting on servers, PostgreSQL and LXD, not on this CPU.
    maxWorkers: 2,
    testTimeout: 180_000, // a test that starts its own server waits minutes for it on a busy host (CI beside LXD desktops)
    hookTimeout: 180_000, // a server on PGlite starts in seconds, but in minutes on a host loaded many times over
    projects: [
      { extends: true, test: { name: 'desktops', include: DESKTOP_FILES, exclude, isolate: true } },
      // The rest run one after another in each worker's process and share its imports (the app's modules, Fastify,
      // Drizzle): loading them anew for every file took a third of the PostgreSQL stage. Nothing here mocks modules
      // or changes process.env; each file still opens its own database and ports.
      { extends: true, test: { name: 'api', include: ['src/**/*.test.ts', 'test/**/*.test.ts'], exclude: [...exclude, ...DESKTOP_FILES], isolate: false } },
    ],
  },
});
