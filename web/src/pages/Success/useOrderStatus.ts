import { useQuery, useQueryClient } from '@tanstack/react-query';
import { orderStatusQuery } from '../../api/wallet';

const POLL_MS = 2_000;
const MAX_POLLS = 15;

/**
 * The order's status; while the provider's confirmation has not arrived yet ('pending') it is asked again every
 * 2 s, up to 15 times (the webhook normally lands before the browser is back). `loading` is true until a final
 * answer, the last poll or a failure (spec §8: a failed status call only stops the spinners).
 */
export function useOrderStatus(orderId: string | null) {
  const options = orderStatusQuery(orderId ?? '');
  const q = useQuery({
    ...options,
    enabled: Boolean(orderId),
    refetchInterval: (query) => (stillPending(query.state.data?.status, query.state.dataUpdateCount) ? POLL_MS : false),
  });
  const polls = useQueryClient().getQueryState(options.queryKey)?.dataUpdateCount ?? 0;
  const loading = Boolean(orderId) && !q.isError && (q.isPending || stillPending(q.data?.status, polls));
  return { data: q.data, loading };
}

function stillPending(status: string | undefined, polls: number): boolean {
  return status === 'pending' && polls < MAX_POLLS;
}
