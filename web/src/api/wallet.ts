import { queryOptions } from '@tanstack/react-query';
import { BalanceAnswer, CheckoutAnswer, OrderStatusAnswer, type BalanceEntry } from '@hyperdesk/contract';
import { request } from './http';

export const balanceKey = ['wallet', 'balance'] as const;

/** The signed-in user's machines (spec §7 GET /user/wallet/balance). */
export const balanceQuery = () =>
  queryOptions({
    queryKey: balanceKey,
    queryFn: async (): Promise<BalanceEntry[]> => (await request('GET', '/v1/user/wallet/balance', { schema: BalanceAnswer })).balance,
  });

/** Individual checkout: the server prices the pack itself; answers the hosted checkout URL. */
export function rechargeWallet(packId: string): Promise<{ url: string }> {
  const origin = window.location.origin;
  return request('POST', '/v1/user/wallet/recharge', {
    body: { packId, success_url: `${origin}/success`, cancel_url: `${origin}/failed` },
    schema: CheckoutAnswer,
  });
}

export const orderStatusQuery = (orderId: string) =>
  queryOptions({
    queryKey: ['order', orderId],
    queryFn: () => request('POST', '/v1/user/order/status', { body: { orderId }, schema: OrderStatusAnswer }),
    retry: false,
    refetchOnWindowFocus: false,
  });
