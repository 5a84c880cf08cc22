import { useEffect, useRef } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { BalanceEntry } from '@hyperdesk/contract';
import { subscribeEvents } from '../../api/events';
import { balanceKey, balanceQuery } from '../../api/wallet';

/** Spec §4/§9: while a machine is processing, re-fetch every 30 s and once more 180 s after the start. */
export const PROCESSING_POLL_MS = 30_000;
export const EXTRA_REFRESH_MS = 180_000;

const isProcessing = (entries: BalanceEntry[] | undefined) => Boolean(entries?.some((e) => e.instanceStatus === 'processing'));

/**
 * The dashboard's machine list, kept current by the server's push stream (`event: balance`), with the spec's
 * polling as the fallback: every 30 s while any machine is processing, an extra refresh 3 minutes after a start,
 * and a refresh when the window regains focus.
 */
export function useBalance() {
  const qc = useQueryClient();
  const query = useQuery({
    ...balanceQuery(),
    refetchOnWindowFocus: 'always',
    refetchInterval: (q) => (isProcessing(q.state.data) ? PROCESSING_POLL_MS : false),
  });

  const processingKey = (query.data ?? [])
    .filter((e) => e.instanceStatus === 'processing')
    .map((e) => e.packId)
    .sort()
    .join(',');
  useEffect(() => {
    if (!processingKey) return;
    const t = setTimeout(() => void qc.invalidateQueries({ queryKey: balanceKey }), EXTRA_REFRESH_MS);
    return () => clearTimeout(t);
  }, [processingKey, qc]);

  const opened = useRef(0);
  useEffect(() => {
    const refresh = () => void qc.invalidateQueries({ queryKey: balanceKey });
    return subscribeEvents(
      (e) => {
        if (e.type === 'balance') refresh();
      },
      () => {
        // A reconnect may have missed changes; the first connection follows the initial fetch.
        if (opened.current++ > 0) refresh();
      },
    );
  }, [qc]);

  return query;
}
