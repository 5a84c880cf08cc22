import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness';

describe('server basics', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => s.close());

  it('answers health and readiness', async () => {
    expect((await s.call('GET', '/healthz')).status).toBe(200);
    expect((await s.call('GET', '/readyz')).body).toEqual({ ok: true });
  });

  it('publishes the JWKS and the OpenAPI document', async () => {
    const jwks = await s.call('GET', '/.well-known/jwks.json');
    expect(jwks.body.keys[0]).toMatchObject({ kty: 'EC', alg: 'ES256' });
    expect(jwks.body.keys[0].d).toBeUndefined();
    const api = await s.call('GET', '/v1/openapi.json');
    expect(api.body.openapi).toMatch(/^3\./);
  });

  it('answers unknown paths with the error shape', async () => {
    const res = await s.call('GET', '/v1/nope');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ statusCode: 404, error: 'Not Found', reqId: expect.any(String) });
  });

  it('sends security headers on every kind of answer', async () => {
    for (const path of ['/healthz', '/v1/nope', '/v1/user/wallet/balance', '/']) {
      const res = await s.call('GET', path);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('content-security-policy'), path).toContain("default-src 'self'");
      expect(res.headers.get('content-security-policy'), path).toContain("frame-ancestors 'none'");
      expect(res.headers.get('strict-transport-security'), path).toMatch(/max-age=\d+/);
      expect(res.headers.get('x-powered-by'), path).toBeNull();
    }
  });
});
