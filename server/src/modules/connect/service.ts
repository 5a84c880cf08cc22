import type { Job } from '../../lib/jobs';
import type { ConnectDeps } from './deps';
import { createGateway, type Gateway } from './gateway';
import { createIdleJob, idleReasonText } from './idle';

export interface ConnectService {
  deps: ConnectDeps;
  gateway: Gateway;
  /** Idle protection (and the sweep of spent tickets); main.ts runs it with the other jobs. */
  idleJob: Job;
}

export function createConnect(deps: Omit<ConnectDeps, 'idleReason'>): ConnectService {
  const full: ConnectDeps = { ...deps, idleReason: idleReasonText(deps.idleStopMinutes) };
  const gateway = createGateway(full);
  return { deps: full, gateway, idleJob: createIdleJob(full, gateway) };
}
