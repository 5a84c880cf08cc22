import type { FastifyBaseLogger } from 'fastify';
import type { Db, Queryable } from '../../db/client';
import type { Clock } from '../../lib/clock';
import type { Endpoint } from '../machines/providers/types';
import type { TurnConfig } from './turn';

/** What Connect uses of the other services (interfaces.md), and nothing more (house rule 1). */
export interface ConnectDeps {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  idleStopMinutes: number;
  /** The stop reason idle protection writes (the dashboard shows it). */
  idleReason: string;
  machines: {
    endpointOf(machineId: string): Promise<Endpoint | null>;
    /** The machine's streaming agent socket, when one runs. */
    agentOf(machineId: string): Promise<Endpoint | null>;
    requestStop(q: Queryable, machineIds: string[], reason?: string, by?: 'idle'): Promise<void>;
  };
  /** TURN relays and their secret (TURN_URLS, TURN_SECRET); without it, host candidates only. */
  turn?: TurnConfig;
  ledger: { remainingMinutes(q: Queryable, machineId: string, at: Date): Promise<number> };
  events?: {
    subscribe(userId: string, fn: (event: { type: string }) => void): () => void;
    publish(userIds: string[], event: { type: 'balance' }): void;
  };
}
