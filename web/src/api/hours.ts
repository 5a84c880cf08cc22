import { queryOptions } from '@tanstack/react-query';
import { HoursNoticesAnswer, type HoursNotice } from '@hyperdesk/contract';
import { request } from './http';

/** Per machine or course the user controls: when its hours run out at this pace and its active alert (issue 22.4). */
export const hoursNoticesQuery = () =>
  queryOptions({
    queryKey: ['hours', 'notices'] as const,
    queryFn: async (): Promise<HoursNotice[]> => (await request('GET', '/v1/user/hours/notices', { schema: HoursNoticesAnswer })).notices,
    refetchInterval: 60_000,
  });
