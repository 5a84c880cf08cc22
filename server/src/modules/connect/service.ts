import type { Job } from '../../lib/jobs';
import type { ConnectDeps } from './deps';
import { createGateway, type Gateway } from './gateway';
import { createIdleJob, idleReasonText } from './idle';
import { ALIVE_INTERVAL_MS, closeLostSessions } from './sessions';

export interface ConnectService {
  deps: ConnectDeps;
  gateway: Gateway;
  /** Idle protection (and the sweep of spent tickets); main.ts runs it with the other jobs. */
  idleJob: Job;
  /** Keeps this server's open sessions counted (alive_at) and closes the rows of servers that died. */
  aliveJob: Job;
}

export function createConnect(deps: Omit<ConnectDeps, 'idleReason'>): ConnectService {
  const full: ConnectDeps = { ...deps, idleReason: idleReasonText(deps.idleStopMinutes) };
  const gateway = createGateway(full);
  const aliveJob: Job = {
    name: 'connect-alive',
    intervalMs: ALIVE_INTERVAL_MS,
    async runOnce() {
      await gateway.touch();
      const lost = await closeLostSessions(full.db, full.clock.now());
      if (lost) full.log.warn({ lost }, 'closed desktop sessions of a server that stopped answering');
    },
  };
  return { deps: full, gateway, idleJob: createIdleJob(full, gateway), aliveJob };
}
