import { useMutation, useQueryClient } from '@tanstack/react-query';
import { startSlot, stopSlot } from '../api/machines';
import { balanceKey } from '../api/wallet';

/**
 * Start and stop of one machine (the dashboard's row, the Connect tab's stopped screen). The buttons stay disabled
 * until the call and the balance refresh after it are done; a failure just re-enables them (spec §8).
 */
export function useSlotAction(packId: string) {
  const qc = useQueryClient();
  const settle = () => qc.invalidateQueries({ queryKey: balanceKey });
  const start = useMutation({ mutationFn: () => startSlot(packId), onSettled: settle });
  const stop = useMutation({ mutationFn: () => stopSlot(packId), onSettled: settle });
  return {
    busy: start.isPending || stop.isPending,
    /** Why the last start could not begin (a FAILED answer), until the next action. */
    failure: start.data?.status === 'FAILED' ? (start.data.reason ?? null) : null,
    /** `onStarted` runs once the machine is starting or running (not on a FAILED answer). */
    start: (onStarted?: () => void) =>
      start.mutate(undefined, {
        onSuccess: (answer) => {
          if (answer.status !== 'FAILED') onStarted?.();
        },
      }),
    stop: () => stop.mutate(),
  };
}
