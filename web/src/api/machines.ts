import { MachineResetAnswer, SlotAnswer } from '@hyperdesk/contract';
import { request } from './http';

/** Starts a single user's machine: WAIT while it comes up, RUNNING when online, FAILED with a reason. */
export function startSlot(packId: string): Promise<SlotAnswer> {
  return request('POST', '/v1/user/slot', { body: { packId }, schema: SlotAnswer });
}

/** Stops it (STOPPED); the home folder is kept for the next start. */
export function stopSlot(packId: string): Promise<SlotAnswer> {
  return request('POST', '/v1/user/slot', { body: { packId, terminate: true }, schema: SlotAnswer });
}

/** Reset machine: the desktop goes back to the image (a running one restarts fresh); the home stays unless eraseHome. */
export function resetSlot(packId: string, eraseHome: boolean): Promise<MachineResetAnswer> {
  return request('POST', '/v1/user/slot/reset', { body: { packId, eraseHome }, schema: MachineResetAnswer });
}
