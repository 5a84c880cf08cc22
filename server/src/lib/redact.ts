/**
 * Request logging without secrets: gateway tickets (`/v1/slot/connect/ws?ticket=…`) and reset tokens
 * (`?token=…`) are credentials, so their query values never reach a log line.
 */
const SECRET_PARAMS = /([?&](?:ticket|token)=)[^&#]*/gi;

export function redactUrl(url: string): string {
  return url.replace(SECRET_PARAMS, '$1[redacted]');
}

interface LoggedRequest {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/** pino serializers for Fastify's request logs: Fastify's default request fields with the URL redacted. */
export const logSerializers = {
  req(req: LoggedRequest) {
    return { method: req.method, url: redactUrl(req.url), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort };
  },
};
