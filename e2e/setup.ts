import { afterAll, beforeEach } from 'vitest';
import { closeAllServers, serversTail } from './harness';

// A failed test (a timeout too) shows what its servers logged: the failure alone says where the test waited, not why.
beforeEach(({ onTestFailed }) => {
  onTestFailed(() => console.log(serversTail()));
});
// After each test file: any server it started and did not close (see closeAllServers).
afterAll(closeAllServers, 300_000);
