import { queryOptions } from '@tanstack/react-query';
import { PacksAnswer, type CountryId, type PlatformName } from '@hyperdesk/contract';
import { request } from './http';

/** Every pack for sale (spec §7 POST /packs), grouped by region by the callers that need it. */
export const packsQuery = () =>
  queryOptions({
    queryKey: ['packs'],
    queryFn: () => request('POST', '/v1/packs', { body: {}, schema: PacksAnswer }),
  });

/**
 * The packs of one country and platform. A 404 answers 'Packages are not available for the selected location.',
 * which the runtime step shows as it is.
 */
export const packsForLocationQuery = (region: CountryId, platform: PlatformName) =>
  queryOptions({
    queryKey: ['packs', 'location', region, platform],
    queryFn: async () => {
      const qs = new URLSearchParams({ region, platform });
      const { packs } = await request('GET', `/v1/packs/location?${qs}`, { schema: PacksAnswer });
      return [...packs].sort((a, b) => a.hours - b.hours);
    },
    retry: false,
  });
