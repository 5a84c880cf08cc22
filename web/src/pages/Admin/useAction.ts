import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { adminKey } from '../../api/admin';
import { balanceKey } from '../../api/wallet';

/**
 * Runs one console action at a time: reports what it did or why it failed, then refreshes every console list
 * (the audit log included) and the operator's own balance.
 */
export function useAdminAction() {
  const queryClient = useQueryClient();
  const [message, setMessage] = useState<string | null>(null);
  const mutation = useMutation({
    mutationFn: async (a: { run: () => Promise<unknown>; done: string }) => {
      await a.run();
      return a.done;
    },
    onMutate: () => setMessage(null),
    onSuccess: (done) => setMessage(done),
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: adminKey });
      void queryClient.invalidateQueries({ queryKey: balanceKey });
    },
  });
  return {
    run: (run: () => Promise<unknown>, done: string) => mutation.mutate({ run, done }),
    pending: mutation.isPending,
    message,
    error: mutation.isError ? mutation.error.message : null,
  };
}
