import type { Endpoint } from './types';

const RFB_GREETING = /^RFB 003\.00\d\n$/;

/**
 * True when a VNC server answers at the endpoint: it greets with its protocol version ("RFB 003.008\n"), the
 * first step of every RFB handshake. Closes right after, so the probe never becomes a session.
 */
export function rfbAnswers(ep: Endpoint, timeoutMs = 1500): Promise<boolean> {
  return new Promise((resolve) => {
    let got = '';
    let done = false;
    const finish = (ok: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const socket = ep.open();
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('error', () => finish(false));
    socket.on('close', () => finish(false));
    socket.on('data', (chunk: Buffer) => {
      got += chunk.toString('latin1');
      if (got.length >= 12) finish(RFB_GREETING.test(got.slice(0, 12)));
    });
  });
}
