import { z } from 'zod';
import { CountryId, PlatformName } from './common';

/** A pack of hours for sale (spec §3). `price` is in the country's currency, major units (e.g. 49.99). */
export const Pack = z.object({
  packId: z.string(),
  region: CountryId,
  hours: z.number().int().positive(),
  price: z.number().nonnegative(),
  platform: PlatformName,
});
export type Pack = z.infer<typeof Pack>;

export const PacksBody = z.object({ idtoken: z.string().max(4096).optional() }).passthrough();
export const PacksAnswer = z.object({ packs: z.array(Pack) });

/** The packages-for-location call: GET /v1/packs/location?region=UK&platform=Unreal%20Engine */
export const PacksForLocationQuery = z.object({ region: CountryId, platform: PlatformName });
export const NO_PACKAGES_MESSAGE = 'Packages are not available for the selected location.';
