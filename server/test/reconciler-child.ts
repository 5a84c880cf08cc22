// A reconciler alone in its own process (for replicas-parts.test.ts): leads when it can, prints "leader" once.
import { openDatabase } from '../src/db/client';
import { createReconciler } from '../src/modules/machines/reconciler';
import { createEvents } from '../src/modules/machines/events';
import { fakeProvider } from './machines-fixtures';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const database = await openDatabase({ databaseUrl: process.env.DATABASE_URL });
const r = createReconciler({ database, clock: { now: () => new Date() }, log: quiet, provider: fakeProvider(1), events: createEvents(), settle: async () => undefined });
let said = false;
setInterval(() => {
  void r.runOnce().then(() => {
    if (r.isLeader() && !said) {
      said = true;
      console.log('leader');
    }
  });
}, 300);
