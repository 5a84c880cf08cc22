import type { SsoErrorCode } from '@hyperdesk/contract';

/** A sign-in through a provider that ends without a session: `code` goes to the browser, `reason` to the log. */
export class SsoError extends Error {
  constructor(
    readonly code: SsoErrorCode,
    readonly reason: string,
  ) {
    super(reason);
  }
}
