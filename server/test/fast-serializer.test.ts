import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BalanceAnswer, INSTRUCTOR_STATIC_CONFIG } from '@hyperdesk/contract';
import { fastSerializer } from '../src/http/fast-serializer';

/** The balance answer written by the compiled serializer reads back exactly as the zod serializer writes it. */
const config = { platform: 'Unreal Engine', cpu: 'Intel Xeon', cores: 4, ram: '16 GB', gpu: 'NVIDIA T4', gpu_ram: '16 GB' };
const base = {
  platform: 'Unreal Engine',
  packId: '9f0c6c0e-4a57-4f57-9d52-3b8c0f6c1e21',
  machineName: 'UE-UK',
  timeLeft: 12.5,
  totalHours: 25,
  vms: 1,
  instanceStatus: 'processing',
  url: '/v1/slot/connect?packId=9f0c6c0e-4a57-4f57-9d52-3b8c0f6c1e21',
  startDate: null,
  endDate: null,
  region: 'UK',
  stopReason: null,
  processingSince: '2031-01-01T10:00:00.000Z',
};
const answer = {
  balance: [
    { role: 'SINGLE', ...base, machineConfig: config },
    {
      role: 'INSTRUCTOR',
      ...base,
      vms: 2,
      instanceStatus: 'offline',
      processingSince: null,
      stopReason: 'Stopped: no hours left',
      startDate: '2031-01-01T09:00:00.000Z',
      endDate: '2031-02-01T09:00:00.000Z',
      machineConfig: { ...INSTRUCTOR_STATIC_CONFIG },
      seats: [
        { machineId: '7b0c3e2a-0000-4000-8000-000000000001', machineName: 'Seat 1', instanceStatus: 'online', student: 'a@example.com' },
        { machineId: '7b0c3e2a-0000-4000-8000-000000000002', machineName: 'Seat "2"', instanceStatus: 'offline', student: null },
      ],
      rosterSize: 30,
    },
    { role: 'STUDENT', ...base, instanceStatus: 'online', processingSince: null, startDate: '2031-01-01T09:00:00.000Z', endDate: '2031-02-01T09:00:00.000Z', machineConfig: config },
  ],
};

describe('fast serializer', () => {
  const write = fastSerializer({ schema: BalanceAnswer });

  it('writes the balance answer as the zod serializer does', () => {
    const zodWritten = JSON.stringify(z.encode(BalanceAnswer, answer as z.input<typeof BalanceAnswer>));
    expect(JSON.parse(write(answer))).toEqual(JSON.parse(zodWritten));
    expect(JSON.parse(write({ balance: [] }))).toEqual({ balance: [] });
  });

  it('never writes a field the schema does not name', () => {
    const leaky = { balance: [{ ...answer.balance[0], ownerPasswordHash: 'x', machineConfig: { ...config, providerRef: 'y' } }], debug: 1 };
    const out = write(leaky);
    expect(out).not.toContain('ownerPasswordHash');
    expect(out).not.toContain('providerRef');
    expect(out).not.toContain('debug');
  });
});
