import { afterAll } from 'vitest';
import { closeAllServers } from './harness';

// After each test file: any server it started and did not close (see closeAllServers).
afterAll(closeAllServers, 300_000);
